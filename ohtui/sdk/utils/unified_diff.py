"""Git-style unified diffs read as text: split into one patch per file, counted, reversed.

The checkpoint store answers "what would restoring change" (the workspace now to the
checkpoint); what the agent changed is the same diff the other way round, so `reverse`
turns one into the other without asking the store (or a server) for anything new.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

FileStatus = Literal["added", "modified", "deleted"]

CUT_NOTE = "[diff cut at "
"""How the checkpoint store ends a diff it cut short."""
_HUNK = re.compile(r"@@ -(\d+(?:,\d+)?) \+(\d+(?:,\d+)?) @@(.*)")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f"}
_ESCAPES |= {"r": "\r", "v": "\v"}


@dataclass(frozen=True, slots=True)
class FilePatch:
    """One file's part of a unified diff."""

    path: str
    """Relative to the workspace, posix."""
    status: FileStatus
    added: int
    """Lines added (0 for a binary file)."""
    removed: int
    binary: bool
    text: str
    """The file's whole part of the diff: its headers and hunks."""
    cut: bool = False
    """Only the start of its diff is here (the diff was cut short in it): the counts are of
    what is here."""


def split_patches(diff: str) -> tuple[list[FilePatch], bool]:
    """The diff's files in order, and whether the diff was cut short (the store's note
    dropped). In a diff without `diff --git` lines, a file starts at a `--- `, `+++ ` pair."""
    parts, cut = _parts(diff)
    patches = [_patch(part) for part in parts if part]
    if cut is not None and patches:
        patches[-1] = replace(patches[-1], cut=True)
    return patches, cut is not None


def _parts(diff: str) -> tuple[list[list[str]], str | None]:
    """The diff's lines by file (the first part: any lines before the first file), and the
    store's note when it cut the diff short."""
    parts: list[list[str]] = [[]]
    lines = diff.splitlines()
    cut = lines.pop() if lines and lines[-1].startswith(CUT_NOTE) else None
    git = any(line.startswith("diff --git ") for line in lines)
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else ""
        plain_start = line.startswith("--- ") and following.startswith("+++ ")
        if line.startswith("diff --git ") if git else plain_start:
            parts.append([])
        parts[-1].append(line)
    return parts, cut


def _patch(lines: list[str]) -> FilePatch:
    old = new = ""
    status: FileStatus = "modified"
    binary = False
    added = removed = 0
    in_hunk = False
    for line in lines:
        if in_hunk:
            if line.startswith("+"):
                added += 1
            elif line.startswith("-"):
                removed += 1
            elif line.startswith("diff "):
                break
            continue
        if line.startswith("@@"):
            in_hunk = True
        elif line.startswith("new file mode"):
            status = "added"
        elif line.startswith("deleted file mode"):
            status = "deleted"
        elif line.startswith("--- "):
            old = line[4:]
        elif line.startswith("+++ "):
            new = line[4:]
        elif line.startswith("Binary files ") and line.endswith(" differ"):
            binary = True
            old, new = _binary_sides(line)
    if old == "/dev/null":
        status = "added"
    elif new == "/dev/null":
        status = "deleted"
    path = _path(new if new and new != "/dev/null" else old) or _git_line_path(lines[0])
    return FilePatch(path, status, added, removed, binary, "\n".join(lines))


def _binary_sides(line: str) -> tuple[str, str]:
    rest = line[len("Binary files ") : -len(" differ")]
    if rest.startswith("/dev/null and "):
        return "/dev/null", rest[len("/dev/null and ") :]
    if rest.endswith(" and /dev/null"):
        return rest[: -len(" and /dev/null")], "/dev/null"
    half = (len(rest) - len(" and ")) // 2
    return rest[:half], rest[-half:] if half else ""


def _git_line_path(line: str) -> str:
    """The path of `diff --git a/x b/x` (no renames: both sides name it)."""
    rest = line[len("diff --git ") :] if line.startswith("diff --git ") else ""
    half = (len(rest) - 1) // 2
    return _path(rest[-half:]) if half > 0 else rest


