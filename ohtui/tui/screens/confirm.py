"""A yes/no question in a small dialog, e.g. before deleting something."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    """Ask before acting: pressing the confirm button gives True; Esc or Cancel give False.

    No letter answers: text typed into the dialog by mistake (the rest of a search, say)
    can never confirm, so saying yes always takes a choice of button and then Enter.
    """

    CSS_PATH = "confirm.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("left", "app.focus_previous", show=False),
        Binding("right", "app.focus_next", show=False),
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
                "←→ choose a button · enter press it · esc cancel", id="legend", markup=False
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

    def action_cancel(self) -> None:
        """Close without acting."""
        self.dismiss(False)
