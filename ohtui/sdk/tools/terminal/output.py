"""OutputCapture: a command's output kept as head and tail, the whole of it spilled to disk."""

from __future__ import annotations

import codecs
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

MAX_FILE_BYTES = 50 * 1024 * 1024
HEAD_SHARE = 0.4
# Control characters other than these make text look binary.
_TEXT_CONTROLS = frozenset("\n\r\t\f\b\x1b")
_BINARY_SAMPLE_CHARS = 8192
_BINARY_RATIO = 0.3


@dataclass(frozen=True)
class CapturedOutput:
    """What a command printed, ready to show the model."""

    text: str
    """The text to show: all of it, or head + marker + tail; empty for binary output."""
    total_bytes: int
    total_chars: int
    truncated: bool
    binary: bool
    full_output_path: str | None
    """The file holding the whole raw output, when it was saved."""
    saved_bytes: int
    """How many bytes the file holds (less than total_bytes past the size cap)."""
    save_error: str | None


FragmentMask = Callable[[str, bool, bool], str]
"""(text, cut before it, cut after it) -> the text with secrets hidden."""


def _no_mask(text: str, cut_before: bool, cut_after: bool) -> str:
    return text


class OutputCapture:
    """Receives a command's raw output in chunks, with bounded memory.

    Up to `max_chars` characters are kept whole. Past that (or once NUL bytes show the output
    is binary) every byte is streamed to a file from `open_file`, and only the first 40% and
    the last 60% of the character budget stay in memory.
    """

    def __init__(
        self,
        max_chars: int,
        open_file: Callable[[bool], tuple[Path, BinaryIO]],
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        self._max_chars = max(max_chars, 100)
        self._head_chars = int(self._max_chars * HEAD_SHARE)
        self._tail_chars = self._max_chars - self._head_chars
        self._open_file = open_file
        self._max_file_bytes = max_file_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending_cr = False
        self._raw = bytearray()  # all bytes, until spilling starts
        self._text: list[str] = []  # all text, until spilling starts
        self._head = ""
        self._tail = ""
        self._total_bytes = 0
        self._total_chars = 0
        self._total_lines = 0
        self._binary = False
        self._spilling = False
        self._file: BinaryIO | None = None
        self._path: Path | None = None
        self._saved_bytes = 0
        self._save_error: str | None = None

    def feed(self, chunk: bytes) -> None:
        """Take the next chunk of raw output."""
        if not chunk:
            return
        self._total_bytes += len(chunk)
        if not self._binary and b"\x00" in chunk:
            self._binary = True
        if self._spilling:
            self._write(chunk)
        else:
            self._raw += chunk
        self._add_text(self._normalise(self._decoder.decode(chunk)))
        if not self._spilling and (self._binary or self._total_chars > self._max_chars):
            self._start_spilling()

    def finish(self, mask: FragmentMask | None = None) -> CapturedOutput:
        """Flush what is buffered and describe the whole output.

        `mask(text, cut_before, cut_after)` hides secrets in the text shown, including the
        parts of one that the head/tail cut would leave at either side of it.
        """
        text = self._decoder.decode(b"", final=True)
        if self._pending_cr:
            self._pending_cr = False
            text = "\r" + text
        self._add_text(text)
        if not self._spilling and (
            self._total_chars > self._max_chars or self._looks_binary("".join(self._text))
        ):
            self._start_spilling()
        if self._file is not None:
            try:
                self._file.close()
            except OSError as exc:
                self._save_error = str(exc)
        path = str(self._path) if self._path is not None and self._save_error is None else None
        if mask is None:
            mask = _no_mask
        if self._binary:
            shown, truncated = "", True
        elif not self._spilling:
            shown, truncated = mask("".join(self._text), False, False), False
        else:
            head, tail = mask(self._head, False, True), mask(self._tail, True, False)
            shown, truncated = head + self._marker(path) + tail, True
        return CapturedOutput(
            text=shown,
            total_bytes=self._total_bytes,
            total_chars=self._total_chars,
            truncated=truncated,
            binary=self._binary,
            full_output_path=path,
            saved_bytes=self._saved_bytes,
            save_error=self._save_error,
        )

    def _normalise(self, text: str) -> str:
        # A '\r' ending a chunk may be half of a '\r\n' split across chunks: hold it back.
        if self._pending_cr:
            text = "\r" + text
            self._pending_cr = False
        if text.endswith("\r"):
            text = text[:-1]
            self._pending_cr = True
        return text.replace("\r\n", "\n")

    def _add_text(self, text: str) -> None:
        if not text:
            return
        self._total_chars += len(text)
        self._total_lines += text.count("\n")
        if not self._spilling:
            self._text.append(text)
            return
        if len(self._head) < self._head_chars:
            self._head += text[: self._head_chars - len(self._head)]
        self._tail = (self._tail + text)[-self._tail_chars :]

    def _start_spilling(self) -> None:
        self._spilling = True
        whole = "".join(self._text)
        self._binary = self._binary or self._looks_binary(whole)
        self._head = whole[: self._head_chars]
        self._tail = whole[-self._tail_chars :]
        self._text = []
        raw, self._raw = bytes(self._raw), bytearray()
        try:
            self._path, self._file = self._open_file(self._binary)
        except OSError as exc:
            self._save_error = str(exc)
            return
        self._write(raw)

    def _write(self, data: bytes) -> None:
        if self._file is None or self._save_error is not None:
            return
        room = self._max_file_bytes - self._saved_bytes
        data = data[: max(room, 0)]
        if not data:
            return
        try:
            self._file.write(data)
        except OSError as exc:
            self._save_error = str(exc)
            return
        self._saved_bytes += len(data)

    def _looks_binary(self, text: str) -> bool:
        sample = text[:_BINARY_SAMPLE_CHARS]
        if not sample:
            return False
        odd = sum(1 for ch in sample if ch == "\ufffd" or (ch < " " and ch not in _TEXT_CONTROLS))
        return odd / len(sample) > _BINARY_RATIO

    def _marker(self, path: str | None) -> str:
        omitted_chars = self._total_chars - len(self._head) - len(self._tail)
        omitted_lines = self._total_lines - self._head.count("\n") - self._tail.count("\n")
        if path is not None:
            where = f"the full output ({format_size(self._total_bytes)}) is in {path}"
            if self._saved_bytes < self._total_bytes:
                where += (
                    f" (only its first {format_size(self._saved_bytes)}: "
                    f"{self._total_bytes - self._saved_bytes:,} bytes more were discarded)"
                )
            where += "; read parts of it with sed -n, grep, head or tail"
        else:
            where = f"the full output could not be saved: {self._save_error}"
        lead = "" if self._head.endswith("\n") or not self._head else "\n"
        trail = "" if self._tail.startswith("\n") else "\n"
        return (
            f"{lead}[... {omitted_chars:,} characters ({max(omitted_lines, 0):,} lines) omitted; "
            f"{where} ...]{trail}"
        )


def format_size(size: int) -> str:
    """A byte count for people: 512 B, 3.4 KB, 12.0 MB."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def output_file_name(counter: int, binary: bool) -> str:
    """`terminal-<timestamp>-<n>.txt` (or `.bin`), unique per executor."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return f"terminal-{stamp}-{counter}.{'bin' if binary else 'txt'}"
