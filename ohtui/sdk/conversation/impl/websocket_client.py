"""The event socket of a remote conversation: one daemon thread with its own asyncio loop.

It connects to `ws[s]://host/sockets/events/{id}`, authenticates with a first frame (never
in the URL), hands every frame to a callback, and reconnects after any drop with exponential
backoff (1 s doubling to 30 s by default), except after the fatal close codes 4001
(authentication failed) and 4004 (conversation not found). `websockets` is imported on the
reader thread, never by importing this module.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from enum import Enum
from typing import Any

logger = logging.getLogger(__name__)

FATAL_CLOSE_CODES = {4001: "authentication failed", 4004: "conversation not found"}
DEFAULT_BACKOFF_BASE = 1.0
DEFAULT_BACKOFF_MAX = 30.0
STOP_WAIT_SECONDS = 5.0
_POLL_SECONDS = 0.2
STATE_FRAME_KIND = "ConversationStateUpdateEvent"
"""What a server sends first on a new subscription: the conversation's state."""


class SocketStatus(str, Enum):
    """Where the event socket stands."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    STOPPED = "stopped"
    FAILED = "failed"

    @property
    def label(self) -> str:
        """How a status bar says it."""
        return {"reconnecting": "reconnecting…", "failed": "disconnected"}.get(
            self.value, self.value
        )


class WebSocketCallbackClient:
    """Reads a conversation's events from its socket on a daemon thread."""

    def __init__(
        self,
        url: str,
        callback: Callable[[dict[str, Any]], None],
        api_key: str | None = None,
        on_reconnect: Callable[[], None] | None = None,
        on_status: Callable[[SocketStatus, str], None] | None = None,
        backoff_base: float = DEFAULT_BACKOFF_BASE,
        backoff_max: float = DEFAULT_BACKOFF_MAX,
        connect_check: Callable[[], str | None] | None = None,
    ) -> None:
        """`callback` gets each frame as parsed JSON; `on_reconnect` runs after every
        re-subscription (not the first); `on_status` hears each change of connection status
        with a reason; `connect_check`, before each connection, says why not to connect
        (the key is not sent then; it is tried again later)."""
        self.url = url
        self._callback = callback
        self._api_key = api_key
        self._on_reconnect = on_reconnect
        self._on_status = on_status
        self._connect_check = connect_check
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.status = SocketStatus.CONNECTING
        self.close_code: int | None = None
        self.close_reason = ""
        self.connections = 0
        self._stop = threading.Event()
        self._subscribed = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the reader thread (once)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._main, name=f"ohtui-ws {self.url}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = STOP_WAIT_SECONDS) -> None:
        """Close the socket and end the thread (waits up to `timeout`); idempotent."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                logger.warning("event socket thread for %s did not stop in time", self.url)

    def wait_until_ready(self, timeout: float | None = None) -> bool:
        """Wait until the subscription is live: the state snapshot a server sends first was
        handled. True once it was; False when `timeout` passed or the client stopped first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._subscribed.wait(_POLL_SECONDS):
            if self.stopped or (deadline is not None and time.monotonic() >= deadline):
                return self._subscribed.is_set()
        return True

    @property
    def stopped(self) -> bool:
        """Whether the client stopped (asked to, or after a fatal close)."""
        return self.status in (SocketStatus.STOPPED, SocketStatus.FAILED)

    def _set_status(self, status: SocketStatus, reason: str = "") -> None:
        if status is self.status and status is not SocketStatus.RECONNECTING:
            return
        self.status = status
        if self._on_status is not None:
            try:
                self._on_status(status, reason)
            except Exception:  # a listener's bug must not stop the reader
                logger.exception("socket status listener failed")

    def _main(self) -> None:
        import asyncio  # here, on the socket's thread: `import ohtui.sdk` goes without it

        try:
            asyncio.run(self._run())
        except Exception:  # the thread must end quietly; the status says why
            logger.exception("event socket for %s failed", self.url)
            self._set_status(SocketStatus.FAILED, "the event socket failed")

    async def _run(self) -> None:
        import asyncio

        import websockets
        from websockets.exceptions import ConnectionClosed, InvalidStatus

        delay = self.backoff_base
        while not self._stop.is_set():
            reason = self._connect_check() if self._connect_check is not None else None
            if reason:
                logger.warning("event socket %s not connected: %s", self.url, reason)
                self._set_status(SocketStatus.RECONNECTING, reason)
                await self._sleep(delay)
                delay = min(delay * 2, self.backoff_max)
                continue
            try:
                async with websockets.connect(
                    self.url, open_timeout=10, max_size=None, ping_interval=20
                ) as socket:
                    if self._api_key:
                        await socket.send(
                            json.dumps({"type": "auth", "session_api_key": self._api_key})
                        )
                    self.connections += 1
                    if self.connections > 1 and self._on_reconnect is not None:
                        # Before reading on: what was missed comes first, merged by id.
                        await asyncio.to_thread(self._reconnected)
                    self._set_status(SocketStatus.CONNECTED)
                    delay = self.backoff_base
                    await self._read(socket)
                    if self._stop.is_set():
                        break
                    code = socket.close_code
                    self.close_code, self.close_reason = code, socket.close_reason or ""
                    if code in FATAL_CLOSE_CODES:
                        self._set_status(
                            SocketStatus.FAILED,
                            f"the server closed the event socket: {FATAL_CLOSE_CODES[code]}",
                        )
                        return
                    reason = f"closed ({code})"
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd is not None else None
                if code in FATAL_CLOSE_CODES:
                    self.close_code = code
                    self._set_status(
                        SocketStatus.FAILED,
                        f"the server closed the event socket: {FATAL_CLOSE_CODES[code]}",
                    )
                    return
                reason = f"closed ({code})"
            except InvalidStatus as exc:
                reason = f"refused (HTTP {exc.response.status_code})"
            except (OSError, TimeoutError) as exc:
                reason = str(exc) or type(exc).__name__
            except Exception as exc:  # noqa: BLE001  # protocol errors: retry like any drop
                reason = f"{type(exc).__name__}: {exc}"
            if self._stop.is_set():
                break
            logger.info("event socket %s lost (%s); retrying in %.1f s", self.url, reason, delay)
            self._set_status(SocketStatus.RECONNECTING, reason)
            await self._sleep(delay)
            delay = min(delay * 2, self.backoff_max)
        self._set_status(SocketStatus.STOPPED)

    def _reconnected(self) -> None:
        assert self._on_reconnect is not None
        try:
            self._on_reconnect()
        except Exception:  # the socket still delivers; the next reconnect tries again
            logger.exception("re-sync after reconnecting to %s failed", self.url)

    async def _read(self, socket: Any) -> None:
        import asyncio

        from websockets.exceptions import ConnectionClosedOK

        while not self._stop.is_set():
            try:
                raw = await asyncio.wait_for(socket.recv(), _POLL_SECONDS)
            except TimeoutError:
                continue
            except ConnectionClosedOK:
                return
            try:
                frame = json.loads(raw)
            except ValueError:
                logger.warning("dropped a frame that is not JSON from %s", self.url)
                continue
            if not isinstance(frame, dict):
                continue
            try:
                self._callback(frame)
            except Exception:  # a bad frame is logged and dropped, never fatal
                logger.exception("event frame from %s could not be handled", self.url)
            if frame.get("kind") == STATE_FRAME_KIND:
                self._subscribed.set()
        await socket.close()

    async def _sleep(self, seconds: float) -> None:
        import asyncio

        end = asyncio.get_running_loop().time() + seconds
        while not self._stop.is_set():
            left = end - asyncio.get_running_loop().time()
            if left <= 0:
                return
            await asyncio.sleep(min(left, _POLL_SECONDS))
