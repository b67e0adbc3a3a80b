"""FindIndex: the text of every event on the active branch, lowered once, and the hits of a
search term in it, in the order the cells show them.

Plain data (no widgets, no engine): filled a page at a time from a worker thread's reading and
an event at a time as the conversation goes on, searched on the UI thread (`str.count` over
lowered text: a few milliseconds for 10,000 events). Positions are on the active branch; a
tool's result is found at its action's position, where its cell shows it.
"""

from __future__ import annotations

import bisect
from typing import NamedTuple


class Hit(NamedTuple):
    """One occurrence of the term: in the cell of the event at `position`, from the text of
    the event at `source` (the position itself, or a result shown in its action's cell),
    the `nth` there (from 0)."""

    position: int
    source: int
    nth: int


class FindIndex:
    """Lowered text by position, and which cell shows it."""

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}
        self._calls: dict[str, int] = {}
        """Tool call id → the position of its action."""
        self._answers: dict[int, str] = {}
        """Position of a result → the tool call it answers."""
        self.complete = False
        """Every event up to the newest has been read (set by the reader)."""

    def __len__(self) -> int:
        return len(self._texts)

    def add(
        self, position: int, text: str, call: str | None = None, answers: str | None = None
    ) -> None:
        """Record what the event at `position` shows (again: the newer reading wins)."""
        self._texts[position] = text.lower()
        if call is not None:
            self._calls[call] = position
        if answers is not None:
            self._answers[position] = answers

    def cell_position(self, source: int) -> int:
        """Where the text of the event at `source` shows: its action's cell for a result."""
        call = self._answers.get(source)
        if call is None:
            return source
        return self._calls.get(call, source)

    def count_in(self, term: str, source: int) -> int:
        """How often `term` (lowered) occurs in the event at `source`."""
        return self._texts.get(source, "").count(term) if term else 0

    def matches(self, term: str) -> Matches:
        """Every occurrence of `term` (any case), in screen order."""
        needle = term.lower()
        found: list[tuple[int, int, int]] = []
        if needle:
            for source, text in self._texts.items():
                count = text.count(needle)
                if count:
                    found.append((self.cell_position(source), source, count))
        found.sort()
        return Matches(found)


class Matches:
    """The hits of one term: one entry per event that has any (not one per occurrence: a
    one-letter term has hundreds of thousands in a long conversation), numbered in order."""

    def __init__(self, entries: list[tuple[int, int, int]]) -> None:
        """`entries`: (cell position, source position, count), sorted."""
        self._keys = [(position, source) for position, source, _ in entries]
        self._starts: list[int] = []
        total = 0
        for _, _, count in entries:
            self._starts.append(total)
            total += count
        self.total = total
        """How many hits there are."""

    def __len__(self) -> int:
        return self.total

    def hit(self, number: int) -> Hit:
        """The hit numbered `number` (from 0)."""
        at = bisect.bisect_right(self._starts, number) - 1
        position, source = self._keys[at]
        return Hit(position, source, number - self._starts[at])

    def number(self, hit: Hit) -> int | None:
        """The number of `hit` among these (None: it is not one of them)."""
        at = bisect.bisect_left(self._keys, (hit.position, hit.source))
        if at == len(self._keys) or self._keys[at] != (hit.position, hit.source):
            return None
        end = self._starts[at + 1] if at + 1 < len(self._starts) else self.total
        number = self._starts[at] + hit.nth
        return number if number < end else None

    def last_at_or_before(self, position: int) -> int:
        """The number of the last hit in a cell at or before `position` (0 if none is)."""
        at = bisect.bisect_right(self._keys, (position, 1 << 62))
        if at == 0:
            return 0
        end = self._starts[at] if at < len(self._starts) else self.total
        return end - 1

    def first_in(self, position: int) -> int:
        """The number of the first hit in the cell at `position`."""
        at = bisect.bisect_left(self._keys, (position, -1))
        return self._starts[at] if at < len(self._starts) else self.total
