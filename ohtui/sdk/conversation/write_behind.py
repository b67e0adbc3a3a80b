"""WriteBehind: a conversation's appends, committed in order on a background thread.

The engine's thread hands each event over and goes on; the writer commits everything that
waits in one transaction (one disk sync), so a step no longer waits for two syncs and a
burst of events shares one. `flush()` is the barrier for what must be on disk before
anything else happens (an action with effects before it runs, a user's message, the state).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import weakref
from typing import Any

from ohtui.sdk.conversation.store import ConversationStore, StoredEvent

logger = logging.getLogger(__name__)

IDLE_SECONDS = 5.0
"""A writer with nothing to write for this long ends (the next append starts another)."""
EXIT_FLUSH_SECONDS = 10.0
"""How long the interpreter's exit waits for each log's events still being written."""

_live: weakref.WeakSet[WriteBehind] = weakref.WeakSet()


@atexit.register
def _flush_all_at_exit() -> None:
    """A program that ends without closing its conversation still has all its events saved
    (the writer threads are daemons: the exit would cut them short)."""
    for writer in list(_live):
        with contextlib.suppress(Exception):  # logged by the writer; nothing more to do
            writer.flush(EXIT_FLUSH_SECONDS)


class WriteBehind:
    """Commits one conversation's appends in the background, in order, grouped.

    A commit that fails is kept: `put` and `flush` raise it from then on (the events it
    carried stay unwritten), so a failure reaches the engine at its next write at the
    latest. Safe to use from several threads.
    """

    def __init__(self, store: ConversationStore, key: int, written: int) -> None:
        """`written`: how many events the conversation has on disk already."""
        self._store = store
        self._key = key
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        """The writer waits on it for something to write."""
        self._settled_cv = threading.Condition(self._lock)
        """`flush` waits on it for the queue to be written."""
        self._queue: list[StoredEvent] = []
        self._state: tuple[str, dict[str, Any]] | None = None
        self._writing = False
        self._written = written
        self._failure: BaseException | None = None
        self._thread: threading.Thread | None = None
        _live.add(self)

    @property
    def written(self) -> int:
        """How many of the conversation's events are on disk (the rest wait for the writer)."""
        return self._written

    def put(self, event: StoredEvent, state: tuple[str, dict[str, Any]] | None) -> None:
        """Queue `event` (and `state`, saved with it) for the writer; returns at once."""
        with self._lock:
            self._raise_failure()
            self._queue.append(event)
            if state is not None:
                self._state = state
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._write, name="ohtui-event-writer", daemon=True
                )
                self._thread.start()
            self._work.notify()

    def write(self, event: StoredEvent, state: tuple[str, dict[str, Any]] | None) -> int:
        """Put `event` on disk before returning its index: on this thread when nothing waits
        (no hand-over to the writer; the store says the index, whoever else appended), else
        after what waits."""
        with self._lock:
            self._raise_failure()
            if self._queue or self._writing:
                direct = False
            else:
                direct = self._writing = True
        if not direct:
            self.put(event, state)
            self.flush()
            return self._written - 1
        try:
            [index] = self._store.append_many(self._key, [event], state)
        except BaseException:
            self._done_writing()
            raise  # the caller has it now: nothing kept
        self._done_writing(written=index + 1)
        return index

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every event queued so far is on disk; raise the writer's failure, or
        TimeoutError after `timeout` seconds."""
        with self._lock:
            if not self._settled_cv.wait_for(self._settled, timeout):
                raise TimeoutError(
                    f"the conversation's events were not written within {timeout:g} s"
                )
            self._raise_failure()

    def _has_work(self) -> bool:
        return bool(self._queue) and not self._writing  # (a direct write goes first)

    def _settled(self) -> bool:
        return self._failure is not None or not (self._queue or self._writing)

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure.with_traceback(None)

    def _write(self) -> None:
        """The writer thread: commit what waits, group by group, until idle or failed."""
        while True:
            with self._lock:
                if not self._work.wait_for(self._has_work, IDLE_SECONDS):
                    self._thread = None
                    return
                batch, self._queue = self._queue, []
                state, self._state = self._state, None
                self._writing = True
            try:
                indexes = self._store.append_many(self._key, batch, state)
                expected = list(range(self._written, self._written + len(batch)))
                if indexes != expected:  # only this writer appends while the lease is held
                    raise RuntimeError(
                        f"events were saved at {indexes[0]}..{indexes[-1]}, not at "
                        f"{expected[0]}..{expected[-1]}: was the conversation written "
                        "elsewhere?"
                    )
            except BaseException as exc:  # kept, raised to the engine at its next write
                logger.exception("writing %d event(s) failed", len(batch))
                with self._lock:
                    self._queue[:0] = batch
                    self._state = self._state or state
                    self._failure, self._thread = exc, None
                self._done_writing()
                return
            self._done_writing(written=self._written + len(batch))

    def _done_writing(self, written: int | None = None) -> None:
        """A commit ended (`written`: the events on disk now, if it succeeded)."""
        with self._lock:
            if written is not None:
                self._written = written
            self._writing = False
            self._settled_cv.notify_all()
            if self._queue:  # queued while a direct write went on: the writer's turn
                self._work.notify()
