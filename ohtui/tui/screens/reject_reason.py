"""Ask why the actions are rejected; the agent reads the answer."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

PLACEHOLDER = "Why? (optional — the agent reads this)"


class RejectReasonScreen(ModalScreen[str | None]):
    """A one-line reason for a rejection: Enter gives the text (may be ""), Escape gives None."""

    CSS_PATH = "reject_reason.tcss"
    BINDINGS = [Binding("escape", "cancel", "Back")]

    def __init__(self, heading: str = "Reject") -> None:
        super().__init__()
        self._heading = heading

    def compose(self) -> ComposeResult:
        """The heading, the input and a key legend."""
        with Vertical(id="dialog"):
            yield Static(self._heading, id="heading", markup=False)
            yield Input(placeholder=PLACEHOLDER, id="reason")
            yield Static("enter send · esc back", id="legend", markup=False)

    @on(Input.Submitted, "#reason")
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        """Go back without rejecting."""
        self.dismiss(None)
