"""Pick the confirmation policy: always, risky or never."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ohtui.tui.options import POLICY_LABELS, POLICY_ORDER

POLICY_HELP: dict[str, str] = {
    "always": "every action waits for you",
    "risky": "actions rated MEDIUM or HIGH, or unrated, wait",
    "never": "actions run at once",
}


def policy_prompt(policy: str, *, current: bool) -> Content:
    """One option: a mark for the current policy, its label and what it means."""
    return Content.assemble(
        ("● " if current else "  ", "$text-accent"),
        (POLICY_LABELS[policy], "bold"),
        ": ",
        (POLICY_HELP[policy], "$foreground-muted"),
        ("  (current)" if current else "", "$text-accent"),
    )


class PolicyPickerScreen(ModalScreen[str | None]):
    """Choose a confirmation policy: Enter gives its name ("always", "risky", "never")."""

    CSS_PATH = "policy_picker.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, current: str) -> None:
        super().__init__()
        self._current = current

    def compose(self) -> ComposeResult:
        """The heading, the three policies and a key legend."""
        with Vertical(id="dialog"):
            yield Static("Confirmation policy", id="heading")
            yield OptionList(
                *(
                    Option(policy_prompt(name, current=name == self._current), id=name)
                    for name in POLICY_ORDER
                ),
                id="policies",
            )
            yield Static("↑↓ move · enter choose · esc cancel", id="legend", markup=False)

    def on_mount(self) -> None:
        """Start on the current policy."""
        if self._current in POLICY_ORDER:
            self.query_one(OptionList).highlighted = POLICY_ORDER.index(self._current)

    @on(OptionList.OptionSelected, "#policies")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        """Keep the current policy."""
        self.dismiss(None)
