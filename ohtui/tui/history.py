"""The prompt history kept across sessions: a small JSONL store read and written off the UI thread.

Each line of the file is one entry, `{"text": ..., "ts": <unix time>}`, oldest first. The file
only ever grows by appends, so a crash loses at most the line being written; when it grows past
twice the limit it is rewritten (to a temporary file, then renamed over the old one) with the
newest `limit` entries.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One prompt the user sent, with the unix time it was sent."""

    text: str
    ts: float

    def to_json(self) -> str:
        """The entry as one JSON line (without the newline)."""
        return json.dumps({"text": self.text, "ts": self.ts}, ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> HistoryEntry:
        """Parse one line of the file; raises ValueError when the line is not an entry."""
        data = json.loads(line)
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            raise ValueError("not a history entry")
        ts = data.get("ts")
        return cls(data["text"], float(ts) if isinstance(ts, int | float) else 0.0)


class PromptHistory:
    """Prompts sent in earlier sessions and this one, oldest first, saved to a JSONL file.

    `load`, `flush` and `add` do file I/O: call them from a worker thread. `remember` only
    touches memory, so the UI thread can record a prompt at once and save it later with `flush`.
    Every method is thread-safe, and none raises on an I/O error: errors are logged.
    """

    def __init__(self, path: Path, limit: int = 1000) -> None:
        self.path = path
        self.limit = max(1, limit)
        self._lock = threading.Lock()
        """Guards the in-memory lists; held only briefly, never during I/O."""
        self._file_lock = threading.Lock()
        """Serialises file I/O; always taken before `_lock`, never after it."""
        self._entries: list[HistoryEntry] = []
        self._unsaved: list[HistoryEntry] = []
        """Remembered entries not yet written to the file, oldest first."""
        self._file_lines = 0
        self._loaded = False

    @property
    def entries(self) -> list[str]:
        """The texts of the remembered prompts, oldest first (a copy)."""
        with self._lock:
            return [entry.text for entry in self._entries]

    @property
    def loaded(self) -> bool:
        """Whether `load` has run."""
        return self._loaded

    def load(self) -> None:
        """Read the file (blocking I/O), tolerating a missing, unreadable or partly corrupt one."""
        with self._file_lock:
            read = self._read_file()
            with self._lock:
                self._loaded = True
                if read is None:
                    return  # unreadable: keep what this session has in memory
                stored, self._file_lines = read
                # Entries remembered but not yet saved are not in the file: keep them after it.
                self._entries = (stored + self._unsaved)[-self.limit :]
            if self._file_lines > 2 * self.limit:
                self._rewrite_file(stored)

    def remember(self, text: str) -> bool:
        """Record `text` in memory and queue it for `flush`; False when skipped.

        Empty text and an exact repeat of the newest entry are skipped.
        """
        if not text.strip():
            return False
        with self._lock:
            if self._entries and self._entries[-1].text == text:
                return False
            entry = HistoryEntry(text, time.time())
            self._entries.append(entry)
            if len(self._entries) > self.limit:
                del self._entries[: -self.limit]
            self._unsaved.append(entry)
        return True

    def flush(self) -> None:
        """Append the queued entries to the file (blocking I/O); trim it when it grew too big."""
        with self._file_lock:
            with self._lock:
                pending = list(self._unsaved)
            if not pending:
                return
            try:
                self._append_lines([entry.to_json() for entry in pending])
            except OSError:
                logger.exception("Could not save the prompt history to %s", self.path)
                written = 0
            else:
                written = len(pending)
            with self._lock:
                # Only flush removes from the queue, under the file lock, so these are `pending`.
                # After a failed write they stay queued (bounded) for the next flush to retry.
                del self._unsaved[:written]
                del self._unsaved[: -self.limit]
                self._file_lines += written
            if self._file_lines > 2 * self.limit and (read := self._read_file()) is not None:
                self._rewrite_file(read[0])

    def add(self, text: str) -> bool:
        """Record `text` in memory and append it to the file (blocking I/O); False when skipped."""
        added = self.remember(text)
        if added:
            self.flush()
        return added

    def _append_lines(self, lines: list[str]) -> None:
        """Append JSON lines to the file, creating it and its parent directories."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a+b") as file:
            payload = "".join(f"{line}\n" for line in lines).encode("utf-8")
            size = file.seek(0, os.SEEK_END)
            if size:
                file.seek(size - 1)
                if file.read(1) != b"\n":
                    # A crash cut the last line short: start ours on a fresh line, not glued to it.
                    payload = b"\n" + payload
            file.write(payload)

    def _read_file(self) -> tuple[list[HistoryEntry], int] | None:
        """The file's newest `limit` entries, oldest first, and its count of non-empty lines.

        None when the file exists but cannot be read.
        """
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return [], 0
        except OSError:
            logger.exception("Could not read the prompt history %s", self.path)
            return None
        lines = [line for line in raw.split(b"\n") if line.strip()]
        newest_first: list[HistoryEntry] = []
        skipped = 0
        # Parse from the end and stop at the limit: a huge file costs only the entries we keep.
        for line in reversed(lines):
            if len(newest_first) >= self.limit:
                break
            try:
                newest_first.append(HistoryEntry.from_json(line.decode("utf-8")))
            except ValueError:  # UnicodeDecodeError and json.JSONDecodeError are ValueErrors
                skipped += 1
        if skipped:
            logger.warning(
                "Skipped %d unreadable line(s) in the prompt history %s", skipped, self.path
            )
        newest_first.reverse()
        return newest_first, len(lines)

    def _rewrite_file(self, entries: list[HistoryEntry]) -> None:
        """Replace the file with `entries`, atomically; the caller holds the file lock."""
        temp_name: str | None = None
        try:
            with tempfile.NamedTemporaryFile(
                "w",
                encoding="utf-8",
                dir=self.path.parent,
                prefix=f".{self.path.name}.",
                suffix=".tmp",
                delete=False,
            ) as temp:
                temp_name = temp.name
                temp.writelines(f"{entry.to_json()}\n" for entry in entries)
                temp.flush()
                os.fsync(temp.fileno())
            os.replace(temp_name, self.path)
        except OSError:
            logger.exception("Could not trim the prompt history %s", self.path)
            if temp_name is not None:
                Path(temp_name).unlink(missing_ok=True)
            return
        with self._lock:
            self._file_lines = len(entries)
