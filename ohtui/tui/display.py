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
