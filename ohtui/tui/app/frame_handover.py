"""HandoverDriver: Textual's Linux driver, its frames on the terminal before the UI goes on.

Textual draws a frame on the UI thread and queues its text for a writer thread, which writes
it to the terminal. When the UI thread goes straight on to more work (the next layout, the
rest of a screen's first moments), the writer waits for the GIL: the interpreter's switch
interval (5 ms), and again for each piece it writes. The conversation picker's first frame
reached the terminal a median 8.6 ms after it was drawn (0.8 ms with this driver).

After each frame (`flush`, which Textual calls once the frame is queued) the UI thread
waits, with the GIL released, until the writer has written it out, for at most
HANDOVER_WAIT: tens of microseconds on a local terminal. A terminal that takes longer (a
slow link, a full pseudo-terminal) is left to the writer thread, as before.

It uses two of Textual's internals (8.2): LinuxDriver writes through `self._file`, and
its writer thread flushes that file once its queue is empty. tests/tui/test_frame_handover.py
checks both on a real pseudo-terminal.
"""

from __future__ import annotations

import threading
from io import TextIOWrapper
from typing import IO, Any, cast

from textual.drivers.linux_driver import LinuxDriver

HANDOVER_WAIT = 0.002
"""Seconds the UI thread waits at most for a frame to be written out."""


class _Counted:
    """The terminal's file, counting the writes made to it and how many were flushed."""

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        self.writes = 0
        self.flushed = 0
        self.changed = threading.Condition(threading.Lock())

    def write(self, text: str) -> int:
        written = self._file.write(text)
        self.writes += 1  # only the writer thread writes
        return written

    def flush(self) -> None:
        self._file.flush()
        with self.changed:
            self.flushed = self.writes
            self.changed.notify_all()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


class HandoverDriver(LinuxDriver):
    """LinuxDriver that lets its writer thread put each frame out before the UI goes on."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._counted = _Counted(cast(IO[str], self._file))  # sys.__stderr__
        self._file = cast(TextIOWrapper, self._counted)  # what the writer thread writes to
        self._queued = 0
        self._queued_before = 0
        """What had been queued at the previous flush."""
        self._starting = False

    def start_application_mode(self) -> None:
        """Set the terminal up; nothing waits for these sequences (they are not frames, and
        the first frame would wait behind them)."""
        self._starting = True
        try:
            super().start_application_mode()
        finally:
            self._starting = False

    def write(self, data: str) -> None:
        """Queue `data` for the writer thread."""
        self._queued += 1  # only the UI thread queues
        super().write(data)

    def flush(self) -> None:
        """Wait (GIL released) until what was queued is written out, or HANDOVER_WAIT; not
        at all while the writer is behind on earlier frames (a slow terminal: waiting would
        not help). The set-up sequences are no frame: nothing waits for them, and the first
        frame waits for them and itself (a writer not yet run is not a slow terminal)."""
        super().flush()
        if self._starting:
            return
        counted, queued = self._counted, self._queued
        with counted.changed:
            if counted.flushed >= self._queued_before:
                counted.changed.wait_for(lambda: counted.flushed >= queued, HANDOVER_WAIT)
        self._queued_before = queued