def _path(side: str) -> str:
    """A header's path without its quoting (git's C-style quotes) and `a/` or `b/`."""
    # git ends a name holding a space with a tab; a quoted one ends at its last quote.
    end = side.rfind('"')
    quoted = side.startswith('"') and end > 0
    side = _unquote(side[1:end]) if quoted else side.split("\t", 1)[0]
    if side.startswith(("a/", "b/")):
        return side[2:]
    return "" if side == "/dev/null" else side


def _unquote(text: str) -> str:
    out = bytearray()
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            following = text[index + 1]
            octal = text[index + 1 : index + 4]
            if len(octal) == 3 and all(c in "01234567" for c in octal):
                out.append(int(octal, 8))
                index += 4
                continue
            out.extend(_ESCAPES.get(following, following).encode())
            index += 2
            continue
        out.extend(char.encode())
        index += 1
    return out.decode(errors="replace")


def reverse(diff: str) -> str:
    """The same changes the other way round: what was added is removed, old and new swap.
    Inside each run of changed lines the removed ones come first, as git writes them."""
    parts, cut = _parts(diff)
    out = [line for part in parts for line in _reverse_part(part)]
    if cut is not None:
        out.append(cut)
    return "\n".join(out) + ("\n" if diff.endswith("\n") else "")


def _reverse_part(lines: list[str]) -> list[str]:
    out: list[str] = []
    run_removed: list[str] = []  # lines the reversed diff removes, with their markers
    run_added: list[str] = []
    last: list[str] | None = None
    in_hunk = False
    header_old: str | None = None
    old_mode: str | None = None

    def flush() -> None:
        nonlocal last
        out.extend(run_removed)
        out.extend(run_added)
        run_removed.clear()
        run_added.clear()
        last = None

    for line in lines:
        if in_hunk:
            if line.startswith("+"):
                run_removed.append("-" + line[1:])
                last = run_removed
                continue
            if line.startswith("-"):
                run_added.append("+" + line[1:])
                last = run_added
                continue
            if line.startswith("\\") and last is not None:
                last.append(line)  # "\ No newline at end of file" goes with its line
                continue
            flush()
            out.append(_reverse_hunk(line) if line.startswith("@@") else line)
        elif line.startswith("@@"):
            in_hunk = True
            out.append(_reverse_hunk(line))
        elif line.startswith("new file mode "):
            out.append("deleted" + line[3:])
        elif line.startswith("deleted file mode "):
            out.append("new" + line[len("deleted") :])
        elif line.startswith("old mode "):
            old_mode = line[len("old mode ") :]
        elif line.startswith("new mode ") and old_mode is not None:
            out += [f"old mode {line[len('new mode ') :]}", f"new mode {old_mode}"]
            old_mode = None
        elif line.startswith("index ") and ".." in line:
            ids, _, mode = line[len("index ") :].partition(" ")
            before, _, after = ids.partition("..")
            out.append(f"index {after}..{before}" + (f" {mode}" if mode else ""))
        elif line.startswith("--- "):
            header_old = line[4:]
        elif line.startswith("+++ ") and header_old is not None:
            out += [f"--- {_side(line[4:], 'a/')}", f"+++ {_side(header_old, 'b/')}"]
            header_old = None
        elif line.startswith("Binary files ") and line.endswith(" differ"):
            old, new = _binary_sides(line)
            out.append(f"Binary files {_side(new, 'a/')} and {_side(old, 'b/')} differ")
        else:
            out.append(line)
    flush()
    return out


def _reverse_hunk(line: str) -> str:
    hunk = _HUNK.match(line)
    return f"@@ -{hunk[2]} +{hunk[1]} @@{hunk[3]}" if hunk else line


def _side(side: str, prefix: str) -> str:
    """A header's path given the prefix of the side it moves to (`/dev/null` stays)."""
    quoted = side.startswith('"')
    bare = side[1:] if quoted else side
    if bare.startswith(("a/", "b/")):
        bare = prefix + bare[2:]
    return f'"{bare}' if quoted else bare
