"""Plain data the checkpoint modals show (no engine types: the session converts)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

FileStatus = Literal["added", "modified", "deleted"]

STATUS_MARKS: dict[str, tuple[str, str]] = {
    "added": ("A", "$text-success"),
    "modified": ("M", "$text-warning"),
    "deleted": ("D", "$text-error"),
}
"""A letter (it reads without colour) and a theme colour per file status."""
RESTORE_LABEL = "the restore to before"
"""How the engine labels the checkpoint it takes before a restore."""


def before_text(label: str, before_restore: bool | None = None) -> str:
    """What a checkpoint goes back to: "before: rm -f src/*", "before the restore to before
    rm -f src/*" (`before_restore` None: told by the label)."""
    if before_restore is None:
        before_restore = label.startswith(RESTORE_LABEL)
    if before_restore:
        return f"before {label}" if label else "before a restore"
    return f"before: {label}" if label else "before an action"


@dataclass(frozen=True)
class FileChange:
    """One file a restore changes: `status` is what the restore does to it."""

    path: str
    status: FileStatus


@dataclass(frozen=True)
class CheckpointRow:
    """One checkpoint of the workspace, as the list and the preview show it."""

    checkpoint_id: str
    label: str
    """What it was taken before (an action's command, or "the restore to before …")."""
    files: int
    taken_at: str
    """ISO 8601 time it was taken."""
    before_restore: bool = False
    """Taken right before a restore: restoring it takes that restore back."""
    undo_target: bool = False
    """The checkpoint /undo would restore now."""

    @property
    def before(self) -> str:
        """E.g. "before: rm -f src/*", "before the restore to before rm -f src/*"."""
        return before_text(self.label, self.before_restore)


@dataclass(frozen=True)
class RestorePreview:
    """What restoring a checkpoint would change now: the files and their diff."""

    checkpoint: CheckpointRow
    changes: tuple[FileChange, ...]
    diff: str
    """A unified diff from the workspace now to the checkpoint."""
    undo: bool = False
    """Opened by /undo (not chosen in /checkpoints)."""


def taken_time(iso: str, now: datetime | None = None) -> str:
    """A checkpoint's local time: "14:03:27" today, "Mar 02 14:03" on another day."""
    try:
        when = datetime.fromisoformat(iso).astimezone()
    except ValueError:
        return iso[:19]
    today = (now or datetime.now().astimezone()).date()
    return when.strftime("%H:%M:%S" if when.date() == today else "%b %d %H:%M")
