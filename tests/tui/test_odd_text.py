"""Text that is not valid Unicode and names that are not text, in the real app: shown, saved
and resumed, never a crash."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import USAGE, chat_ready, screen_text, status, submit
from llm_server import Reply, ScriptedLLMServer, ToolCall

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions

pytestmark = pytest.mark.anyio

FFFD = "\ufffd"


async def test_lone_surrogates_and_odd_names_are_shown_saved_and_resumed(
    app_options: AppOptions, llm_server: ScriptedLLMServer, project: Path, wait: Any
) -> None:
    folder = project / "d"
    folder.mkdir()
    with open(os.fsencode(folder) + b"/bad\xffname", "w"):
        pass
    (folder / "line\nbreak").write_text("")
    view = ToolCall("file_editor", '{"command": "view", "path": "d"}', "c1")
    llm_server.reply(Reply(text="Looking \ud800", tool_calls=(view,), usage=USAGE))
    llm_server.reply_tool_call("terminal", {"command": "ls d", "security_risk": "LOW"}, usage=USAGE)
    # A streamed answer: a lone surrogate, and 😀 cut between its two JSON halves.
    text = "Done \udfff and \ud83d\ude00."
    llm_server.reply(
        Reply(
            text=text,
            chunks=("Done \udfff and \ud83d", "\ude00."),
            reasoning="thinking \ud800",
            usage=USAGE,
        )
    )
    app = OhtuiApp(app_options)
    async with app.run_test(size=(120, 50)) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "list d")
        await wait(pilot, lambda: status(app) == "finished", what="the run")
        shown = screen_text(app)
        assert f"Done {FFFD} and 😀." in shown
        assert f"Looking {FFFD}" in shown
        assert r"bad\xffname'" in shown  # the view's listing, quoted
    conversation_id = app_options.conversation_id
    assert conversation_id is not None

    again = OhtuiApp(replace(app_options, resume_id=conversation_id, conversation_id=None))
    async with again.run_test(size=(120, 50)) as pilot:
        await wait(pilot, lambda: chat_ready(again), what="the conversation to resume")
        await wait(pilot, lambda: "Done" in screen_text(again), what="the history")
        assert f"Done {FFFD} and 😀." in screen_text(again)
