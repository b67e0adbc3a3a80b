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
    the last 60% of the character budget stay in memory. What is shown is cut at line
    boundaries (a model reading a half line takes it for a whole one); only a single line
    longer than its share is cut inside it.
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
        self._last_char = ""
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
            head, tail = self._whole_lines()
            marker = self._marker(path, head, tail)
            shown, truncated = mask(head, False, True) + marker + mask(tail, True, False), True
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
        self._last_char = text[-1]
        if not self._spilling:
            self._text.append(text)
            return
        # One character more than each share: it tells whether the cut falls on a line end.
        if len(self._head) <= self._head_chars:
            self._head += text[: self._head_chars + 1 - len(self._head)]
        self._tail = (self._tail + text)[-(self._tail_chars + 1) :]

    def _start_spilling(self) -> None:
        self._spilling = True
        whole = "".join(self._text)
        self._binary = self._binary or self._looks_binary(whole)
        self._head = whole[: self._head_chars + 1]
        self._tail = whole[-(self._tail_chars + 1) :]
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

    def _whole_lines(self) -> tuple[str, str]:
        """The head and the tail to show, each cut at a line boundary within its share."""
        head = self._head
        if len(head) > self._head_chars:
            end = head.rfind("\n", 0, self._head_chars + 1)
            head = head[: end + 1] if end >= 0 else head[: self._head_chars]
        tail = self._tail
        if len(tail) > self._tail_chars:
            start = tail.find("\n", 0, len(tail) - 1)
            tail = tail[start + 1 :] if start >= 0 else tail[1:]
        return head, tail

    def _marker(self, path: str | None, head: str, tail: str) -> str:
        """Where the output was cut: which lines are left out, and where they are."""
        omitted_chars = self._total_chars - len(head) - len(tail)
        lines = self._total_lines + (1 if self._last_char not in ("", "\n") else 0)
        first = head.count("\n") + 1
        last = lines - tail.count("\n") - (0 if tail.endswith("\n") or not tail else 1)
        whole = head.endswith("\n") and (not tail or self._starts_a_line(tail))
        if whole and last >= first:
            count = last - first + 1
            span = f"line {first:,}" if count == 1 else f"lines {first:,}-{last:,}"
            left_out = (
                f"{span} of {lines:,} left out ({count:,} line{'s' if count != 1 else ''}, "
                f"{omitted_chars:,} characters)"
            )
            read = f"sed -n '{first},{last}p'"
        else:  # a line longer than the budget was cut inside it
            left_out = f"{omitted_chars:,} characters left out, from inside a very long line"
            read = "sed -n, cut -c"
        if path is not None:
            where = f"the full output ({format_size(self._total_bytes)}) is saved in {path}"
            if self._saved_bytes < self._total_bytes:
                where += (
                    f" (only its first {format_size(self._saved_bytes)}: "
                    f"{self._total_bytes - self._saved_bytes:,} bytes more were discarded)"
                )
            where += f"; read parts of it with {read}, grep, head or tail"
        else:
            where = f"the full output could not be saved: {self._save_error}"
        lead = "" if head.endswith("\n") or not head else "\n"
        trail = "" if tail.startswith("\n") else "\n"
        return f"{lead}[... {left_out}; {where} ...]{trail}"

    def _starts_a_line(self, tail: str) -> bool:
        """Whether the shown tail begins at a line start (it was cut after a newline)."""
        return len(self._tail) > len(tail) and self._tail[-len(tail) - 1] == "\n"


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
