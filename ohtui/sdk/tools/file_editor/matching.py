"""Finding `old_str` for str_replace, with hints that help the model fix a near miss."""

from __future__ import annotations

from pathlib import Path

from ohtui.sdk.tools.file_editor.fileio import FileEditorError

MAX_LISTED_LINES = 10


def find_unique(text: str, old_str: str, path: Path) -> int:
    """The index of the one occurrence of `old_str` in `text`; FileEditorError otherwise."""
    starts = _occurrences(text, old_str)
    if len(starts) == 1:
        return starts[0]
    if starts:
        lines = [text.count("\n", 0, i) + 1 for i in starts]
        shown = ", ".join(str(n) for n in lines[:MAX_LISTED_LINES])
        if len(lines) > MAX_LISTED_LINES:
            shown += ", ..."
        raise FileEditorError(
            f"old_str occurs {len(starts)} times in {path}, starting at lines {shown}. "
            "It must match exactly once: add surrounding lines to old_str to make it unique."
        )
    raise FileEditorError(f"No match for old_str in {path}. {_near_miss_hint(text, old_str)}")


def _occurrences(text: str, old_str: str) -> list[int]:
    starts: list[int] = []
    index = text.find(old_str)
    while index != -1:
        starts.append(index)
        index = text.find(old_str, index + len(old_str))
    return starts


def _squash(text: str) -> str:
    """`text` with every run of whitespace made one space, for whitespace-blind comparison."""
    return " ".join(text.split())


def _near_miss_hint(text: str, old_str: str) -> str:
    lines = text.split("\n")
    wanted = old_str.split("\n")
    first = wanted[0].strip()
    squashed = _squash(old_str)
    first_line_hits: list[int] = []
    for number, line in enumerate(lines, start=1):
        if not first or first not in line:
            continue
        window = "\n".join(lines[number - 1 : number - 1 + len(wanted)])
        if squashed and squashed in _squash(window):
            return (
                f"It would match at line {number} if whitespace were ignored: the whitespace "
                "differs (indentation, tabs vs spaces, trailing spaces or line breaks). View "
                "those lines and copy them exactly."
            )
        first_line_hits.append(number)
    if squashed and squashed in _squash(text):
        return (
            "It would match if whitespace were ignored: the whitespace differs (indentation, "
            "tabs vs spaces, trailing spaces or line breaks). View the file and copy the text "
            "exactly."
        )
    if first_line_hits and len(wanted) > 1:
        shown = ", ".join(str(n) for n in first_line_hits[:MAX_LISTED_LINES])
        return (
            f"Its first line appears in the file (line {shown}) but the lines after it "
            "differ. View those lines and copy them exactly."
        )
    return (
        "old_str must match the file exactly, including whitespace and indentation. View the "
        "file to see its current content."
    )
