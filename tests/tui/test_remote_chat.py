"""The chat screen driving a conversation on an agent server (the fake one, replaying a
recorded OpenHands turn): chat, streaming, the server in the status bar, reconnecting."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from chat_helpers import SIZE, cells, chat_ready, screen_text, send, status, user_texts
from fake_agent_server import FakeAgentServer

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.widgets.cells import AgentCell

pytestmark = pytest.mark.anyio


@pytest.fixture
def remote_options(
    app_options: AppOptions, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[AppOptions, FakeAgentServer]]:
    with FakeAgentServer() as fake:
        monkeypatch.setenv("OHTUI_SERVER_API_KEY", "fake-key")
        options = replace(
            app_options,
            server=fake.url,
            environ={"OHTUI_SERVER_API_KEY": "fake-key"},
            conversation_id=None,
        )
        yield options, fake


def bar(app: OhtuiApp) -> str:
    assert app.chat is not None
    return app.chat.status_bar.render().plain


async def test_chat_runs_on_the_server_and_shows_where(
    remote_options: tuple[AppOptions, FakeAgentServer], wait: Any
) -> None:
    options, fake = remote_options
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        assert status(app) == "idle", screen_text(app)
        assert f"⇄ 127.0.0.1:{fake.port}" in bar(app)
        assert "sandbox unknown" in bar(app)  # an OpenHands server does not say
        await send(pilot, "Say hello")
        await wait(pilot, lambda: user_texts(app) == ["Say hello"], what="the user cell")
        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
        await wait(
            pilot,
            lambda: [c.text for c in cells(app, AgentCell)] == ["Hello from the agent."],
            what="the answer",
        )
        sent = [b for m, p, b in fake.requests if p.endswith("/events")]
        assert sent[0]["content"][0]["text"] == "Say hello"


async def test_a_lost_connection_says_reconnecting_then_recovers(
    remote_options: tuple[AppOptions, FakeAgentServer], wait: Any
) -> None:
    options, fake = remote_options
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        fake.drop_sockets()
        await wait(pilot, lambda: "reconnecting…" in bar(app), timeout=5, what="reconnecting")
        await wait(pilot, lambda: "reconnecting" not in bar(app), what="the reconnection")
        assert len(fake.first_frames) == 2


async def test_streamed_text_from_a_server_is_replaced_by_the_answer(
    app_options: AppOptions, monkeypatch: pytest.MonkeyPatch, wait: Any
) -> None:
    with FakeAgentServer("streaming") as fake:
        fake.frame_delay = 0.05
        options = replace(
            app_options,
            server=fake.url,
            environ={"OHTUI_SERVER_API_KEY": "fake-key"},
            conversation_id=None,
        )
        app = OhtuiApp(options)
        async with app.run_test(size=SIZE) as pilot:
            await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
            await send(pilot, "Stream please")
            await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
            await pilot.pause(0.2)
            texts = [c.text for c in cells(app, AgentCell)]
            assert texts == ["Streamed words arrive one by one."]  # once, not twice
