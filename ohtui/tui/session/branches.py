"""The conversation as the screen shows it: its active branch (root to HEAD), read a page at a
time by position on the branch, and where other branches leave it (the transcript's markers).

Positions, not log indexes: the log keeps every branch, the screen shows one. Called on the
session's threads (reading may touch the store)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ohtui.sdk import BaseConversation, Event
    from ohtui.sdk.conversation.branch import Branch

PAGE = 40
"""Events read when a branch is shown; older ones are read as the user scrolls up."""


@dataclass
class BranchPage:
    """Events of the active branch from position `start`, and the branch points among them."""

    events: list[Any]
    start: int
    total: int
    """Events on the branch."""
    branches: dict[int, int] = field(default_factory=dict)
    """Position → how many branches leave the event there (two or more)."""

    @property
    def has_older(self) -> bool:
        """Whether events come before the page."""
        return self.start > 0


def active_branch(conversation: BaseConversation) -> Branch:
    """The active branch, root first (a lazy view: events are read as they are asked for)."""
    from array import array

    from ohtui.sdk.conversation.branch import Branch

    branch = conversation.state.active_branch()
    if isinstance(branch, Branch):
        return branch
    events = list(branch)  # a state that lists its branch: its own log of one branch
    return Branch(events, array("q", range(len(events))))


def read_page(conversation: BaseConversation, start: int, stop: int) -> BranchPage:
    """The events at positions [start, stop) of the active branch (clamped), with the branch
    points among them."""
    branch = active_branch(conversation)
    total = len(branch)
    start, stop = max(0, min(start, total)), max(0, min(stop, total))
    events = list(branch[start:stop]) if stop > start else []
    return BranchPage(events, start, total, branch_points(conversation, start, stop))


def newest_page(conversation: BaseConversation, size: int = PAGE) -> BranchPage:
    """The last `size` events of the active branch."""
    total = len(active_branch(conversation))
    return read_page(conversation, total - size, total)


def branch_points(conversation: BaseConversation, start: int, stop: int) -> dict[int, int]:
    """Where, among positions [start, stop) of the active branch, other branches leave it:
    position → the number of branches there (the active one included). HEAD with events
    after it in the log (a rewind left them) counts the one to be written from it too.
    One pass over the parents of the events after the page; a log holding one branch costs
    nothing."""

    branch = active_branch(conversation)
    log = branch.log
    stop = min(stop, len(branch))
    if len(log) <= len(branch) or start >= stop:
        return {}  # every event is on the active branch: nothing leaves it
    parent_of = getattr(log, "parent_index", None)
    if parent_of is None:
        return {}
    page = {branch.log_index(position): position for position in range(max(0, start), stop)}
    counts = dict.fromkeys(page.values(), 0)
    children: dict[int, list[int]] = {}
    for index in range(min(page) + 1, len(log)):
        position = page.get(parent_of(index))
        if position is not None:
            children.setdefault(position, []).append(index)
    head = len(branch) - 1
    for position, found in children.items():
        counts[position] = _nodes(log, found, exact=position == head)
    points = {}
    for position, count in counts.items():
        branches = count + 1 if position == head and count else count
        if branches >= 2:
            points[position] = branches
    return points


def _nodes(log: Sequence[Event], indexes: list[int], exact: bool) -> int:
    """How many of the events at `indexes` are nodes of the tree (a state update is not);
    read only where it matters: two or more, or (`exact`) any."""
    from ohtui.sdk import ConversationStateUpdateEvent

    if len(indexes) < 2 and not exact:
        return len(indexes)
    return len([i for i in indexes if not isinstance(log[i], ConversationStateUpdateEvent)])


def switch_target(conversation: BaseConversation, position: int) -> tuple[str, int, int] | None:
    """Where switching branches at `position` of the active branch goes: the newest event of
    the next branch leaving there (after the one shown, cycling; the oldest first), the
    number of that branch and of all of them. None when only one branch leaves there."""
    from ohtui.sdk import ConversationStateUpdateEvent

    branch = active_branch(conversation)
    log = branch.log
    if not 0 <= position < len(branch):
        return None
    here = branch.log_index(position)
    parent_of = getattr(log, "parent_index", None)
    if parent_of is None:
        return None
    children = [
        i
        for i in range(here + 1, len(log))
        if parent_of(i) == here and not isinstance(log[i], ConversationStateUpdateEvent)
    ]
    shown = branch.log_index(position + 1) if position + 1 < len(branch) else None
    if len(children) < (1 if shown is None else 2):
        return None
    after = children.index(shown) + 1 if shown in children else 0
    chosen = children[after % len(children)]
    newest = chosen
    below = {chosen}
    for index in range(chosen + 1, len(log)):  # the subtree under it: parents come first
        if parent_of(index) in below:
            below.add(index)
            if not isinstance(log[index], ConversationStateUpdateEvent):
                newest = index
    total = len(children) + (1 if shown is None else 0)
    return log[newest].id, after % len(children) + 1, total
