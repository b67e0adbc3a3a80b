"""Reading a small file that a workspace (or anyone) may have put in place: it may be a FIFO
that blocks until a writer comes, a device or a link to one that never ends, or gigabytes.

Opened without blocking and checked on its descriptor (so a file swapped in after a check
cannot slip through), read up to a limit. Standard library only: both the settings and the
TUI's file index (on its thread) read through it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class UnusableFileError(OSError):
    """The file is no regular file, or is larger than the limit (the message ends the
    sentence "<path> ...")."""


def read_small(path: Path, limit: int, *, follow: bool = True) -> bytes:
    """The bytes of the regular file at `path`, of at most `limit` bytes (a whole number of
    MiB); without `follow`, a symbolic link is refused (OSError) as git refuses one in place
    of a .gitignore. UnusableFileError for what is no small regular file."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as stream:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnusableFileError("is not a regular file")
        raw = stream.read(limit + 1)
    if len(raw) > limit:
        raise UnusableFileError(f"is larger than {limit // (1 << 20)} MiB")
    return raw
