"""Pick the confirmation policy: always, risky or never."""

from __future__ import annotations

from ohtui.tui.options import POLICY_LABELS, POLICY_ORDER
from ohtui.tui.screens.choice_picker import Choice, ChoicePickerScreen

POLICY_HELP: dict[str, str] = {
    "always": "every action waits for you",
    "risky": "actions rated MEDIUM or HIGH, or unrated, wait",
    "never": "actions run at once",
}


class PolicyPickerScreen(ChoicePickerScreen):
    """Choose a confirmation policy: Enter gives its name ("always", "risky", "never")."""

    def __init__(self, current: str) -> None:
        choices = [Choice(name, POLICY_LABELS[name], POLICY_HELP[name]) for name in POLICY_ORDER]
        super().__init__("Confirmation policy", choices, current)
