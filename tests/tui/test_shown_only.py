"""No text the TUI shows drives the terminal: what the model says, what a command prints,
errors, dialogs and notifications reach the terminal without the controls they carry."""

from __future__ import annotations

import re
from typing import Any

import pytest
from chat_helpers import USAGE, chat_ready, screen_text, status, submit
from llm_server import ScriptedLLMServer
from rich.segment import Segment
from rich.style import Style
from textual._compositor import LayoutUpdate
from textual.color import Color

from ohtui.settings.choices import ConfirmationPolicy
from ohtui.terminal_text import is_shown
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.approval import ApprovalScreen
from ohtui.tui.shown_only import ShownOnly

pytestmark = pytest.mark.anyio

ESC = "\x1b"
ATTACK = (
    f"A{ESC}]0;pwned\x07B{ESC}]52;c;cm0gLXJmIH4K\x07C{ESC}[2JD{ESC}[31mred{ESC}[0m"
    f"E\x9b2JF\x9d0;x\x9cG\u202eHI\u2066J\u2069K\rL\bM\x7fN"
)
OWN = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\d+;\d+H|\x1b\]8;[^\x1b]*\x1b\\")
"""Textual's own sequences: styles, cursor moves and links."""
FOREIGN = (f"{ESC}]0;", f"{ESC}]52", f"{ESC}[2J", f"{ESC}[31mred", "\x9b", "\x9d", "\u202e")


def painted(app: OhtuiApp) -> str:
    """What the app writes to the terminal to paint its whole screen now."""
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    assert isinstance(update, LayoutUpdate)
    return update.render_segments(app.console)


def acted_on(output: str) -> list[str]:
    """The characters of `output`, Textual's own sequences aside, a terminal would act on."""
    return sorted({c for c in OWN.sub("", output) if not is_shown(c) and c != "\n"})


def assert_harmless(output: str, visible: str = "]0;pwned") -> None:
    assert [s for s in FOREIGN if s in output] == []
    assert acted_on(output) == []
    assert visible in output  # the text itself is shown, without its controls


def test_the_filter_drops_controls_and_keeps_widths() -> None:
    style = Style(bold=True)
    segments = [Segment("plain ", style), Segment(ATTACK, style), Segment("中文 😀 é", None)]
    filtered = ShownOnly().apply(segments, Color(0, 0, 0))
    assert [s.cell_length for s in filtered] == [s.cell_length for s in segments]
    assert filtered[0] is segments[0] and filtered[2] is segments[2]
    assert filtered[1].style is style
    assert filtered[1].text == "A]0;pwnedB]52;c;cm0gLXJmIH4KC[2JD[31mred[0mE2JF0;xGHIJKLMN"
    already_safe = [segments[0], segments[2]]
    assert ShownOnly().apply(already_safe, Color(0, 0, 0)) is already_safe  # no copy made


async def test_model_text_command_output_and_errors_reach_the_terminal_harmless(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    command = r"printf 'out \033]0;pwned\007 \302\233 \342\200\256 end\n'"
    llm_server.reply_tool_call(
        "terminal",
        {"command": command, "security_risk": "LOW"},
        text=f"Thinking {ATTACK}",
        usage=USAGE,
    )
    llm_server.reply_text(f"Answer {ATTACK}", reasoning=f"Reasoning {ATTACK}", usage=USAGE)
    llm_server.reply_error(400, f"Refused {ATTACK}")
    app = OhtuiApp(app_options)
    async with app.run_test(size=(160, 60), notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "go")
        await wait(pilot, lambda: status(app) == "finished", what="the first run")
        await pilot.pause(0.2)
        output = painted(app)
        assert_harmless(output)
        assert "Answer A]0;pwnedB]52;c;" in output
        assert "out ]0;pwned" in output  # the command's own output

        assert app.chat is not None and app.chat.session.conversation is not None
        app.chat.session.conversation.set_title(f"Title {ATTACK}")  # as a generated one
        app.chat.notify(f"Notice {ATTACK}", title=f"Heading {ATTACK}")
        await wait(pilot, lambda: "Notice" in screen_text(app), what="the notification")
        output = painted(app)
        assert_harmless(output)
        text = OWN.sub("", output)
        assert "Notice" in text and "Heading" in text and text.count("]0;pwnedB]52") >= 5

        await submit(pilot, "again")
        await wait(pilot, lambda: "Refused" in screen_text(app), what="the refused call")
        assert_harmless(painted(app), visible="Refused A]0;pwned")


async def test_a_command_waiting_for_approval_is_shown_harmless(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = ConfirmationPolicy.ALWAYS
    llm_server.reply_tool_call("terminal", {"command": f"echo '{ATTACK}'"}, usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=(160, 60)) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "go")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval")
        await pilot.pause(0.2)
        assert_harmless(painted(app), visible="echo 'A]0;pwnedB]52")
