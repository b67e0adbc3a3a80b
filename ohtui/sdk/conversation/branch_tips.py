"""A saved conversation's place in the tree, as listings show it: its branches (named by their
tips, the events nothing was appended after), which one is active, and when a fork was made.

Read from the store's rows (`ConversationStore.event_shape`: parents and kinds, no event
parsed) in one pass; the user's last message on each branch is looked for up its chain a run
of events at a time, and only the few events named (each tip, that message, the event forked
at) are parsed. A linear 10,000-event conversation costs ~40 ms.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ohtui.sdk.conversation.event_store import ROOT
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.types import ROOT_PARENT_ID

if TYPE_CHECKING:
    from ohtui.sdk.conversation.store import ConversationStore

NOT_A_NODE = frozenset({"ConversationStateUpdateEvent"})
"""Kinds of event that are no node of the tree (state-sync artifacts): never a branch's tip."""
MAX_TIPS = 200
"""The most branches listed (the newest): a list longer than this helps nobody choose."""
_CHAIN_RUN = 64
"""Events of a branch asked about at a time when looking for the user's last message."""


@dataclass(frozen=True, slots=True)
class BranchTip:
    """One branch of a conversation, named by its last event."""

    leaf_event_id: str
    timestamp: datetime
    """When its last event happened."""
    last_user_message: str | None
    """The text of the user's last message on it (None: none on it)."""
    events: int
    """How many events (nodes of the tree) it has, root to tip."""
    active: bool
    """Whether it is the conversation's active branch (HEAD is on it)."""


@dataclass(frozen=True, slots=True)
class ConversationTree:
    """A conversation's branches, newest first, and when the event it was forked at happened."""

    tips: list[BranchTip]
    branch_points: int
    """How many events have more than one branch going on from them."""
    forked_at_time: datetime | None = None
    """When the event it was forked at happened (None: not a fork, or forked at HEAD)."""

    @property
    def active(self) -> BranchTip | None:
        """The active branch (None: HEAD is empty, or on no tip: moved back, nothing after)."""
        return next((tip for tip in self.tips if tip.active), None)


@dataclass(frozen=True, slots=True)
class TreeShape:
    """The tree of a log, from each event's parent (no event parsed)."""

    tips: list[int]
    """The indexes of the tips, newest first."""
    branch_points: int
    depth: array[int]
    """Per event: how many nodes its branch has up to it (0 for an event that is no node)."""
    last_user: array[int]
    """Per event: the index of the last user message on its branch up to it (ROOT: none, or
    not asked)."""
    node_parent: array[int]
    """Per event: the index of its nearest ancestor that is a node (ROOT: none)."""


def tree_shape(
    parents: Sequence[int | None],
    nodes: Sequence[bool],
    user_messages: Sequence[bool] | None = None,
) -> TreeShape:
    """The shape of a log whose event `i` has stored parent `parents[i]` (None: the event
    before, a root at 0; ROOT: a root), is a node of the tree if `nodes[i]`, and is a user
    message if `user_messages[i]` (None: not asked). A non-node's children hang, for the
    tree, from its nearest node ancestor."""
    count = len(parents)
    node_parent = array("q", [ROOT]) * count
    depth = array("q", [0]) * count
    last_user = array("q", [ROOT]) * count
    children = array("q", [0]) * count
    for index in range(count):
        stored = parents[index]
        parent = (index - 1 if index > 0 else ROOT) if stored is None else stored
        if parent != ROOT and not nodes[parent]:
            parent = node_parent[parent]
        node_parent[index] = parent
        if not nodes[index]:
            continue
        if parent != ROOT:
            children[parent] += 1
        depth[index] = (depth[parent] if parent != ROOT else 0) + 1
        if user_messages is not None:
            inherited = last_user[parent] if parent != ROOT else ROOT
            last_user[index] = index if user_messages[index] else inherited
    tips = [i for i in range(count - 1, -1, -1) if nodes[i] and children[i] == 0]
    points = sum(1 for i in range(count) if children[i] > 1)
    return TreeShape(tips, points, depth, last_user, node_parent)


