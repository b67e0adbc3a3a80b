"""Plain data the rewind screen shows and gives back (no engine types: the session converts)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ohtui.tui.checkpoint_types import FileChange


class RewindAction(StrEnum):
    """What the user chose to do at a message; the value is its label."""

    BOTH = "Restore the conversation and the code"
    CONVERSATION = "Restore the conversation only"
    CODE = "Restore the code only"
    FORK = "Fork here: a new conversation up to the end of this turn"
    FORK_WITH_CODE = "Fork here with the code as it was at the end of this turn"

    @property
    def key(self) -> str:
        """The letter that chooses it on the rewind screen."""
        return _KEYS[self]

    @property
    def needs_code(self) -> bool:
        """Whether it restores the workspace."""
        return self in (RewindAction.BOTH, RewindAction.CODE, RewindAction.FORK_WITH_CODE)

    @property
    def forks(self) -> bool:
        """Whether it makes a new conversation instead of moving this one."""
        return self in (RewindAction.FORK, RewindAction.FORK_WITH_CODE)


_KEYS = {
    RewindAction.BOTH: "b",
    RewindAction.CONVERSATION: "c",
    RewindAction.CODE: "k",
    RewindAction.FORK: "f",
    RewindAction.FORK_WITH_CODE: "w",
}


@dataclass(frozen=True)
class TurnRow:
    """One of the user's messages on the active branch, as the rewind screen lists it."""

    event_id: str
    number: int
    """1 for the first message of the branch."""
    text: str
    preview: str | None = None
    """What followed it, in a line (None: not read yet)."""


@dataclass(frozen=True)
class RewindPreview:
    """What rewinding to a message would do to the code."""

    turn: TurnRow
    changes: tuple[FileChange, ...]
    """The files restoring its checkpoint would change now."""
    code_note: str = ""
    """Why the code does not go back (nothing to restore, no checkpoints), when it does not."""

    @property
    def code_can_go_back(self) -> bool:
        """Whether restoring the code would change anything."""
        return bool(self.changes)


@dataclass(frozen=True)
class RewindChoice:
    """The message chosen and what to do there."""

    event_id: str
    action: RewindAction
