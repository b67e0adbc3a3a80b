"""TreeIndex: the parent of every event of a log, kept as the few places the tree branches.

Almost every event's parent is the event logged just before it; only a new branch (the
first event after `navigate_to`) or a new root is not. So the index keeps those "jumps"
alone, sorted by position: a linear 10,000-event conversation has none and loads for free,
and a branch is read from its leaf to the root a run of consecutive events at a time
(a step per jump on it, not per event).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable

ROOT = -1
"""The parent index of a root of the conversation tree."""


class NotATreeError(ValueError):
    """An event's recorded parent is not an event before it (a damaged log)."""

    def __init__(self, event_id: str, parent: int) -> None:
        where = "a negative index" if parent < ROOT else f"index {parent}, not before it"
        super().__init__(
            f"The conversation's events do not form a tree: event {event_id} names as its "
            f"parent {where}. The saved conversation is damaged; fork it from an earlier "
            "event (from_event_id) to go on from there."
        )


class TreeIndex:
    """Parents by position, for a log of `length` events."""

    def __init__(self, length: int = 0, jumps: Iterable[tuple[int, int]] = ()) -> None:
        """`jumps`: (index, parent index) of the events whose parent is not the one before,
        ascending by index (ROOT for a root after index 0)."""
        self.length = length
        self._jumps: dict[int, int] = {}
        self._keys: list[int] = []
        for index, parent in jumps:
            if parent != index - 1:  # (a row may spell out the usual parent)
                self._jump(index, parent)

    def add(self, index: int, parent: int) -> None:
        """Record the event at `index` (the next one) with its parent."""
        if parent != index - 1:
            self._jump(index, parent)
        self.length = index + 1

    def parent(self, index: int) -> int:
        """The parent index of the event at `index` (ROOT for a root)."""
        return self._jumps.get(index, index - 1)

    def branch(self, leaf: int, limit: int | None, event_id: Callable[[int], str]) -> array[int]:
        """The indexes from the root to `leaf`, root first (its last `limit` with a limit).

        NotATreeError (naming the event, found by `event_id`) for a parent not before its
        child: every step goes to a smaller index, so a damaged log never loops."""
        runs: list[range] = []
        total = 0
        index = leaf
        while index != ROOT and (limit is None or total < limit):
            if not 0 <= index < self.length:
                raise NotATreeError(event_id(leaf), index)
            at = bisect_right(self._keys, index) - 1
            start = self._keys[at] if at >= 0 else 0  # start..index: each the child of the last
            runs.append(range(start, index + 1))
            total += index + 1 - start
            parent = self._jumps[start] if at >= 0 else ROOT
            if not ROOT <= parent < start:
                raise NotATreeError(event_id(start), parent)
            index = parent
        chain: array[int] = array("q")
        for run in reversed(runs):
            chain.extend(run)
        if limit is not None and len(chain) > limit:
            del chain[: len(chain) - limit]
        return chain

    def children(self, index: int) -> list[int]:
        """The indexes of the events whose parent is the event at `index`, oldest first."""
        found = [i for i, parent in self._jumps.items() if parent == index]
        following = index + 1
        if following < self.length and following not in self._jumps:
            found.append(following)
        return sorted(found)

    def _jump(self, index: int, parent: int) -> None:
        if self._keys and index <= self._keys[-1]:
            raise ValueError(f"tree jumps must come in order: {index} after {self._keys[-1]}")
        self._jumps[index] = parent
        self._keys.append(index)
