"""Screen-reader mode in the real app (Pilot): plain lines that say their role, no box
drawing, no animation, approval choices as numbered options."""

from __future__ import annotations

import re
from typing import Any

import pytest
from chat_helpers import USAGE, cells, chat_ready, run_over, screen_text, status, submit
from llm_server import ScriptedLLMServer

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.approval import ApprovalScreen
from ohtui.tui.widgets.status_bar import StatusBar

pytestmark = pytest.mark.anyio

SIZE = (100, 30)
SHAPES = re.compile("[\u2500-\u259f\u2800-\u28ff]")
"""Box drawing, block elements, braille: what a screen reader reads as shapes."""


def script_a_turn(llm_server: ScriptedLLMServer) -> None:
    """An agent turn: a thought, a command and its output, then the answer."""
    llm_server.reply_tool_call(
        "terminal",
        {"command": "printf 'one\\ntwo\\n'", "security_risk": "LOW"},
        text="Let me look.",
        usage=USAGE,
    )
    llm_server.reply_text("It printed **two** lines:\n\n- one\n- two", usage=USAGE)


async def test_a_turn_reads_as_plain_lines_that_say_their_role(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.screen_reader = True
    script_a_turn(llm_server)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation")
        await submit(pilot, "What does it print?")
        await wait(pilot, lambda: status(app) == "finished", what="the run")
        await wait(pilot, lambda: run_over(app), what="the run's end", timeout=5)
        await pilot.pause()
        text = screen_text(app)
        print(text)
        assert False


async def test_approval_dialog_tmp(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.screen_reader = True
    app_options.policy = "always"
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "rm -rf ~/some/dir"}),
            (
                "file_editor",
                {
                    "command": "str_replace",
                    "path": "src/app.py",
                    "old_str": "import os\nprint('old')\n",
                    "new_str": "import os\nprint('new')\n",
                    "security_risk": "MEDIUM",
                },
            ),
        ],
        text="I will clean up and fix the print.",
        usage=USAGE,
    )
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation")
        await submit(pilot, "Clean up")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        await pilot.pause()
        print(screen_text(app))
        await pilot.press("tab")
        await pilot.pause()
        print(screen_text(app))
        print(app.focused)
        assert False
