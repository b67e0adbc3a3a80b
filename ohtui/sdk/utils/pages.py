"""A long run of log positions read a page at a time, forwards or backwards: a branch or a
model's view of thousands of events never holds more than a page of them parsed."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

P = TypeVar("P")
T = TypeVar("T")

PAGE = 256
"""Positions read at a time."""


def in_pages(read: Callable[[Sequence[P]], Sequence[T]], positions: Sequence[P]) -> Iterator[T]:
    """What `read` gives for `positions`, in order, asking it for a page at a time."""
    for start in range(0, len(positions), PAGE):
        yield from read(positions[start : start + PAGE])


def in_pages_reversed(
    read: Callable[[Sequence[P]], Sequence[T]], positions: Sequence[P]
) -> Iterator[T]:
    """What `read` gives for `positions`, last first, asking it for a page at a time."""
    stop = len(positions)
    while stop > 0:
        start = max(0, stop - PAGE)
        yield from reversed(read(positions[start:stop]))
        stop = start
