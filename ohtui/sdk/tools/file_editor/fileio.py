"""Reading and writing text files for the editor: refuse binaries, keep line endings."""

from __future__ import annotations

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
    return (
        f"The path {path} does not exist. Check the spelling, or view the directory "
        f"{nearest_existing_parent(path)} to see what is there."
    )


def read_text_file(path: Path) -> TextFile:
    """Read a UTF-8 text file; FileEditorError if it is missing, a directory, binary or too big."""
    if not path.exists():
        raise FileEditorError(missing_path_message(path))
    if path.is_dir():
        raise FileEditorError(
            f"{path} is a directory, not a file. Use view to list it, or pass a file path."
        )
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise FileEditorError(
            f"{path} is {size / 1024 / 1024:.1f} MB, over the editor's "
            f"{MAX_FILE_BYTES // 1024 // 1024} MB limit. Use the terminal to inspect it "
            "(e.g. `head`, `sed -n 100,200p`, `grep -n`)."
        )
    raw = path.read_bytes()
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
