"""HelpScreen: the keys and slash commands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ohtui.tui.slash import SlashCommand

KEYS = (
    ("Enter", "send the message"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("↑ / ↓", "earlier / later messages you sent"),
    ("@", "complete a file path; / complete a command"),
    ("Esc", "pause after this step; twice: stop now"),
    ("Ctrl+C", "stop now; twice: quit"),
    ("Ctrl+Q", "quit (the conversation is saved)"),
    ("Shift+Tab", "cycle the confirmation policy"),
    ("Ctrl+O", "review actions waiting for approval"),
    ("Ctrl+P", "command palette (themes too)"),
    ("PgUp/PgDn, Ctrl+Home/End", "scroll the conversation; to its top / bottom"),
    ("Tab, ↑/↓, Enter, c", "newest cell, older/newer one, expand or collapse, copy"),
)


class HelpScreen(ModalScreen[None]):
    """Keys and commands; any of Esc, Enter or q closes it."""

    CSS_PATH = "help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter,q", "dismiss", "Close"),
    ]

    def __init__(self, commands: Sequence[SlashCommand]) -> None:
        super().__init__()
        self.commands = commands

    def compose(self) -> ComposeResult:
        lines = [Content.styled("Keys", "bold $text-primary")]
        lines += [Content.assemble(Content.styled(f"  {k:<22}", "bold"), d) for k, d in KEYS]
        lines += [Content(""), Content.styled("Commands", "bold $text-primary")]
        lines += [
            Content.assemble(Content.styled(f"  /{c.name:<21}", "bold"), c.description)
            for c in self.commands
        ]
        lines += [Content(""), Content.styled("Esc to close", "dim")]
        with VerticalScroll(id="help-body"):
            yield Static(Content("\n").join(lines))
