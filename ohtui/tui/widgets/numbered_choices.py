"""NumberedChoices: a dialog's choices as numbered lines ("1. Approve"), for screen-reader
mode: a number key picks one, and so do Tab (to move) and Enter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widget import Widget


@dataclass(frozen=True)
class Choice:
    """One choice: its words, and the action the dialog runs for it (e.g. "approve_all")."""

    label: str
    action: str


class ChoiceLine(Widget):
    """One numbered choice; "> " marks it when focused (no colour needed)."""

    can_focus = True
    DEFAULT_CSS = """
    ChoiceLine {
        height: auto;
        &:focus { text-style: bold; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "choose", "Choose", show=False),
    ]

    def __init__(self, number: int, choice: Choice) -> None:
        super().__init__(classes="choice")
        self.number = number
        self.choice = choice

    def render(self) -> Content:
        mark = "> " if self.has_focus else "  "
        return Content(f"{mark}{self.number}. {self.choice.label}")

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def action_choose(self) -> None:
        """Pick this choice."""
        self.post_message(NumberedChoices.Chosen(self.choice))

    def on_click(self, event: events.Click) -> None:
        """A click picks it too."""
        event.stop()
        self.post_message(NumberedChoices.Chosen(self.choice))


class NumberedChoices(Vertical):
    """Choices numbered from 1, one a line; a number key picks one while focus is within."""

    DEFAULT_CSS = """
    NumberedChoices {
        height: auto;
    }
    """

    @dataclass
    class Chosen(Message):
        """A choice was picked (by its number, Enter or a click)."""

        choice: Choice

    def __init__(self, choices: Sequence[Choice], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._choices = tuple(choices)

    @property
    def choices(self) -> tuple[Choice, ...]:
        """The choices, in order."""
        return self._choices

    def compose(self) -> ComposeResult:
        """One line per choice."""
        yield from self._lines()

    def _lines(self) -> list[Widget]:
        return [ChoiceLine(number, choice) for number, choice in enumerate(self._choices, 1)]

    def set_choices(self, choices: Sequence[Choice]) -> None:
        """Replace the choices (the focus goes back to the first, if it was within)."""
        choices = tuple(choices)
        if choices == self._choices:
            return
        had_focus = self.has_focus_within
        self._choices = choices
        self.remove_children()
        self.mount_all(self._lines())
        if had_focus:
            self.call_after_refresh(self.focus_first)

    def focus_first(self) -> None:
        """Focus the first choice."""
        lines = list(self.query(ChoiceLine))
        if lines:
            lines[0].focus()

    def choose_number(self, key: str) -> bool:
        """Pick the choice a digit key names; False if it names none."""
        if not key.isdigit():
            return False
        index = int(key) - 1
        if not 0 <= index < len(self._choices):
            return False
        self.post_message(self.Chosen(self._choices[index]))
        return True

    def on_key(self, event: events.Key) -> None:
        """A number key picks its choice."""
        if event.character is not None and self.choose_number(event.character):
            event.stop()
            event.prevent_default()
