"""/resume through the real app: no frame of the chat between Enter and the picker, and the
picker made while the app was idle (ohtui/tui/app/ready_picker.py): used when it was made for
the conversation open, thrown away when not, made again once one closes, never for a server."""

from __future__ import annotations

import re
from typing import Any

import pytest
from chat_helpers import SIZE, USAGE, chat_ready, screen_text, status, submit
from llm_server import ScriptedLLMServer
from test_resume import picker_listed, save
from textual.screen import Screen

from ohtui.sdk.conversation.impl.remote_catalog import RemoteCatalog
from ohtui.tui import app as app_module
from ohtui.tui.app import OhtuiApp, navigation
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.chat import ChatScreen
from ohtui.tui.screens.picker import PickerScreen
from ohtui.tui.widgets.composer import Composer

pytestmark = pytest.mark.anyio


@pytest.fixture
def frames(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Screen[Any], str]]:
    """Every frame drawn: its screen, and what it shows of note: a picker's first frame, its
    text; the chat's, the composer's text."""
    drawn: list[tuple[Screen[Any], str]] = []
    refresh = Screen._compositor_refresh

    def noted(screen: Screen[Any]) -> None:
        refresh(screen)
        shown = ""
        if isinstance(screen, ChatScreen):
            shown = screen.query_one(Composer).text
        elif isinstance(screen, PickerScreen) and all(s is not screen for s, _ in drawn):
            shown = screen_text(screen.app)
        drawn.append((screen, shown))

    monkeypatch.setattr(Screen, "_compositor_refresh", noted)
    return drawn


@pytest.fixture
def composed(monkeypatch: pytest.MonkeyPatch) -> list[PickerScreen]:
    """Every picker composed, in order."""
    made: list[PickerScreen] = []
    compose = PickerScreen.compose

    def noted(screen: PickerScreen) -> Any:
        made.append(screen)
        return compose(screen)

    monkeypatch.setattr(PickerScreen, "compose", noted)
    return made


async def picker_made(pilot: Any, wait: Any) -> PickerScreen:
    """Make the next picker as the idle app does, and wait until it is mounted."""
    app = pilot.app
    app.get_picker_ready()
    ready = app._ready_picker._screen
    assert isinstance(ready, PickerScreen)
    await wait(pilot, lambda: ready.is_mounted, what="the picker made ahead")
    return ready


async def chat_with_a_saved_one(
    app_options: AppOptions, llm_server: ScriptedLLMServer, pilot: Any, wait: Any
) -> None:
    """The chat, one exchange in (so the open conversation is saved and listed too)."""
    app = pilot.app
    await wait(pilot, lambda: chat_ready(app), what="the chat")
    llm_server.reply_text("Hi.", usage=USAGE)
    await submit(pilot, "hello")
    await wait(pilot, lambda: status(app) == "finished", what="the reply")


async def test_slash_resume_draws_no_frame_of_the_chat_before_the_picker_s(
    app_options: AppOptions,
    llm_server: ScriptedLLMServer,
    wait: Any,
    frames: list[tuple[Screen[Any], str]],
) -> None:
    """Enter on /resume: the next frame drawn is the picker's, with its rows (the composer
    cleared, a frame of the chat's own, would only delay it); then frames go on as ever."""
    save(app_options, llm_server, ["older one"])
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await chat_with_a_saved_one(app_options, llm_server, pilot, wait)
        chat = app.chat
        assert chat is not None
        chat.query_one(Composer).text = "/resume"
        await pilot.pause()
        frames.clear()
        await pilot.press("enter")
        picker = await picker_listed(pilot, wait, 2)
        opened = next(n for n, (screen, _) in enumerate(frames) if screen is picker)
        # Before it, only frames of the chat with the command still typed (its cursor blinks).
        assert {shown for _, shown in frames[:opened]} <= {"/resume"}
        assert "older one" in frames[opened][1] and "hello" in frames[opened][1]
        assert app._batch_count == 0
        await pilot.press("escape")
        await wait(pilot, lambda: isinstance(app.screen, ChatScreen), what="the chat")
        await wait(pilot, lambda: frames[-1][0] is chat, what="a frame of the chat")


