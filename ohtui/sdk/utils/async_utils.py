"""Async callbacks for a conversation that runs on another thread (the SDK's module path).

A conversation calls its callbacks on the thread running it; code living on an asyncio
loop (a web server, an async script) hands it an `AsyncCallbackWrapper`, which schedules
the coroutine on that loop and returns at once.
"""

from __future__ import annotations

import asyncio
import logging
import threading
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
        self._pending: list[Future[None]] = []
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
        future.add_done_callback(self._log_failure)
        with self._lock:
            self._pending = [f for f in self._pending if not f.done()]  # keep it bounded
            self._pending.append(future)

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
        for future in pending:
            try:
                future.result(timeout=timeout)
            except TimeoutError:
                raise
            except Exception:  # noqa: BLE001 - logged by _log_failure
                pass
