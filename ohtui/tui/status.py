"""RunStatus: where the open conversation stands, as the chat screen shows it.

The engine's ConversationExecutionStatus values (a member equals its value, so
`RunStatus(engine_status.value)` converts), plus the UI's own: opening, setup and read-only.
Standard library only: the status bar shows it on the first frame, before the engine loads.
"""

from __future__ import annotations

from ohtui.settings.choices import LabelledEnum


class RunStatus(LabelledEnum):
    """A run status that carries its label and the style the status bar gives it."""

    label: str
    """The words the status bar shows, e.g. "waiting for approval"."""
    style: str
    """Its Textual style in the status bar."""

    IDLE = "idle", "ready", "dim"
    RUNNING = "running", "running", "bold $text-accent"
    PAUSED = "paused", "paused", "bold $text-warning"
    WAITING_FOR_CONFIRMATION = (
        "waiting_for_confirmation",
        "waiting for approval",
        "bold $text-warning",
    )
    FINISHED = "finished", "finished", "$text-success"
    ERROR = "error", "error", "bold $text-error"
    STUCK = "stuck", "stuck", "bold $text-error"
    DELETING = "deleting", "deleting", "dim"
    OPENING = "opening", "opening…", "dim"
    """The UI's own: the conversation is being opened."""
    SETUP = "setup", "choose a model in /settings", "bold $text-warning"
    """The UI's own: no model is configured, so nothing can open."""
    READ_ONLY = "read_only", "read-only", "bold $text-warning"
    """The UI's own: another ohtui runs the conversation; it is only shown here."""

    def is_terminal(self) -> bool:
        """FINISHED, ERROR and STUCK end a run (as the engine's `is_terminal()`)."""
        return self in (RunStatus.FINISHED, RunStatus.ERROR, RunStatus.STUCK)
