"""The checkpoint records, the error, and how a checkpoint is written in its commit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

HEADER = "ohtui-checkpoint"
MAX_LABEL = 2000


class CheckpointUnavailable(Exception):  # noqa: N818 (the name other code is written to)
    """A checkpoint cannot be taken or restored; str(exc) says why and what to do."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The workspace's tracked files as they were at one moment."""

    id: str
    """The shadow commit's sha (full hex)."""
    created_at: float
    """Unix time."""
    label: str
    """What it was taken before, e.g. "before: rm -f src/*"."""
    files: int
    """How many files it tracks."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file that differs between two states of the workspace."""

    path: str
    """Relative to the workspace, posix."""
    status: Literal["added", "modified", "deleted"]
    """Going from the first state to the second."""


def message(created_at: float, files: int, label: str) -> bytes:
    """The commit message that records a checkpoint: a fixed first line, then the label."""
    label = label.replace("\0", "")
    if len(label) > MAX_LABEL:
        label = label[: MAX_LABEL - 1] + "…"
    return f"{HEADER} {created_at!r} {files}\n\n{label}".encode(errors="backslashreplace")


def parse(commit_id: str, text: bytes) -> Checkpoint | None:
    """The checkpoint a commit message records, or None if it is not one of ours."""
    head, _, label = text.decode(errors="replace").partition("\n\n")
    fields = head.split(" ")
    if len(fields) != 3 or fields[0] != HEADER:
        return None
    try:
        return Checkpoint(commit_id, float(fields[1]), label, int(fields[2]))
    except ValueError:
        return None
