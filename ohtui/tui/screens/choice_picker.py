"""A small modal to pick one of a few named choices (the confirmation policy, the sandbox)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ohtui.tui.widgets.marked import MarkedOptionList


@dataclass(frozen=True)
class Choice:
    """One option: its id (what the picker returns), its label and what it means."""

    id: str
    label: str
    help: str


def choice_prompt(choice: Choice, *, current: bool) -> Content:
    """One option: a mark for the current one, its label and what it means."""
    return Content.assemble(
        ("● " if current else "  ", "$text-accent"),
        (choice.label, "bold"),
        ": ",
        (choice.help, "$foreground-muted"),
        ("  (current)" if current else "", "$text-accent"),
    )


class ChoicePickerScreen(ModalScreen[str | None]):
    """Choose one of `choices`: Enter gives its id, Esc None."""

    CSS_PATH = "choice_picker.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, heading: str, choices: Sequence[Choice], current: str) -> None:
        super().__init__()
        self._heading = heading
        self._choices = tuple(choices)
        self._current = current

    def compose(self) -> ComposeResult:
        """The heading, the choices and a key legend."""
        with Vertical(id="dialog"):
            yield Static(self._heading, id="heading")
            yield MarkedOptionList(
                *(
                    Option(choice_prompt(c, current=c.id == self._current), id=c.id)
                    for c in self._choices
                ),
                id="choices",
            )
            yield Static("↑↓ move · enter choose · esc cancel", id="legend", markup=False)

    def on_mount(self) -> None:
        """Start on the current choice."""
        ids = [c.id for c in self._choices]
        if self._current in ids:
            self.query_one(OptionList).highlighted = ids.index(self._current)

    @on(OptionList.OptionSelected, "#choices")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        """Keep the current choice."""
        self.dismiss(None)
