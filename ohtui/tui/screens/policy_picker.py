"""Pick the confirmation policy: always, risky or never."""

from __future__ import annotations

from ohtui.settings.choices import ConfirmationPolicy
from ohtui.tui.screens.choice_picker import Choice, ChoicePickerScreen


class PolicyPickerScreen(ChoicePickerScreen):
    """Choose a confirmation policy: Enter gives its value ("always", "risky", "never")."""

    def __init__(self, current: ConfirmationPolicy) -> None:
        choices = [Choice(policy, policy.label, policy.help) for policy in ConfirmationPolicy]
        super().__init__("Confirmation policy", choices, current)
