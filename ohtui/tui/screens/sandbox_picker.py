"""Pick the sandbox mode for this session: workspace-write, read-only or off."""

from __future__ import annotations

from ohtui.tui.screens.choice_picker import Choice, ChoicePickerScreen

SANDBOX_CHOICES = (
    Choice(
        "workspace-write",
        "workspace-write",
        "commands may write only the workspace and /tmp; credentials are hidden",
    ),
    Choice("read-only", "read-only", "commands may read, but write nothing"),
    Choice("off", "off", "commands run unconfined, as you could run them yourself"),
)


class SandboxPickerScreen(ChoicePickerScreen):
    """Choose the sandbox mode for this session: Enter gives its name."""

    def __init__(self, current: str) -> None:
        super().__init__("Sandbox (this session)", SANDBOX_CHOICES, current)