def read_tree(
    store: ConversationStore, key: int, leaf: str | None, forked_at: str | None = None
) -> ConversationTree:
    """The branches of the saved conversation `key` whose HEAD is `leaf` (None: its newest
    event), and the time of `forked_at` when it names one of its events."""
    rows = store.event_shape(key)
    shape = tree_shape([row[0] for row in rows], [row[1] not in NOT_A_NODE for row in rows])
    leaf_index = store.event_index(key, leaf) if leaf is not None else None
    active = _active_tip(shape, leaf_index)
    tips = []
    for index in shape.tips[:MAX_TIPS]:
        tip = _event(store, key, index)
        user_index = _last_user_message(store, key, shape, index)
        user = _event(store, key, user_index) if user_index != ROOT else None
        tips.append(
            BranchTip(
                leaf_event_id=tip.id,
                timestamp=_time(tip.timestamp),
                last_user_message=_text(user),
                events=shape.depth[index],
                active=index == active,
            )
        )
    forked_index = store.event_index(key, forked_at) if forked_at is not None else None
    forked_time = (
        _time(_event(store, key, forked_index).timestamp) if forked_index is not None else None
    )
    return ConversationTree(tips, shape.branch_points, forked_time)


def tree_of_events(
    events: Sequence[Event], leaf: str | None, forked_at: str | None = None
) -> ConversationTree:
    """The same from events in memory (an agent server's, read in full), in log order."""
    index_of = {event.id: index for index, event in enumerate(events)}
    parents: list[int | None] = []
    for event in events:
        parent = event.parent_id
        if parent is None:
            parents.append(None)
        elif parent == ROOT_PARENT_ID or parent not in index_of:
            parents.append(ROOT)
        else:
            parents.append(index_of[parent])
    shape = tree_shape(
        parents,
        [event.kind not in NOT_A_NODE for event in events],
        [isinstance(event, MessageEvent) and event.source == "user" for event in events],
    )
    active = _active_tip(shape, index_of.get(leaf) if leaf is not None else None)
    tips = [
        BranchTip(
            leaf_event_id=events[index].id,
            timestamp=_time(events[index].timestamp),
            last_user_message=_text(
                events[shape.last_user[index]] if shape.last_user[index] != ROOT else None
            ),
            events=shape.depth[index],
            active=index == active,
        )
        for index in shape.tips[:MAX_TIPS]
    ]
    forked = index_of.get(forked_at) if forked_at is not None else None
    forked_time = _time(events[forked].timestamp) if forked is not None else None
    return ConversationTree(tips, shape.branch_points, forked_time)


def _last_user_message(store: ConversationStore, key: int, shape: TreeShape, tip: int) -> int:
    """The index of the user's last message on the branch ending at `tip` (ROOT: none),
    asked of the store a run of the branch's events at a time, from the tip up."""
    index = tip
    while index != ROOT:
        run: list[int] = []
        while index != ROOT and len(run) < _CHAIN_RUN:
            run.append(index)
            index = shape.node_parent[index]
        found = store.user_messages_among(key, run)
        if found:
            return max(found)  # up the branch, indexes only fall: the last is the largest
    return ROOT


def _active_tip(shape: TreeShape, leaf_index: int | None) -> int | None:
    """The tip HEAD is at (None: HEAD is between tips, moved back with nothing after it)."""
    if leaf_index is None:
        return shape.tips[0] if shape.tips else None  # a log older than the tree: linear
    return leaf_index if leaf_index in shape.tips else None


def _event(store: ConversationStore, key: int, index: int) -> Event:
    [(_, data)] = store.read_events(key, index, index + 1)
    return Event.model_validate_json(data)


def _text(event: Event | None) -> str | None:
    if not isinstance(event, MessageEvent):
        return None
    return event.text.strip() or None


def _time(timestamp: str) -> datetime:
    moment = datetime.fromisoformat(timestamp)
    return moment if moment.tzinfo else moment.astimezone()
