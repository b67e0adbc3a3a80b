"""Words for counts in what the engine shows and tells the model."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """ "1 line", "3 lines" (`many` for irregular plurals)."""
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"
