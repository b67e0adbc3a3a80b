"""Ask for one line of text in a small dialog, e.g. a new title."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class TextPromptScreen(ModalScreen[str | None]):
    """One line of text: Enter gives it (stripped), Esc gives None.

    With `empty_message`, an empty answer is refused and that message shown instead.
    """

    CSS_PATH = "text_prompt.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self,
        heading: str,
        value: str = "",
        *,
        placeholder: str = "",
        empty_message: str | None = None,
    ) -> None:
        super().__init__()
        self._heading = heading
        self._value = value
        self._placeholder = placeholder
        self._empty_message = empty_message

    def compose(self) -> ComposeResult:
        """The heading, the input, a message line and a key legend."""
        with Vertical(id="dialog"):
            yield Static(self._heading, id="heading", markup=False)
            yield Input(
                self._value, placeholder=self._placeholder, id="text", select_on_focus=False
            )
            yield Static(id="message", markup=False)
            yield Static("enter save · esc cancel", id="legend", markup=False)

    @on(Input.Submitted, "#text")
    def _submit(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text and self._empty_message is not None:
            self.query_one("#message", Static).update(self._empty_message)
            self.add_class("-message")
            return
        self.dismiss(text)

    @on(Input.Changed, "#text")
    def _typed(self) -> None:
        self.remove_class("-message")

    def action_cancel(self) -> None:
        """Close without an answer."""
        self.dismiss(None)