async def test_the_picker_made_while_idle_is_the_one_resume_opens_frame_for_frame(
    app_options: AppOptions,
    llm_server: ScriptedLLMServer,
    wait: Any,
    frames: list[tuple[Screen[Any], str]],
    composed: list[PickerScreen],
) -> None:
    """/resume with a picker made ahead: that one shows, composed once (while idle), and
    its opening frame is the frame a picker made at /resume shows."""
    save(app_options, llm_server, ["older one"])
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await chat_with_a_saved_one(app_options, llm_server, pilot, wait)
        app._ready_picker.discard()  # whatever the idle app made: this test makes its own
        await submit(pilot, "/resume")
        fresh = await picker_listed(pilot, wait, 2)
        await pilot.press("escape")
        await wait(pilot, lambda: isinstance(app.screen, ChatScreen), what="the chat")

        ready = await picker_made(pilot, wait)
        made = len(composed)
        await submit(pilot, "/resume")
        shown = await picker_listed(pilot, wait, 2)
        assert shown is ready is not fresh
        assert len(composed) == made  # nothing composed at /resume
        assert [row.id for row in shown.rows] == [row.id for row in fresh.rows]
        fresh_frame, ready_frame = (
            text for screen, text in frames if isinstance(screen, PickerScreen) and text
        )
        assert "older one" in ready_frame
        assert ready_frame == fresh_frame
        await pilot.press("down", "enter")  # the older one: resumed from the ready picker
        await wait(pilot, lambda: isinstance(app.screen, ChatScreen), what="the chat")
        await wait(pilot, lambda: "older one" in screen_text(app), what="the older one")


