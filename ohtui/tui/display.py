"""Small text helpers for what screens show."""

from __future__ import annotations

from pathlib import Path


def short_path(path: str | None, home: Path) -> str:
    """A directory with the home directory shown as ~ ("" for none)."""
    if not path:
        return ""
    home_text = str(home)
    if path == home_text:
        return "~"
    # Plain string work: this runs for every row of a 1,000-row listing.
    if path.startswith(home_text.rstrip("/") + "/"):
        return "~/" + path[len(home_text.rstrip("/")) + 1 :]
    return path


def plural(count: int, noun: str, many: str | None = None) -> str:
    """ "1 action", "3 actions" (`many` for irregular plurals)."""
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"


def waiting_text(count: int) -> str:
    """ "1 action waits", "3 actions wait"."""
    return f"{plural(count, 'action')} {'waits' if count == 1 else 'wait'}"


def clip_lines(text: str, limit: int) -> tuple[str, int]:
    """The first `limit` lines of text, and how many lines were left out."""
    lines = text.splitlines()
    if len(lines) <= limit:
        return text, 0
    return "\n".join(lines[:limit]), len(lines) - limit


def more_lines(count: int) -> str:
    """ "1 more line", "2 more lines"."""
    return plural(count, "more line")
