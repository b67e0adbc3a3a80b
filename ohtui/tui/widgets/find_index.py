"""FindIndex: the text of every event on the active branch, lowered once, and the hits of a
search term in it, in the order the cells show them.

Plain data (no widgets, no engine): filled a page at a time from a worker thread's reading and
an event at a time as the conversation goes on, searched on the UI thread (`str.count` over
lowered text: a few milliseconds for 10,000 events). Positions are on the active branch; a
tool's result is found at its action's position, where its cell shows it.
"""

from __future__ import annotations

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

    def hits(self, term: str) -> list[Hit]:
        """Every occurrence of `term` (any case), in screen order."""
        needle = term.lower()
        if not needle:
            return []
        found: list[Hit] = []
        for source, text in self._texts.items():
            count = text.count(needle)
            if count:
                position = self.cell_position(source)
                found.extend(Hit(position, source, nth) for nth in range(count))
        found.sort()
        return found
