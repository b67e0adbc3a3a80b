"""Checkpoints of the workspace: taken before actions that may change it, restored by the user.

The files themselves live in the conversation's checkpoint store; these events record that a
checkpoint exists (or why none could be taken) and every restore, so a resumed or remote
conversation knows its checkpoints too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from ohtui.sdk.event.base import Event, LLMConvertibleEvent
from ohtui.sdk.event.types import SourceType
from ohtui.sdk.llm.message import Message, TextContent

if TYPE_CHECKING:
    from rich.text import Text


class CheckpointEvent(Event):
    """The workspace as it was right before an action (or before a restore).

    `checkpoint_id` is None when no checkpoint could be taken; `unavailable` says why, and
    actions are then not undoable.
    """

    source: SourceType = "environment"
    checkpoint_id: str | None = Field(default=None, description="The checkpoint, in its store.")
    action_id: str | None = Field(
        default=None, description="The action it was taken before (None: before a restore)."
    )
    label: str = Field(default="", description="What it was taken before, in a few words.")
    files: int = Field(default=0, description="How many files it holds.")
    unavailable: str | None = Field(
        default=None, description="Why no checkpoint could be taken (then no checkpoint_id)."
    )

    @property
    def visualize(self) -> Text:
        """A quiet one-liner."""
        from rich.text import Text

        if self.checkpoint_id is None:
            return Text(f"No checkpoint: {self.unavailable or 'unavailable'}", style="yellow")
        return Text(f"Checkpoint {self.checkpoint_id[:8]} ({self.label})", style="dim")


class FileChangeRecord(BaseModel):
    """One file a restore changed."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    path: str
    status: Literal["added", "modified", "deleted"]


class CheckpointRestoreEvent(LLMConvertibleEvent):
    """The user restored the workspace to a checkpoint; the agent is told which files changed.

    `undo_checkpoint_id` is the checkpoint of the workspace taken right before the restore:
    restoring it undoes this restore.
    """

    source: SourceType = "user"
    checkpoint_id: str = Field(description="The checkpoint the workspace was restored to.")
    label: str = Field(default="", description="What that checkpoint was taken before.")
    undo_checkpoint_id: str = Field(description="The workspace just before the restore.")
    changes: list[FileChangeRecord] = Field(default_factory=list)

    @property
    def visualize(self) -> Text:
        """What was restored and how many files changed."""
        from rich.text import Text

        text = Text(f"Restored the workspace to before {self.label or 'a checkpoint'}: ")
        text.append(f"{len(self.changes)} file{'s' if len(self.changes) != 1 else ''} changed")
        return text

    def to_llm_message(self) -> Message:
        """Tells the agent the files are no longer as it left them."""
        listed = "\n".join(f"- {c.path} ({c.status} by the restore)" for c in self.changes[:50])
        more = f"\n… and {len(self.changes) - 50} more" if len(self.changes) > 50 else ""
        before = self.label or "an earlier action"
        text = (
            f"The user restored the workspace to how it was before {before}. "
            f"Files changed by the restore:\n{listed or '(none)'}{more}\n"
            "Read files again before relying on what you saw earlier."
        )
        return Message(role="user", content=[TextContent(text=text)])


def of_kinds(events: Sequence[Event], *kinds: str) -> Sequence[Event]:
    """The events of these kinds among `events`, in order: read alone from a stored log (or
    a branch of one) that can list them by kind, else `events` itself (filter it)."""
    log = getattr(events, "log", events)  # a Branch: the log it runs through
    kind_indexes = getattr(log, "kind_indexes", None)
    events_at = getattr(log, "events_at", None)
    if kind_indexes is None or events_at is None:
        return events
    wanted: list[int] = kind_indexes(*kinds)
    if log is not events:
        on_branch = set(getattr(events, "indexes", ()))
        wanted = [index for index in wanted if index in on_branch]
    found: list[Event] = events_at(wanted)
    return found


def checkpoints_in(events: Sequence[Event]) -> list[CheckpointEvent]:
    """Every checkpoint the events record, newest first."""
    return [
        e
        for e in reversed(of_kinds(events, "CheckpointEvent"))
        if isinstance(e, CheckpointEvent) and e.checkpoint_id is not None
    ]


def undo_target_in(events: Sequence[Event]) -> CheckpointEvent | None:
    """The checkpoint an undo restores: from before the newest action not undone yet (after a
    restore, from before the action preceding the one it went back to)."""
    skip_to: str | None = None
    for event in reversed(of_kinds(events, "CheckpointEvent", "CheckpointRestoreEvent")):
        if isinstance(event, CheckpointRestoreEvent):
            if skip_to is None:
                skip_to = event.checkpoint_id
            continue
        if not isinstance(event, CheckpointEvent) or event.checkpoint_id is None:
            continue
        if skip_to is not None:
            if event.checkpoint_id == skip_to:
                skip_to = None
            continue
        if event.action_id is not None:
            return event
    return None


def find_checkpoint(events: Sequence[Event], checkpoint_id: str) -> CheckpointEvent | None:
    """The recorded checkpoint with this id, or the only one it is a prefix of (4+ chars)."""
    found = [
        e
        for e in checkpoints_in(events)
        if e.checkpoint_id == checkpoint_id
        or (len(checkpoint_id) >= 4 and (e.checkpoint_id or "").startswith(checkpoint_id))
    ]
    return found[0] if len({e.checkpoint_id for e in found}) == 1 else None
