"""/model and /cost on a real `ohtui serve` (a subprocess, real sockets): the switch is the
server's (its next call uses the new model, and it saves it), and the cost per model comes
over the wire."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import SIZE, chat_ready, run_over, screen_text, status, submit
from llm_server import ScriptedLLMServer
from server.server_process import TEST_KEY, ServerProcess

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.cost import CostScreen

pytestmark = pytest.mark.anyio

USAGE = {
    "prompt_tokens": 1000,
    "completion_tokens": 20,
    "prompt_tokens_details": {"cached_tokens": 600},
}


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServerProcess]:
    data = tmp_path / "serve-data"
    data.mkdir()
    process = ServerProcess(data).start()
    try:
        yield process
    finally:
        process.stop()


async def turn(app: OhtuiApp, pilot: Any, wait: Any, text: str) -> None:
    await submit(pilot, text)
    await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
    await wait(pilot, lambda: run_over(app), what="the run's end", timeout=5)


async def test_model_switches_on_the_server_and_cost_comes_over_the_wire(
    app_options: AppOptions,
    llm_server: ScriptedLLMServer,
    serve: ServerProcess,
    tmp_path: Path,
    wait: Any,
) -> None:
    llm_server.reply_text("here", usage=USAGE)
    llm_server.reply_text("there", usage=USAGE)
    options = replace(
        app_options,
        server=serve.url,
        environ={"OHTUI_SERVER_API_KEY": TEST_KEY},
        conversation_id=None,
        model_memory_file=tmp_path / "data" / "models.json",
    )
    app = OhtuiApp(options)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await turn(app, pilot, wait, "hello")
        await submit(pilot, "/model openai/served-model")
        assert app.chat is not None
        await wait(
            pilot,
            lambda: app.chat is not None and app.chat.status_bar.model == "openai/served-model",
            what="the switch",
        )
        conversation_id = app.chat.session.conversation_id
        with serve.client() as client:
            shown = client.get(f"/api/conversations/{conversation_id}").json()
        assert shown["agent"]["llm"]["model"] == "openai/served-model"  # the server's own
        await turn(app, pilot, wait, "again")
        assert [r["model"] for r in llm_server.requests] == ["test-model", "served-model"]
        await submit(pilot, "/cost")
        await wait(pilot, lambda: isinstance(app.screen, CostScreen), what="the cost screen")
        await wait(
            pilot,
            lambda: "openai/served-model (now)" in screen_text(app),
            what="the served model's row",
        )
        text = screen_text(app)
        assert "openai/test-model" in text and "whole conversation" in text
        line = next(line for line in text.splitlines() if "whole conversation" in line)
        assert line.replace("│", " ").split()[2:7] == ["2", "2,000", "40", "1,200", "0"]

    # Resumed from the server: it goes on with the model it was switched to, there too.
    llm_server.reply_text("resumed", usage=USAGE)
    again = OhtuiApp(replace(options, resume_id=conversation_id))
    async with again.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(again), what="the conversation to reopen")
        assert again.chat is not None and again.chat.status_bar.model == "openai/served-model"
        await turn(again, pilot, wait, "after the resume")
    assert llm_server.requests[-1]["model"] == "served-model"
