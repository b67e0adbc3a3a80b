"""Marking the hits of transcript search in a cell's rendered lines.

A cell draws Markdown, Content or Rich text; the marks go on the lines it has drawn, so
every kind of cell is marked the same way and nothing is rendered twice. Marks are reverse
video (the current hit's line also bold and underlined): they read with NO_COLOR too.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

MATCH = Style(reverse=True)
"""A hit."""
CURRENT = Style(reverse=True, bold=True, underline=True)
"""A hit on the line the search went to."""


@dataclass(frozen=True)
class FindMarks:
    """What the conversation view marks: the term, and where the current hit is."""

    term: str
    current: object | None = None
    """The cell of the current hit."""
    line: int = -1
    """The current hit's line in that cell (content rows from 0; -1: none known)."""

    def pattern(self) -> re.Pattern[str]:
        """The term, any case."""
        return _pattern(self.term)


_patterns: dict[str, re.Pattern[str]] = {}


def _pattern(term: str) -> re.Pattern[str]:
    found = _patterns.get(term)
    if found is None:
        if len(_patterns) > 64:
            _patterns.clear()
        found = _patterns[term] = re.compile(re.escape(term), re.IGNORECASE)
    return found


def spans(text: str, term: str) -> list[tuple[int, int]]:
    """Where `term` occurs in `text`, any case (character offsets)."""
    if not term:
        return []
    return [(m.start(), m.end()) for m in _pattern(term).finditer(text)]


def mark_strip(strip: Strip, term: str, current: bool = False) -> Strip:
    """`strip` with each occurrence of `term` marked (`current`: as the current hit's line)."""
    found = spans(strip.text, term)
    if not found:
        return strip
    style = CURRENT if current else MATCH
    segments: list[Segment] = []
    position = 0
    for segment in strip:
        text, seg_style, control = segment
        if control:
            segments.append(segment)
            continue
        start, end = position, position + len(text)
        position = end
        cuts = {start, end}
        for begin, finish in found:
            if begin < end and finish > start:
                cuts.update(c for c in (begin, finish) if start < c < end)
        edges = sorted(cuts)
        for left, right in itertools.pairwise(edges):
            piece = text[left - start : right - start]
            inside = any(begin <= left and right <= finish for begin, finish in found)
            if inside:
                piece_style = seg_style + style if seg_style is not None else style
                segments.append(Segment(piece, piece_style))
            else:
                segments.append(Segment(piece, seg_style))
    return Strip(segments, strip.cell_length)
