"""Slash commands are one list whose entries carry their handlers: the composer's menu, the
command palette, /help and the dispatch all read it."""

from __future__ import annotations

from typing import Any

import pytest
from chat_helpers import SIZE, chat_ready, screen_text, send, type_text
from llm_server import ScriptedLLMServer
from textual.command import CommandPalette
from textual.widgets import OptionList, Static

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens import commands
from ohtui.tui.screens.chat import ChatScreen
from ohtui.tui.screens.commands import SLASH_COMMANDS, Command, find_command
from ohtui.tui.screens.help import HelpScreen

pytestmark = pytest.mark.anyio


def test_every_command_has_a_handler_and_a_name_of_its_own() -> None:
    names = [n for c in SLASH_COMMANDS for n in (c.name, *c.aliases)]
    assert len(names) == len(set(names))
    assert all(callable(c.run) and c.description for c in SLASH_COMMANDS)
    assert find_command("quit") is find_command("exit") is not None
    assert find_command("nope") is None
    changing = {c.name for c in SLASH_COMMANDS if c.changes_conversation}
    assert changing == {
        "confirm",
        "rules",
        "sandbox",
        "mcp",
        "ask",
        "condense",
        "title",
        "undo",
        "checkpoints",
        "rewind",
        "fork",
        "model",
        "init",
    }


async def test_a_command_added_to_the_list_is_offered_everywhere_and_runs(
    app_options: AppOptions,
    llm_server: ScriptedLLMServer,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[str] = []

    def zap(screen: ChatScreen, argument: str) -> None:
        ran.append(argument)

    extra = Command(name="zap", description="zap the thing", takes_argument=True, run=zap)
    monkeypatch.setattr(commands, "SLASH_COMMANDS", (*SLASH_COMMANDS, extra))
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        assert app.chat is not None

        await type_text(pilot, "/za")
        menu = app.chat.query_one("#completions", OptionList)
        await wait(pilot, lambda: menu.option_count == 1, what="the menu")
        assert str(menu.get_option_at_index(0).prompt) == "/zap  zap the thing"
        await type_text(pilot, "p now")
        await pilot.press("enter")
        await wait(pilot, lambda: ran == ["now"], what="the handler")

        await send(pilot, "/help")
        await wait(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        assert help_screen.commands == commands.SLASH_COMMANDS
        cells = [str(s.render()) for s in help_screen.query("#help-body Static").results(Static)]
        for command in commands.SLASH_COMMANDS:
            hint = f" {command.argument_hint}" if command.argument_hint else ""
            assert f"/{command.name}{hint}" in cells  # with what it takes: "/init [focus]"
        assert cells[cells.index("/zap") + 1] == "zap the thing"
        await pilot.press("escape")

        await pilot.press("ctrl+p")
        await wait(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
        await type_text(pilot, "/zap")
        await wait(pilot, lambda: "zap the thing" in screen_text(app), what="the hit")
        await pilot.press("enter")
        await wait(pilot, lambda: not isinstance(app.screen, CommandPalette), what="closing")
        assert app.chat.query_one("#composer").text == "/zap "  # type: ignore[attr-defined]
    assert llm_server.requests == []  # commands are not messages
