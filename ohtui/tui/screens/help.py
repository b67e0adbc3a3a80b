"""HelpScreen: the keys and slash commands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ohtui.tui.screen_reader import reading_aloud, speakable
from ohtui.tui.slash import SlashCommand

KEYS = (
    ("Enter", "send the message"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("↑ / ↓", "earlier / later messages you sent"),
    ("@", "complete a file path; / complete a command"),
    ("@pic.png, a path, Ctrl+V", "attach an image: a file, or the clipboard's"),
    ("Esc", "pause after this step; twice: stop now"),
    ("Esc Esc", "agent idle, composer empty: rewind"),
    ("Ctrl+C", "stop now; twice: quit"),
    ("Ctrl+Q", "quit (the conversation is saved)"),
    ("Shift+Tab", "cycle the confirmation policy"),
    ("Ctrl+O", "review actions waiting for approval"),
    ("Ctrl+P", "command palette (themes too)"),
    ("PgUp/PgDn, Ctrl+Home/End", "scroll the conversation; to its top / bottom"),
    ("Tab, ↑/↓, Enter, c, Esc", "newest cell, older/newer, expand, copy, back to typing"),
)


class HelpScreen(ModalScreen[None]):
    """Keys and commands; any of Esc, Enter or q closes it."""

    CSS_PATH = "help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter,q", "dismiss", "Close"),
    ]

    def __init__(
        self, commands: Sequence[SlashCommand], custom: Sequence[SlashCommand] = ()
    ) -> None:
        """`custom`: the commands read from `.ohtui/commands/` and the user's folder."""
        super().__init__()
        self.commands = commands
        self.custom = custom

    def compose(self) -> ComposeResult:
        """Two columns: a key or command, and what it does (wrapped under itself)."""
        with VerticalScroll(id="help-body"), Grid(id="help-grid"):
            yield Static("Keys", classes="heading")
            spoken = reading_aloud(self)
            for key, what in KEYS:
                yield Static(speakable(key) if spoken else key, classes="key", markup=False)
                yield Static(what, markup=False)
            yield Static("Commands", classes="heading")
            for command in self.commands:
                yield from _command_row(command)
            if self.custom:
                yield Static("Custom commands", classes="heading")
            for command in self.custom:
                yield from _command_row(command)
            yield Static("Esc to close", classes="heading legend")


def _command_row(command: SlashCommand) -> ComposeResult:
    """A command's name (with what to type after it) and what it does."""
    hint = f" {command.argument_hint}" if command.argument_hint else ""
    yield Static(f"/{command.name}{hint}", classes="key", markup=False)
    yield Static(command.description, markup=False)
