"""What the editor reads and writes: regular UTF-8 text files only, bounded, with messages that
say why not. Opening them is handles.py's job."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files larger than this are not read: the whole text is held in memory and in the undo stack."""

BINARY_SNIFF_BYTES = 8192
_BOM = "\ufeff"


class FileEditorError(Exception):
    """A command could not run; the message says what was wrong and what to do instead."""


@dataclass(frozen=True)
class TextFile:
    """A file's text with CRLF line endings turned into LF, and how to write it back."""

    raw: bytes
    text: str
    crlf: bool
    bom: bool

    def normalise(self, text: str) -> str:
        """`text` from the model in the same LF form as `self.text`."""
        return text.replace("\r\n", "\n") if self.crlf else text

    def encode(self, text: str) -> bytes:
        """The bytes to write for `text` (LF form), with this file's line endings and BOM."""
        if self.crlf:
            text = text.replace("\n", "\r\n")
        return ((_BOM if self.bom else "") + text).encode("utf-8")


def nearest_existing_parent(path: Path) -> Path:
    """The closest ancestor of `path` that exists, to point the model somewhere useful."""
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent


def missing_path_message(path: Path) -> str:
    """Why `path` cannot be used when it does not exist, and where to look instead."""
    if os.path.islink(path):
        return (
            f"{path} is a symbolic link to {os.readlink(path)}, which does not exist. "
            "Use the link's target path, or fix the link with the terminal."
        )
    return (
        f"The path {path} does not exist. Check the spelling, or view the directory "
        f"{nearest_existing_parent(path)} to see what is there."
    )


_SPECIAL_KINDS = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFSOCK: "a socket",
}


@contextmanager
def explained(path: Path) -> Iterator[None]:
    """Turn a missing path or a symbolic link loop into a FileEditorError that says so."""
    try:
        yield
    except FileNotFoundError:
        raise FileEditorError(missing_path_message(path)) from None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise FileEditorError(
            f"{path} is a symbolic link loop: following its links never reaches a file. "
            "Fix or remove the link with the terminal (`ls -l` shows where it points)."
        ) from None


def check_mode(path: Path, mode: int) -> None:
    """Raise FileEditorError unless `mode` (of what `path` names) is a regular file's."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise FileEditorError(
            f"{path} is a directory, not a file. Use view to list it, or pass a file path."
        )
    kind = _SPECIAL_KINDS.get(stat.S_IFMT(mode), "a special file")
    name = f"{path} (a link to {os.path.realpath(path)})" if os.path.islink(path) else str(path)
    # Reading a device may never end and opening a pipe waits for a writer: never touch them.
    raise FileEditorError(
        f"{name} is {kind}, not a regular file. The editor only reads and writes regular "
        "files; use the terminal if you need to inspect it."
    )


def check_regular(path: Path) -> None:
    """Raise FileEditorError unless `path`, links followed, is an existing regular file."""
    with explained(path):
        mode = os.stat(path).st_mode
    check_mode(path, mode)


def _too_big(path: Path, size: int | None = None) -> FileEditorError:
    measured = f" ({size / 1024 / 1024:.1f} MB)" if size is not None else ""
    return FileEditorError(
        f"{path} is larger than the editor's {MAX_FILE_BYTES // 1024 // 1024} MB "
        f"limit{measured}. Use the terminal to inspect it (e.g. `head`, `sed -n 100,200p`, "
        "`grep -n`)."
    )


def read_all(fd: int, path: Path) -> bytes:
    """The bytes of the regular file open as `fd` (`path`), at most MAX_FILE_BYTES of them."""
    limit = MAX_FILE_BYTES
    size = os.fstat(fd).st_size
    if size > limit:
        raise _too_big(path, size)
    # Read up to the limit, not to st_size: a file can grow, and /proc files report 0.
    chunks: list[bytes] = []
    total = 0
    while chunk := os.read(fd, min(1024 * 1024, limit + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise _too_big(path)
    return b"".join(chunks)


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd`."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def parse_text(raw: bytes, path: Path) -> TextFile:
    """The file `path`'s bytes as UTF-8 text; FileEditorError if they are binary or not UTF-8."""
    if b"\0" in raw[:BINARY_SNIFF_BYTES]:
        raise FileEditorError(
            f"{path} looks like a binary file (it contains NUL bytes); the editor only handles "
            "text. Use the terminal to inspect or convert it."
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileEditorError(
            f"{path} is not valid UTF-8 text (undecodable byte at offset {exc.start}); the "
            "editor only handles UTF-8 text. Use the terminal to inspect or convert it."
        ) from exc
    bom = text.startswith(_BOM)
    if bom:
        text = text[1:]
    # Only a file whose every line ends in CRLF is normalised; a mixed file is edited as-is
    # so that no line's ending changes behind the model's back.
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    if crlf:
        text = text.replace("\r\n", "\n")
    return TextFile(raw=raw, text=text, crlf=crlf, bom=bom)


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their LF; a final newline does not start another line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines
