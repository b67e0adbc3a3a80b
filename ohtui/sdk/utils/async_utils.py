"""Async callbacks for a conversation that runs on another thread (the SDK's module path).

A conversation calls its callbacks on the thread running it; code living on an asyncio
loop (a web server, an async script) hands it an `AsyncCallbackWrapper`, which schedules
the coroutine on that loop and returns at once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # utils sits below the events: the type is named, never imported
    from ohtui.sdk.event.base import Event

logger = logging.getLogger(__name__)

AsyncConversationCallback = Callable[["Event"], Coroutine[Any, Any, None]]
"""A coroutine function taking each event."""


class AsyncCallbackWrapper:
    """A synchronous conversation callback running `async_callback(event)` on `loop`.

    Each call schedules the coroutine on the loop (thread-safe) without waiting for it; the
    events reach it in order. While the loop is not running the event cannot be delivered:
    it is dropped, with a warning. A coroutine that raises is logged with its traceback.
    `wait_for_pending` waits for those still scheduled.
    """

    def __init__(
        self, async_callback: AsyncConversationCallback, loop: asyncio.AbstractEventLoop
    ) -> None:
        self.async_callback = async_callback
        self.loop = loop
        self._pending: list[tuple[Future[None], threading.Event]] = []
        """Each coroutine scheduled, and an event set once its outcome has been logged."""
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        if not self.loop.is_running():
            logger.warning(
                "event %s not delivered to %r: its event loop is not running",
                event.id,
                self.async_callback,
            )
            return
        future = asyncio.run_coroutine_threadsafe(self.async_callback(event), self.loop)
        logged = threading.Event()

        def log_failure(done: Future[None]) -> None:
            try:
                self._log_failure(done)
            finally:
                logged.set()

        future.add_done_callback(log_failure)
        with self._lock:
            # Kept bounded: only what has not been logged yet.
            self._pending = [(f, e) for f, e in self._pending if not e.is_set()]
            self._pending.append((future, logged))

    def _log_failure(self, future: Future[None]) -> None:
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:
            logger.error("async callback %r failed", self.async_callback, exc_info=error)

    def wait_for_pending(self, timeout: float | None = None) -> None:
        """Wait until every coroutine scheduled so far has ended (their failures are logged
        already). TimeoutError after `timeout` seconds. Never call it on the loop's own
        thread: the coroutines could not run while it waits."""
        with self._lock:
            pending = list(self._pending)
        deadline = None if timeout is None else time.monotonic() + timeout
        for _, logged in pending:
            # The future's waiters wake before its done-callbacks run: wait for the log.
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not logged.wait(left):
                raise TimeoutError(f"async callbacks still running after {timeout} s")
