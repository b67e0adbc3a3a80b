"""A yes/no question in a small dialog, e.g. before deleting something."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    """Ask before acting: `y` or the confirm button gives True; `n`, Esc or Cancel give False."""

    CSS_PATH = "confirm.tcss"
    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(
        self, question: str, detail: str = "", *, confirm_label: str = "Yes", danger: bool = False
    ) -> None:
        super().__init__(classes="-danger" if danger else "")
        self._question = question
        self._detail = detail
        self._confirm_label = confirm_label
        self._danger = danger

    def compose(self) -> ComposeResult:
        """The question, what it means, two buttons and a key legend."""
        with Vertical(id="dialog"):
            yield Static(self._question, id="question", markup=False)
            if self._detail:
                yield Static(self._detail, id="detail", markup=False)
            with Horizontal(id="buttons"):
                yield Button(
                    self._confirm_label,
                    id="confirm",
                    variant="error" if self._danger else "primary",
                    compact=True,
                )
                yield Button("Cancel", id="cancel", compact=True)
            yield Static(
                f"y {self._confirm_label.lower()} · n/esc cancel", id="legend", markup=False
            )

    def on_mount(self) -> None:
        """Start on Cancel when the action destroys something, so a stray Enter is harmless."""
        self.query_one("#cancel" if self._danger else "#confirm", Button).focus()

    @on(Button.Pressed, "#confirm")
    def _confirmed(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#cancel")
    def _cancelled(self) -> None:
        self.dismiss(False)

    def action_answer(self, yes: bool) -> None:
        """Close with the answer."""
        self.dismiss(yes)
