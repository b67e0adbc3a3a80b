"""FindBar: the one-line bar above the composer where transcript search (Ctrl+F) is typed.

It only takes keys and shows the count: what is found, and where the view goes, is the chat
screen's transcript search (`screens.chat_find`), which its messages drive.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static

HINT = "enter next · shift+enter/↑ previous · esc close"
SHORT_HINT = "↵ next · ↑ prev · esc"
"""The hint when the bar is narrow (80 columns)."""
WIDE = 96
"""Columns from which the full hint shows."""


class FindBar(Horizontal):
    """Type to search the whole conversation; Enter / ↓ / F3 the next hit, Shift+Enter / ↑ /
    Shift+F3 the previous one, Esc closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("down,f3", "step(1)", "Next", show=False),
        Binding("shift+enter,up,shift+f3", "step(-1)", "Previous", show=False),
        Binding("escape", "close", "Close", show=False),
    ]

    class Changed(Message):
        """The term changed."""

        def __init__(self, bar: FindBar, term: str) -> None:
            super().__init__()
            self.bar = bar
            self.term = term

        @property
        def control(self) -> FindBar:
            """The bar typed in."""
            return self.bar

    class Step(Message):
        """Go to the next (1) or previous (-1) hit."""

        def __init__(self, bar: FindBar, direction: int) -> None:
            super().__init__()
            self.bar = bar
            self.direction = direction

        @property
        def control(self) -> FindBar:
            """The bar the key was pressed in."""
            return self.bar

    class Closed(Message):
        """Esc: the search is over."""

        def __init__(self, bar: FindBar) -> None:
            super().__init__()
            self.bar = bar

        @property
        def control(self) -> FindBar:
            """The bar closed."""
            return self.bar

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._count = Static("", id="find-count", markup=False)
        self._hint = Static(HINT, id="find-hint", markup=False)

    def compose(self) -> ComposeResult:
        yield Static("Find:", id="find-label", markup=False)
        yield Input(placeholder="search the conversation", id="find-input", select_on_focus=True)
        yield self._count
        yield self._hint

    @property
    def input(self) -> Input:
        """The field the term is typed in."""
        return self.query_one("#find-input", Input)

    @property
    def term(self) -> str:
        """The term typed."""
        return self.input.value

    def open(self, term: str | None = None) -> None:
        """Show the bar and focus its field (with `term` in it, if given)."""
        self.display = True
        field = self.input
        if term is not None and term != field.value:
            field.value = term
        field.focus()

    def show_count(self, text: str, missing: bool = False) -> None:
        """Show "3 of 17" (or why there is none: `missing` marks it as such)."""
        self._count.update(text)
        self._count.set_class(missing, "-missing")

    def on_resize(self) -> None:
        self._hint.update(HINT if self.size.width >= WIDE else SHORT_HINT)

    @on(Input.Changed, "#find-input")
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(self, event.value))

    @on(Input.Submitted, "#find-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Step(self, 1))

    def action_step(self, direction: int) -> None:
        """The next or previous hit."""
        self.post_message(self.Step(self, direction))

    def action_close(self) -> None:
        """Hide the bar; the search ends."""
        self.display = False
        self.post_message(self.Closed(self))
