"""Text the editor shows: numbered lines, unified diffs and directory listings."""

from __future__ import annotations

import difflib
import enum
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ohtui.sdk.utils.text import plural
from ohtui.terminal_text import shell_quoted

MAX_VIEW_CHARS = 16_000
"""Longer views are cut so one call cannot flood the model's context."""

MAX_LISTING_ENTRIES = 300
LISTING_DEPTH = 2
SKIPPED_DIRS = frozenset(
    {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".tox"}
)


def numbered(lines: Sequence[str], first: int = 1, max_chars: int = MAX_VIEW_CHARS) -> str:
    """`lines` as `cat -n` prints them, numbered from `first`, cut with a note past `max_chars`."""
    out: list[str] = []
    used = 0
    for offset, line in enumerate(lines):
        row = f"{first + offset:6}\t{line}"
        if out and used + len(row) + 1 > max_chars:
            shown_to = first + offset - 1
            last = first + len(lines) - 1
            out.append(
                f"[Output cut after line {shown_to} of {last}: too long to show at once. "
                f"Use view_range to see the rest, e.g. [{shown_to + 1}, "
                f"{min(last, shown_to + 200)}].]"
            )
            break
        out.append(row)
        used += len(row) + 1
    return "\n".join(out)


def _diff_lines(text: str | None) -> list[str]:
    if not text:
        return []
    lines = [line + "\n" for line in text.split("\n")]
    if text.endswith("\n"):
        lines.pop()
    else:
        lines[-1] += "\\ No newline at end of file\n"  # git's marker, so the change is visible
    return lines


def unified_diff(old: str | None, new: str | None, label: str) -> str:
    """A git-style unified diff from `old` to `new`; None stands for a missing file."""
    return "".join(
        difflib.unified_diff(
            _diff_lines(old),
            _diff_lines(new),
            fromfile="/dev/null" if old is None else f"a/{label}",
            tofile="/dev/null" if new is None else f"b/{label}",
            n=3,
        )
    )


class DiffLine(enum.Enum):
    """What a line of a unified diff is; its value is how `git diff` colours it."""

    HEADER = "bold"
    HUNK = "cyan"
    ADDED = "green"
    REMOVED = "red"
    CONTEXT = ""


_DIFF_HEADERS = ("--- ", "+++ ", "diff ", "index ", "new file", "deleted file")


def diff_lines(diff: str) -> Iterator[tuple[DiffLine, str]]:
    """Each line of a unified diff (one or several files) with what it is.

    Inside a hunk, "--- x" is a removed line "-- x", not a header: headers are only read
    between a file's `diff` line and its first hunk.
    """
    in_hunk = False
    for line in diff.splitlines():
        if line.startswith("diff "):
            in_hunk = False
        if not in_hunk and line.startswith(_DIFF_HEADERS):
            yield DiffLine.HEADER, line
        elif line.startswith("@@"):
            in_hunk = True
            yield DiffLine.HUNK, line
        elif line.startswith("+"):
            yield DiffLine.ADDED, line
        elif line.startswith("-"):
            yield DiffLine.REMOVED, line
        else:
            yield DiffLine.CONTEXT, line


def open_subdirectory(parent: int, name: str) -> int | None:
    """The directory `name` in the directory open as `parent`, open for listing (None if it
    is not a directory, a link included, or cannot be opened)."""
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
    except OSError:
        return None


def list_directory(
    root: Path,
    depth: int = LISTING_DEPTH,
    max_entries: int = MAX_LISTING_ENTRIES,
    *,
    fd: int | None = None,
    enter: Callable[[int, str], int | None] = open_subdirectory,
) -> str:
    """Paths under `root` up to `depth` levels, directories ending in `/`, hidden ones skipped.

    The walk goes by descriptor, never by a name a link swapped in could redirect: `root` is
    read as `fd` (opened here when not given), each subdirectory as `enter(fd, name)` opens
    it (closed here; None: not listed).

    A path whose name is not UTF-8, or holds a newline or another control character, is
    written as the shell quotes it (`$'bad\\xffname'`, see `shell_quoted`): one line per
    entry, text that can be saved, and a form the agent can use in a command.
    """
    entries: list[str] = []
    skipped = 0
    unreadable: list[str] = []
    full = False
    quoted = 0

    def shown(path: str) -> str:
        nonlocal quoted
        text = shell_quoted(path)
        quoted += text != path
        return text

    def walk(directory: str, fd: int, level: int) -> None:
        nonlocal skipped, full
        try:
            with os.scandir(fd) as scan:
                children = sorted(scan, key=lambda e: e.name)
        except OSError:
            unreadable.append(shown(directory))
            return
        for child in children:
            if child.name.startswith(".") or child.name in SKIPPED_DIRS:
                skipped += 1
                continue
            if len(entries) >= max_entries:
                full = True
                return
            try:
                is_dir = child.is_dir()
            except OSError:  # a symbolic link loop: listed, never followed
                is_dir = False
            path = os.path.join(directory, child.name)
            entries.append(shown(f"{path}/" if is_dir else path))
            # Symlinked directories are listed but not entered, which rules out cycles; a
            # directory is entered by its descriptor, so a link swapped in is never followed.
            if is_dir and level < depth and not child.is_symlink():
                sub = enter(fd, child.name)
                if sub is None:
                    unreadable.append(shown(path))
                    continue
                try:
                    walk(path, sub, level + 1)
                finally:
                    os.close(sub)
            if full:
                return

    own = None
    if fd is None:
        try:
            fd = own = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            unreadable.append(shown(str(root)))
    try:
        if fd is not None:
            walk(str(root), fd, 1)
    finally:
        if own is not None:
            os.close(own)
    where = shown(f"{str(root).rstrip('/')}/")
    header = f"Files and directories up to {depth} levels deep in {where}"
    lines = [f"{header}:" if entries else f"{header}: (empty)", *entries]
    if quoted:
        lines.append(
            f"[{plural(quoted, 'path')} above {'is' if quoted == 1 else 'are'} not plain UTF-8 "
            "text (a byte that is not UTF-8, a newline or another control character in a "
            "name): written as bash's $'...' quoting. Use them in the terminal as written.]"
        )
    if full:
        lines.append(f"[Listing cut at {len(entries)} entries. View a subdirectory to see more.]")
    if skipped:
        lines.append(
            f"[{skipped} hidden or bulky entries (e.g. .git, node_modules, __pycache__, .venv) "
            "not shown; use the terminal to see them.]"
        )
    if unreadable:
        lines.append(f"[Could not read: {', '.join(unreadable)}]")
    return "\n".join(lines)