async def test_a_picker_made_for_another_conversation_is_thrown_away(
    app_options: AppOptions,
    llm_server: ScriptedLLMServer,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Made while one conversation was open, then /new: /resume makes a fresh picker, which
    marks the conversation open now, and the old one leaves the app."""
    monkeypatch.setattr(navigation, "PICKER_READY_AFTER", 600.0)  # none made meanwhile
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await chat_with_a_saved_one(app_options, llm_server, pilot, wait)
        stale = await picker_made(pilot, wait)
        assert app.current_session is not None
        first_id = app.current_session.conversation_id
        assert first_id is not None
        await submit(pilot, "/new")
        await wait(
            pilot,
            lambda: (
                app.current_session is not None
                and app.current_session.conversation_id not in (None, first_id)
            ),
            what="the new conversation",
        )
        assert app._ready_picker.ready  # not made again: its timer is far off
        new_id = app.current_session.conversation_id
        await submit(pilot, "/resume")
        shown = await picker_listed(pilot, wait, 2)  # the new one is listed, and the first
        assert shown is not stale
        assert "open now" in shown.option_list.get_option(new_id).prompt.plain
        assert "open now" not in shown.option_list.get_option(first_id).prompt.plain
        await wait(pilot, lambda: not stale.is_attached, what="the stale picker gone")


async def test_once_a_picker_closes_the_next_is_made_for_the_conversation_open(
    app_options: AppOptions,
    llm_server: ScriptedLLMServer,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """/resume, Esc: a little later the next picker is made, for this conversation, and the
    app ends cleanly with it made and never shown."""
    monkeypatch.setattr(navigation, "PICKER_READY_AFTER", 0.05)
    monkeypatch.setattr(app_module, "WARM_UP_AFTER", 600.0)  # no preload: the close makes it
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await chat_with_a_saved_one(app_options, llm_server, pilot, wait)
        app._ready_picker.discard()
        await submit(pilot, "/resume")
        shown = await picker_listed(pilot, wait, 1)
        await pilot.press("escape")
        await wait(pilot, lambda: app._ready_picker.ready, what="the next picker made")
        ready = app._ready_picker._screen
        assert ready is not None and ready is not shown
        assert not shown.is_attached
        session = app.current_session
        assert session is not None and ready._current_id == session.conversation_id
        await wait(pilot, lambda: ready.is_mounted, what="it mounted")
    assert not ready.is_running  # closed with the app, never shown


async def test_a_picker_listing_an_agent_server_is_never_made_ahead(
    app_options: AppOptions,
    llm_server: ScriptedLLMServer,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The conversations come from an agent server: none is made, and one made before the
    server came into it is thrown away (its catalogue is the open conversation's)."""
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await chat_with_a_saved_one(app_options, llm_server, pilot, wait)
        local = await picker_made(pilot, wait)
        catalog = RemoteCatalog(lambda: pytest.fail("the server is never asked"))
        monkeypatch.setattr(OhtuiApp, "_server_catalog", lambda self: catalog)
        app.get_picker_ready()
        assert not app._ready_picker.ready
        await wait(pilot, lambda: not local.is_attached, what="the local one gone")


async def test_the_idle_app_makes_the_picker_for_its_conversation(
    app_options: AppOptions, wait: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the first frame has been idle (the picker preloaded), the picker is made, for the
    conversation open once it has opened."""
    monkeypatch.setattr(app_module, "WARM_UP_AFTER", 0.05)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: app._ready_picker.ready, what="the picker made")
        session = app.current_session
        ready = app._ready_picker._screen
        assert session is not None and session.conversation_id is not None
        assert ready is not None and ready._current_id == session.conversation_id
        assert app.screen is app.chat  # made, not shown


def screenshot(app: OhtuiApp) -> str:
    """The screen as an SVG, without the id Textual gives each export."""
    return re.sub(r"terminal-\d+", "terminal", app.export_screenshot())


async def settled(pilot: Any, wait: Any, picker: PickerScreen) -> str:
    """The picker's screenshot once its preview shows the conversation's reply."""
    preview = picker.query_one("#preview")
    await wait(pilot, lambda: not preview.has_class("-loading"), what="the preview")
    await wait(pilot, lambda: "Hi." in screen_text(pilot.app), what="the reply in it")
    await pilot.pause()
    return screenshot(pilot.app)


async def test_a_picker_made_before_the_theme_changed_shows_in_the_new_theme(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """Made in one theme, then /settings chose another: Textual restyles only the screens on
    its stack, so it is not used; the picker /resume shows looks as one made in that theme
    looks, colour for colour."""
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await chat_with_a_saved_one(app_options, llm_server, pilot, wait)
        dark = app.theme
        app.theme = "textual-light"
        app._ready_picker.discard()
        await submit(pilot, "/resume")
        fresh = await settled(pilot, wait, await picker_listed(pilot, wait, 1))
        await pilot.press("escape")
        await wait(pilot, lambda: isinstance(app.screen, ChatScreen), what="the chat")

        app.theme = dark
        ready = await picker_made(pilot, wait)
        app.theme = "textual-light"
        await pilot.pause()
        await submit(pilot, "/resume")
        shown = await picker_listed(pilot, wait, 1)
        assert shown is not ready
        assert await settled(pilot, wait, shown) == fresh
        await wait(pilot, lambda: not ready.is_attached, what="the one made in the old theme")


async def test_a_picker_thrown_away_as_it_mounts_leaves_no_trace(
    app_options: AppOptions, wait: Any
) -> None:
    """Made, then thrown away in the same step (the conversation or the theme changed just
    then): it goes while its widgets mount, and the app goes on."""
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        for _ in range(3):
            app.get_picker_ready()
            made = app._ready_picker._screen
            assert made is not None
            app._ready_picker.discard()
            await wait(pilot, lambda gone=made: not gone.is_attached, what="it gone")
        await pilot.pause(0.2)
        assert app.is_running and app.screen is app.chat
        await picker_made(pilot, wait)  # and the next one is made as ever
