"""The apply_patch text format (OpenAI's GPT-5 prompting guide), read and applied in memory.

    *** Begin Patch
    *** Add File: path          every following line starts with "+"
    *** Delete File: path
    *** Update File: path
    *** Move to: new/path       (optional) the updated file is written here instead
    @@ some line of the file    (optional) the hunk comes after this line
     context line               " " kept, "-" removed, "+" added
    *** End of File             (optional) the hunk ends at the file's end
    *** End Patch

Reading and computing never touch the disk: `plan_patch` turns the patch and the current
texts into the whole change, which the executor then writes. A hunk's lines are found
exactly first, then ignoring trailing whitespace, then ignoring surrounding whitespace; how
loose a match had to be is counted as "fuzz".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from pydantic import BaseModel, Field

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
END_OF_FILE = "*** End of File"
_FILE_HEADERS = (ADD, DELETE, UPDATE)
_EXACT, _TRAILING, _LOOSE = 0, 1, 100
"""Fuzz of a hunk found exactly, ignoring trailing whitespace, ignoring all outer spaces."""


class DiffError(ValueError):
    """The patch cannot be read or applied; the message says where and why."""


class ActionType(str, Enum):
    """What a patch does to one file."""

    ADD = "add"
    DELETE = "delete"
    UPDATE = "update"


class FileChange(BaseModel):
    """One file's change: its contents before and after (None where there is none)."""

    type: ActionType
    old_content: str | None = None
    new_content: str | None = None
    move_path: str | None = None


class Commit(BaseModel):
    """Every file a patch changes, by the path the patch names."""

    changes: dict[str, FileChange] = Field(default_factory=dict)


@dataclass
class Hunk:
    """One `@@` section of an update: lines kept (" "), removed ("-") and added ("+")."""

    anchor: str | None
    lines: list[tuple[str, str]] = field(default_factory=list)
    at_end: bool = False

    @property
    def old(self) -> list[str]:
        """The lines the file must hold where the hunk applies."""
        return [text for mark, text in self.lines if mark != "+"]

    @property
    def new(self) -> list[str]:
        """What those lines become."""
        return [text for mark, text in self.lines if mark != "-"]


@dataclass
class FileOp:
    """One file section of a patch."""

    type: ActionType
    path: str
    added: list[str] = field(default_factory=list)
    move_to: str | None = None
    hunks: list[Hunk] = field(default_factory=list)


def parse_patch(text: str) -> list[FileOp]:
    """The patch's file sections, in order; DiffError naming the line that is wrong."""
    lines = text.strip().replace("\r\n", "\n").split("\n")
    if not lines or not lines[0].startswith(BEGIN):
        raise DiffError(f"Invalid patch: it must start with '{BEGIN}'.")
    if len(lines) < 2 or lines[-1].strip() != END:
        raise DiffError(f"Invalid patch: it must end with a line '{END}'.")
    ops: list[FileOp] = []
    seen: set[str] = set()
    index = 1
    body_end = len(lines) - 1
    while index < body_end:
        line = lines[index]
        header = next((h for h in _FILE_HEADERS if line.startswith(h)), None)
        if header is None:
            raise DiffError(
                f"Line {index + 1} of the patch is not a file header: {line!r}. Each file "
                f"starts with '{ADD}', '{UPDATE}' or '{DELETE}' and a path."
            )
        path = line[len(header) :].strip()
        if not path:
            raise DiffError(f"Line {index + 1} of the patch names no file: {line!r}.")
        if path in seen:
            raise DiffError(f"The patch changes {path} twice: put all its hunks in one section.")
        seen.add(path)
        index += 1
        if header == ADD:
            op = FileOp(ActionType.ADD, path)
            while index < body_end and not lines[index].startswith(_FILE_HEADERS):
                if not lines[index].startswith("+"):
                    raise DiffError(
                        f"Line {index + 1} of the patch, in the new file {path}, does not "
                        f"start with '+': {lines[index]!r}."
                    )
                op.added.append(lines[index][1:])
                index += 1
        elif header == DELETE:
            op = FileOp(ActionType.DELETE, path)
        else:
            op = FileOp(ActionType.UPDATE, path)
            if index < body_end and lines[index].startswith(MOVE):
                op.move_to = lines[index][len(MOVE) :].strip()
                index += 1
            index = _read_hunks(lines, index, body_end, op)
        ops.append(op)
    if not ops:
        raise DiffError("The patch changes no file.")
    return ops


