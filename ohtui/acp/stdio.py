"""The protocol's wire: newline-delimited JSON-RPC 2.0 on stdin and stdout.

`protect_stdout` keeps stdout for protocol messages alone: the protocol gets its own copy of
the descriptor, and descriptor 1 (and `sys.stdout`) then point at stderr, so a stray print,
a library's warning or a child that inherits the descriptor never corrupts the stream.

`StdioTransport` is the agent-client-protocol package's message `Transport` (send, receive,
close of decoded messages), written here rather than taken from the package for two
reasons: its own reader logs a line that is not JSON and answers nothing, while JSON-RPC asks
for an error response (-32700, -32600) naming what was wrong; and it is built before the
package is imported (about a second of pydantic models), so `initialize` can be answered at
once (see `serve`). Standard library only, asyncio not even imported until `attach`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import sys
import threading
import time
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 50 * 1024 * 1024
"""The longest message read (an image in a prompt fits); a longer line is refused whole."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

Message = dict[str, Any]


class Empty:
    """Nothing came in time (see `StdioTransport.next`)."""


EMPTY = Empty()


def protect_stdout() -> IO[bytes]:
    """The protocol's output stream (a copy of stdout); stdout itself now goes to stderr."""
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


def error_response(request_id: Any, code: int, message: str, details: str) -> Message:
    """A JSON-RPC error response (`request_id` None: the request's id could not be read)."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": code, "message": message, "data": {"details": details}},
    }


def check_message(message: object) -> str | None:
    """Why `message` is not a JSON-RPC 2.0 request, notification or response (None: it is)."""
    if not isinstance(message, dict):
        kind = (
            "an array (batches are not used by the protocol)"
            if isinstance(message, list)
            else (f"a JSON {type(message).__name__}")
        )
        return f"a message must be a JSON object, not {kind}"
    if message.get("jsonrpc") != "2.0":
        return 'a message must say "jsonrpc": "2.0"'
    request_id = message.get("id")
    if "id" in message and (isinstance(request_id, bool) or not isinstance(request_id, int | str)):
        return '"id" must be a number or a string'
    method = message.get("method")
    if "method" in message:
        if not isinstance(method, str) or not method:
            return '"method" must be a non-empty string'
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return '"params" must be an object'
        return None
    if "id" not in message:
        return 'a message needs "method" (a request or notification) or "id" (a response)'
    if "result" not in message and "error" not in message:
        return 'a response needs "result" or "error"'
    return None


class _Reply:
    """An error response the reader made, to be written in turn."""

    def __init__(self, message: Message) -> None:
        self.message = message


class StdioTransport:
    """Decoded JSON-RPC messages from a byte stream, and to another.

    A thread reads the input line by line; a line that is not JSON, or not a JSON-RPC
    message, is answered with an error response (in turn) and skipped. Until `attach`,
    messages are taken with `next` (no asyncio: it is not imported yet); after it, with
    `receive` on the loop. The input's end is None.
    """

    def __init__(self, source: IO[bytes], sink: IO[bytes]) -> None:
        self._source = source
        self._sink = sink
        self._write_lock = threading.Lock()
        self._deliver_lock = threading.Lock()
        self._early: queue.SimpleQueue[Message | _Reply | None] = queue.SimpleQueue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inbox: asyncio.Queue[Message | _Reply | None] | None = None
        self._held: list[Message | None] = []
        self._closed = False

    def start(self) -> None:
        """Start reading."""
        threading.Thread(target=self._read, name="acp-stdin", daemon=True).start()

    def next(self, timeout: float) -> Message | Empty | None:
        """Before `attach`: the next message (None: the input ended), or EMPTY after
        `timeout` seconds. Error responses for malformed lines are written on the way."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                item = self._early.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return EMPTY
            if not isinstance(item, _Reply):
                return item
            self.write(item.message)

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """From now on, hand messages to `loop` (`receive`)."""
        import asyncio

        inbox: asyncio.Queue[Message | _Reply | None] = asyncio.Queue()
        with self._deliver_lock:
            while True:
                try:
                    inbox.put_nowait(self._early.get_nowait())
                except queue.Empty:
                    break
            self._loop, self._inbox = loop, inbox

    async def send(self, message: Message) -> None:
        """Write one message as one line."""
        self.write(message)

    def write(self, message: Message) -> None:
        """Write one message as one line, from any thread."""
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        with self._write_lock:
            if self._closed:
                return
            try:
                self._sink.write(data + b"\n")
                self._sink.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                logger.info("the client stopped reading: %s", exc)

    async def receive(self) -> Message | None:
        """The next message; None at the input's end (after `attach`)."""
        if self._held:
            return self._held.pop(0)
        assert self._inbox is not None, "attach() first"
        while True:
            item = await self._inbox.get()
            if not isinstance(item, _Reply):
                return item
            self.write(item.message)  # answered in turn, after what came before it

    def hold(self, messages: list[Message | None]) -> None:
        """Give messages back: `receive` returns them first, in order."""
        self._held = [*messages, *self._held]

    async def close(self) -> None:
        """Stop writing (the output stays open: the process ends soon after)."""
        with self._write_lock:
            self._closed = True

    # --- the reader thread -------------------------------------------------------------

    def _read(self) -> None:
        try:
            while True:
                line = self._source.readline(MAX_MESSAGE_BYTES + 1)
                if not line:
                    break
                if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
                    self._skip_rest_of_line()
                    self._answer(
                        None,
                        INVALID_REQUEST,
                        "Invalid request",
                        f"a message longer than {MAX_MESSAGE_BYTES} bytes was skipped",
                    )
                    continue
                self._take(line)
        except (OSError, ValueError) as exc:  # the input closed under us
            logger.info("reading stdin stopped: %s", exc)
        finally:
            self._deliver(None)

    def _skip_rest_of_line(self) -> None:
        while True:
            rest = self._source.readline(MAX_MESSAGE_BYTES)
            if not rest or rest.endswith(b"\n"):
                return

    def _take(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except ValueError as exc:  # not JSON, or not UTF-8
            self._answer(None, PARSE_ERROR, "Parse error", f"the line is not JSON: {exc}")
            return
        problem = check_message(message)
        if problem is not None:
            request_id = message.get("id") if isinstance(message, dict) else None
            if isinstance(request_id, bool) or not isinstance(request_id, int | str):
                request_id = None
            self._answer(request_id, INVALID_REQUEST, "Invalid request", problem)
            return
        if "method" in message and message.get("params") is None:
            message.pop("params", None)
        self._deliver(message)

    def _answer(self, request_id: Any, code: int, text: str, details: str) -> None:
        logger.warning("malformed message from the client: %s", details)
        self._deliver(_Reply(error_response(request_id, code, text, details)))

    def _deliver(self, message: Message | _Reply | None) -> None:
        with self._deliver_lock:
            loop, inbox = self._loop, self._inbox
            if loop is None or inbox is None:
                self._early.put(message)
                return
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody reads any more
            loop.call_soon_threadsafe(inbox.put_nowait, message)
