"""Rewinding: going back to one of the user's messages, in the conversation, the code, or both.

The points to go back to are the user's messages on the active branch (`user_turns`, newest
first). Going back to a message moves HEAD to the event before it (`navigate_to`), so the
message can be edited and sent again as a sibling branch; nothing is deleted. The code goes
back with it through the checkpoints (`plan_rewind`): the workspace as it was at the message
is the first checkpoint recorded after it on the branch (taken before the first action that
could change a file); restoring it is itself checkpointed, so it can be undone, and the
user's own git state is never touched (checkpoints live in their own store).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from ohtui.sdk.conversation.branch import Branch
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.checkpoint import CheckpointEvent, FileChangeRecord
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.types import EventID

if TYPE_CHECKING:
    from ohtui.sdk.conversation.base import BaseConversation

PREVIEW_EVENTS = 8
"""Events after a message read for its preview."""
PREVIEW_CHARS = 160


class RewindScope(StrEnum):
    """What a rewind restores."""

    CONVERSATION = "conversation"
    CODE = "code"
    BOTH = "both"


@dataclass(frozen=True, slots=True)
class Turn:
    """One of the user's messages on the active branch: a point to rewind or fork at."""

    event_id: EventID
    position: int
    """Where the message is on the branch."""
    text: str
    timestamp: str
    number: int
    """1 for the first message of the branch."""


@dataclass(frozen=True, slots=True)
class RewindPlan:
    """What rewinding to `turn` would do."""

    turn: Turn
    head: EventID | None
    """Where HEAD goes: the event before the message (None: the message is the root)."""
    checkpoint: CheckpointEvent | None
    """The workspace as it was at the message; None when nothing recorded changed it since,
    or no checkpoints are kept (`code_note` says which)."""
    changes: list[FileChangeRecord] = field(default_factory=list)
    """The files restoring the checkpoint would change now."""
    code_note: str = ""
    """Why the code cannot go back, when it cannot."""


def _user_positions(branch: Branch) -> list[int]:
    """Where the user's messages are on `branch` (from the store's rows when it can say)."""
    indexes_of = getattr(branch.log, "user_message_indexes", None)
    if indexes_of is None:
        return [
            p for p, e in enumerate(branch) if isinstance(e, MessageEvent) and e.source == "user"
        ]
    wanted = set(indexes_of())
    return [p for p, index in enumerate(branch.indexes) if index in wanted]


def user_turns(branch: Branch) -> list[Turn]:
    """The user's messages on `branch`, newest first (no other event is read; from a stored
    log none is parsed)."""
    messages_of = getattr(branch.log, "user_messages", None)
    if messages_of is not None:
        rows = {row[0]: row for row in messages_of()}
        found = [(p, rows[i]) for p, i in enumerate(branch.indexes) if i in rows]
        turns = [
            Turn(event_id, position, text.strip(), timestamp, number)
            for number, (position, (_, event_id, timestamp, text)) in enumerate(found, 1)
        ]
        turns.reverse()
        return turns
    positions = _user_positions(branch)
    events_at = getattr(branch.log, "events_at", None)
    if events_at is None:
        messages = [branch[p] for p in positions]
    else:  # in one pass over the store, not a page read around each
        messages = events_at([branch.log_index(p) for p in positions])
    turns = [
        Turn(event.id, position, _text(event), event.timestamp, number)
        for number, (position, event) in enumerate(zip(positions, messages, strict=True), 1)
    ]
    turns.reverse()
    return turns


def reply_preview(branch: Branch, turn: Turn, limit: int = PREVIEW_CHARS) -> str:
    """What followed the message, in a line: the agent's words and the tools it called."""
    parts: list[str] = []
    following = branch[turn.position + 1 : turn.position + 1 + PREVIEW_EVENTS]
    for event in following:
        if isinstance(event, MessageEvent):
            if event.source == "user":
                break
            parts.append(_text(event))
        elif isinstance(event, ActionEvent):
            parts.append(f"[{event.tool_name}]")
    preview = " ".join(p for p in parts if p)
    return preview if len(preview) <= limit else preview[: limit - 1] + "…"


def turn_end(branch: Branch, turn: Turn) -> EventID:
    """The last event of the turn the message starts: the event before the next user message
    on the branch, or the branch's last event."""
    indexes_of = getattr(branch.log, "user_message_indexes", None)
    later = (
        {i for i in indexes_of() if i > branch.log_index(turn.position)}
        if indexes_of is not None
        else None
    )
    for position in range(turn.position + 1, len(branch)):
        index = branch.log_index(position)
        if later is not None:
            if index in later:
                return branch[position - 1].id
            continue
        event = branch[position]
        if isinstance(event, MessageEvent) and event.source == "user":
            return branch[position - 1].id
    return branch[len(branch) - 1].id


def checkpoint_after(branch: Branch, position: int) -> CheckpointEvent | None:
    """The first checkpoint recorded after `position` on the branch: the workspace as it was
    there (None: nothing recorded changed it since). Reads a page at a time, stopping at it."""
    page = 64
    for start in range(position + 1, len(branch), page):
        for event in branch[start : start + page]:
            if isinstance(event, CheckpointEvent) and event.checkpoint_id is not None:
                return event
    return None


def plan_rewind(conversation: BaseConversation, event_id: EventID) -> RewindPlan:
    """What rewinding to the user's message `event_id` would do (ValueError when it is not a
    message of the user on the active branch)."""
    branch = conversation.state.active_branch()
    position = branch.position_of(event_id) if isinstance(branch, Branch) else None
    event = branch[position] if position is not None else None
    if not isinstance(event, MessageEvent) or event.source != "user" or position is None:
        raise ValueError(f"{event_id} is not one of the user's messages on the active branch")
    assert isinstance(branch, Branch)
    number = sum(1 for p in _user_positions(branch) if p <= position)
    turn = Turn(event.id, position, _text(event), event.timestamp, number)
    head = branch[position - 1].id if position > 0 else None
    checkpoint = checkpoint_after(branch, position)
    if checkpoint is None:
        kept = bool(conversation.list_checkpoints()) or _checkpointing(conversation)
        note = (
            "No change to the workspace was recorded since this message."
            if kept
            else "This conversation keeps no checkpoints, so its code cannot go back."
        )
        return RewindPlan(turn, head, None, [], note)
    changes = conversation.checkpoint_changes(str(checkpoint.checkpoint_id))
    note = "" if changes else "The workspace is already as it was at this message."
    return RewindPlan(turn, head, checkpoint, changes, note)


def rewind(conversation: BaseConversation, plan: RewindPlan, scope: RewindScope) -> None:
    """Restore what `scope` says: the code first (its restore is recorded on the branch left
    behind), then the conversation (HEAD moves to the event before the message). Never while
    the agent runs (the restore refuses, CheckpointError)."""
    if scope is not RewindScope.CONVERSATION and plan.checkpoint is not None and plan.changes:
        conversation.restore_checkpoint(str(plan.checkpoint.checkpoint_id))
    if scope is not RewindScope.CODE:
        conversation.navigate_to(plan.head)


def _checkpointing(conversation: BaseConversation) -> bool:
    return getattr(conversation, "checkpointing", None) is not None


def _text(event: Event) -> str:
    if isinstance(event, MessageEvent):
        return event.llm_message.text.strip()
    return ""