def _read_hunks(lines: list[str], index: int, end: int, op: FileOp) -> int:
    hunk: Hunk | None = None
    while index < end and not lines[index].startswith(_FILE_HEADERS):
        line = lines[index]
        if line.startswith("@@"):
            hunk = Hunk(anchor=line[2:].strip() or None)
            op.hunks.append(hunk)
        elif line.strip() == END_OF_FILE:
            if hunk is None:
                raise DiffError(
                    f"Line {index + 1}: '{END_OF_FILE}' before any change of {op.path}."
                )
            hunk.at_end = True
        else:
            if hunk is None:  # the first hunk may leave out its "@@"
                hunk = Hunk(anchor=None)
                op.hunks.append(hunk)
            mark, rest = (line[0], line[1:]) if line else (" ", "")
            if mark not in " +-":
                raise DiffError(
                    f"Line {index + 1} of the patch, in {op.path}, starts with neither ' ', "
                    f"'-' nor '+': {line!r}."
                )
            hunk.lines.append((mark, rest))
        index += 1
    if not any(h.lines for h in op.hunks):
        raise DiffError(f"The update of {op.path} changes nothing: it has no hunk lines.")
    return index


def apply_hunks(text: str, op: FileOp) -> tuple[str, int]:
    """The file's new text after the op's hunks, and the fuzz it took; DiffError when a
    hunk's lines are not in the file."""
    lines = text.split("\n")
    cursor = 0
    fuzz = 0
    for number, hunk in enumerate(op.hunks, 1):
        if hunk.anchor is not None:
            found = _find(lines, [hunk.anchor], cursor, at_end=False)
            if found is None:
                raise DiffError(
                    f"Hunk {number} of {op.path} comes after the line {hunk.anchor!r}, which "
                    "is not in the file (after the previous hunk). Read the file again and "
                    "copy the line exactly."
                )
            cursor = found[0] + 1
            fuzz += 1 if found[1] else 0
        old, new = hunk.old, hunk.new
        if not old:
            at = len(lines) if hunk.at_end else cursor
            lines[at:at] = new
            cursor = at + len(new)
            continue
        found = _find(lines, old, cursor, at_end=hunk.at_end)
        if found is None:
            shown = "\n".join(old[:8])
            raise DiffError(
                f"Hunk {number} of {op.path} does not apply: these lines are not in the file"
                f"{' (after the previous hunk)' if cursor else ''}:\n{shown}\n"
                "Read the file again and copy its lines exactly, with enough context."
            )
        at, hunk_fuzz = found
        fuzz += hunk_fuzz
        replacement = _kept_as_in_file(hunk, lines[at : at + len(old)])
        lines[at : at + len(old)] = replacement
        cursor = at + len(replacement)
    return "\n".join(lines), fuzz


def _kept_as_in_file(hunk: Hunk, matched: list[str]) -> list[str]:
    """The hunk's new lines, its context lines as the file has them (a loose match must not
    rewrite the whitespace of lines the patch keeps)."""
    out: list[str] = []
    position = 0
    for mark, text in hunk.lines:
        if mark == "+":
            out.append(text)
            continue
        if mark == " ":
            out.append(matched[position])
        position += 1
    return out


def _find(
    lines: list[str], wanted: list[str], start: int, *, at_end: bool
) -> tuple[int, int] | None:
    """Where `wanted` starts in `lines` at or after `start` (at the end first if `at_end`),
    and how loosely it matched."""
    starts = list(range(start, len(lines) - len(wanted) + 1))
    if at_end:
        last = len(lines) - len(wanted)
        # A file ending in a newline splits into a last, empty line: its end is one earlier.
        preferred = [s for s in (last, last - 1) if s >= start]
        starts = preferred + [s for s in starts if s not in preferred]
    for fuzz, norm in ((_EXACT, _same), (_TRAILING, str.rstrip), (_LOOSE, str.strip)):
        target = [norm(s) for s in wanted]
        for at in starts:
            if [norm(s) for s in lines[at : at + len(wanted)]] == target:
                return at, fuzz
    return None


def _same(text: str) -> str:
    return text


def plan_patch(
    text: str, read: Callable[[str], str], exists: Callable[[str], bool]
) -> tuple[Commit, int]:
    """The whole change a patch makes, computed before anything is written, and its fuzz.

    `read(path)` gives a file's current text, `exists(path)` whether anything is there."""
    commit = Commit()
    fuzz = 0
    for op in parse_patch(text):
        if op.type is ActionType.ADD:
            if exists(op.path):
                raise DiffError(
                    f"Cannot add {op.path}: it already exists. Use '{UPDATE}{op.path}' to "
                    "change it."
                )
            commit.changes[op.path] = FileChange(
                type=ActionType.ADD, new_content="\n".join(op.added)
            )
        elif op.type is ActionType.DELETE:
            commit.changes[op.path] = FileChange(type=ActionType.DELETE, old_content=read(op.path))
        else:
            old = read(op.path)
            new, op_fuzz = apply_hunks(old, op)
            fuzz += op_fuzz
            if op.move_to and op.move_to != op.path and exists(op.move_to):
                raise DiffError(f"Cannot move {op.path} to {op.move_to}: that path exists.")
            commit.changes[op.path] = FileChange(
                type=ActionType.UPDATE,
                old_content=old,
                new_content=new,
                move_path=op.move_to if op.move_to != op.path else None,
            )
    return commit, fuzz
