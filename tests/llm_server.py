"""A scripted OpenAI-compatible chat-completions server for tests (standard library only).

Tests talk to LLMs through litellm over real HTTP. Start a :class:`ScriptedLLMServer`
(or use the ``llm_server`` fixture), script the replies it should give, in order, and
point litellm at it::

    llm_server.reply_tool_call("read_file", {"path": "a.txt"})
    llm_server.reply_text("Done.")
    litellm.completion(
        model="openai/test-model",
        api_base=llm_server.base_url,
        api_key="sk-test",
        messages=[...],
        max_retries=0,  # the openai SDK retries 408/409/429/5xx/timeouts twice by default
    )

Each chat-completions request consumes one scripted reply. When the script is empty the
default reply (:meth:`ScriptedLLMServer.set_default`) is used; without one the server
answers HTTP 400 "scripted LLM server: no reply left for request #N" (with
``x-should-retry: false``) so a test that forgot a reply fails loudly and at once. A reply
function that raises gives HTTP 500 "scripted LLM server: reply function failed ...",
also with ``x-should-retry: false``.

litellm puts the real response headers of an error (e.g. ``retry-after``) in the
exception's ``litellm_response_headers``; its ``response`` attribute is a stand-in.

Error replies are mapped by litellm's OpenAI exception mapping:

====================================================  ====================================
script                                                litellm raises
====================================================  ====================================
``reply_error(400)``                                  ``BadRequestError``
``reply_context_window_error()``                      ``ContextWindowExceededError``
``reply_error(401)``                                  ``AuthenticationError``
``reply_error(404)``                                  ``NotFoundError``
``reply_error(429, headers={"Retry-After": "3"})``    ``RateLimitError``
``reply_error(500)``                                  ``InternalServerError``
``reply_error(502)``                                  ``BadGatewayError``
``reply_error(503)``                                  ``ServiceUnavailableError``
====================================================  ====================================

A context-window error is a 400 whose message contains "This model's maximum context
length is" (see :data:`CONTEXT_WINDOW_MESSAGE`); litellm matches that text, not the code.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "CONTEXT_WINDOW_MESSAGE",
    "MODEL_NAME",
    "Reply",
    "ReplySource",
    "ScriptedLLMServer",
    "ToolCall",
]

MODEL_NAME = "test-model"
"""The one model listed by ``GET /v1/models``; use ``"openai/test-model"`` with litellm."""

CONTEXT_WINDOW_MESSAGE = (
    "This model's maximum context length is {limit} tokens. "
    "However, your messages resulted in {used} tokens. "
    "Please reduce the length of the messages."
)
"""OpenAI's context-length error text (format with ``limit`` and ``used``)."""

_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    408: "timeout",
    409: "conflict",
    422: "invalid_request_error",
    429: "rate_limit_error",
}
"""OpenAI-style ``error.type`` per status (5xx and anything else: ``server_error``).

Only 4xx "invalid request" statuses may use ``invalid_request_error``: litellm maps any
error whose text contains that string to ``BadRequestError``, whatever the status.
"""


THINK_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "think",
            "description": "Think.",
            "parameters": {"type": "object", "properties": {"thought": {"type": "string"}}},
        },
    }
]
"""A request's `tools`: the one `think` tool the scripted calls below are made to."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call the model makes; ``arguments`` is the raw JSON string sent."""

    name: str
    arguments: str
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """One scripted answer: an assistant message, or an HTTP error when ``error_status`` is set.

    ``usage`` overrides (and is merged into) the estimated usage; it may contain
    ``prompt_tokens_details: {"cached_tokens": n}`` and
    ``completion_tokens_details: {"reasoning_tokens": n}``. ``chunks`` fixes how the
    text is split when streamed (it must join to ``text``); by default it is split per
    word. ``delay`` is slept before answering, ``chunk_delay`` between streamed chunks.
    ``finish_reason`` overrides the computed one ("tool_calls" or "stop"), e.g. "length".
    """

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None
    error_status: int | None = None
    error_message: str | None = None
    error_code: str | None = None
    error_headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    chunk_delay: float = 0.0
    chunks: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        """Check that explicit stream chunks reassemble the text exactly."""
        if self.chunks is not None and "".join(self.chunks) != (self.text or ""):
            raise ValueError("Reply.chunks must join to exactly Reply.text")


ReplySource = Reply | Callable[[dict[str, Any]], Reply]
"""A scripted reply, or a function computing one from the request's JSON body."""


class _HTTPServer(ThreadingHTTPServer):
    """The HTTP server; owns a back-reference to its :class:`ScriptedLLMServer`."""

    daemon_threads = True
    block_on_close = False  # idle keep-alive connections must not block close()
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], owner: ScriptedLLMServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)


class ScriptedLLMServer:
    """An OpenAI-compatible server on 127.0.0.1 that answers with scripted replies, in order.

    Routes: ``POST /v1/chat/completions`` and ``POST /chat/completions`` (streaming when the
    body has ``"stream": true``), ``POST /v1/responses`` (and ``/responses``: OpenAI's
    Responses API, not streamed; the same script answers it), ``POST /v1/messages``
    (Anthropic's Messages API, streaming when asked: give litellm the base URL without
    ``/v1`` for ``anthropic/…`` models), ``GET /v1/models`` (and
    ``/models``); anything else is a 404 with an OpenAI error body. The server starts
    serving on construction; call :meth:`close` (or use it as a context manager) to stop it.
    """

    base_url: str
    """The OpenAI base URL to give litellm as ``api_base``: ``http://127.0.0.1:<port>/v1``."""
    requests: list[dict[str, Any]]
    """JSON bodies of the chat-completions and Responses requests received, in arrival order
    (a Responses body has ``input`` where a chat one has ``messages``)."""
    request_headers: list[dict[str, str]]
    """Headers of those requests (names lower-cased), parallel to :attr:`requests`."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Bind to ``host:port`` (port 0: any free port) and start serving in a thread."""
        self._lock = threading.Lock()
        self._script: deque[ReplySource] = deque()
        self._default: ReplySource | None = None
        self._request_count = 0
        self._connections: set[socket.socket] = set()
        self._closing = threading.Event()
        self.requests = []
        self.sent_chunks: list[tuple[float, str]] = []
        """(time.monotonic(), text) of every streamed content chunk, when it was flushed."""
        self.request_headers = []
        self.request_times: list[tuple[float, float]] = []
        """(time.monotonic() when a POST's headers were read, when its answer was sent), for
        the chat-completions and Responses requests, in arrival order."""
        self._httpd = _HTTPServer((host, port), self)
        self.port: int = self._httpd.server_address[1]
        self.base_url = f"http://{host}:{self.port}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"scripted-llm-{self.port}",
            daemon=True,
        )
        self._thread.start()

    # ----------------------------------------------------------------- scripting

    def reply(self, reply: ReplySource) -> None:
        """Append a ready-made :class:`Reply` (or a function of the request body) to the script."""
        with self._lock:
            self._script.append(reply)

    def reply_text(
        self,
        text: str,
        *,
        reasoning: str | None = None,
        usage: dict[str, Any] | None = None,
        delay: float = 0.0,
        chunk_delay: float = 0.0,
        chunks: list[str] | None = None,
        finish_reason: str | None = None,
    ) -> None:
        """Script a plain assistant message (optionally with ``reasoning_content``)."""
        self.reply(
            Reply(
                text=text,
                reasoning=reasoning,
                usage=usage,
                delay=delay,
                chunk_delay=chunk_delay,
                chunks=tuple(chunks) if chunks is not None else None,
                finish_reason=finish_reason,
            )
        )

    def reply_tool_call(
        self,
        name: str,
        arguments: dict[str, Any] | str,
        *,
        text: str | None = None,
        call_id: str | None = None,
        reasoning: str | None = None,
        usage: dict[str, Any] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Script one tool call; a ``str`` ``arguments`` is sent verbatim (may be malformed)."""
        self.reply(
            Reply(
                text=text,
                tool_calls=(ToolCall(name, _arguments_json(arguments), call_id),),
                reasoning=reasoning,
                usage=usage,
                delay=delay,
            )
        )

    def reply_tool_calls(
        self,
        calls: list[tuple[str, dict[str, Any] | str]],
        *,
        text: str | None = None,
        reasoning: str | None = None,
        usage: dict[str, Any] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Script several parallel tool calls ``(name, arguments)`` in one assistant message."""
        self.reply(
            Reply(
                text=text,
                tool_calls=tuple(ToolCall(n, _arguments_json(a)) for n, a in calls),
                reasoning=reasoning,
                usage=usage,
                delay=delay,
            )
        )

    def reply_error(
        self,
        status: int,
        message: str | None = None,
        *,
        code: str | None = None,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Script an HTTP error with body ``{"error": {"message", "type", "code"}}``.

        ``headers`` are added to the response (e.g. ``{"Retry-After": "2"}``). The default
        message is neutral ("scripted HTTP <status> error") so litellm maps by status only.
        """
        self.reply(
            Reply(
                error_status=status,
                error_message=message,
                error_code=code,
                error_headers=dict(headers or {}),
                delay=delay,
            )
        )

    def reply_context_window_error(self, *, limit: int = 8192, used: int = 9000) -> None:
        """Script OpenAI's 400 context-length error (litellm: ContextWindowExceededError)."""
        self.reply_error(
            400,
            CONTEXT_WINDOW_MESSAGE.format(limit=limit, used=used),
            code="context_length_exceeded",
        )

    def reply_with(self, fn: Callable[[dict[str, Any]], Reply]) -> None:
        """Script a reply computed from the request's JSON body when it arrives."""
        self.reply(fn)

    def set_default(self, reply: ReplySource | None) -> None:
        """Set the reply used whenever the script is empty (``None``: fail with HTTP 400)."""
        with self._lock:
            self._default = reply

    def pending(self) -> int:
        """Return how many scripted replies have not been consumed yet."""
        with self._lock:
            return len(self._script)

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Stop serving, drop open connections and release the port (idempotent)."""
        if self._closing.is_set():
            return
        self._closing.set()  # wakes handlers sleeping in a delay
        self._httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLMServer:
        """Return the (already running) server."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the server."""
        self.close()

    def __repr__(self) -> str:
        """Show the address and the number of pending replies."""
        return f"<ScriptedLLMServer {self.base_url} pending={self.pending()}>"

    # ----------------------------------------------------------------- internals

    def _next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Reply]:
        """Record a request and return its 1-based number and the reply to send."""
        with self._lock:
            self.requests.append(body)
            self.request_headers.append(headers)
            self._request_count += 1
            number = self._request_count
            source = self._script.popleft() if self._script else self._default
        if source is None:
            return number, Reply(
                error_status=400,
                error_message=f"scripted LLM server: no reply left for request #{number}",
                error_code="no_reply_left",
                error_headers={"x-should-retry": "false"},
            )
        if isinstance(source, Reply):
            return number, source
        try:
            reply = source(body)
            if not isinstance(reply, Reply):
                raise TypeError(f"returned {type(reply).__name__}, not Reply")
        except Exception as exc:
            return number, Reply(
                error_status=500,
                error_message=(
                    f"scripted LLM server: reply function failed for request #{number}: "
                    f"{type(exc).__name__}: {exc}"
                ),
                error_code="reply_function_failed",
                error_headers={"x-should-retry": "false"},
            )
        return number, reply

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        """Remember (or forget) an open client connection so close() can drop it."""
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _sleep(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; return False if the server is closing."""
        if seconds <= 0:
            return not self._closing.is_set()
        return not self._closing.wait(seconds)


_COMPLETION_ROUTES = (
    "/v1/chat/completions",
    "/chat/completions",
    "/v1/responses",
    "/responses",
    "/v1/messages",
)


class _Handler(BaseHTTPRequestHandler):
    """Request handler: HTTP/1.1 keep-alive, Content-Length or chunked transfer encoding."""

    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    timeout = 60  # an idle keep-alive connection is dropped after this many seconds

    # -- plumbing

    def setup(self) -> None:
        """Register the connection with the owning server."""
        super().setup()
        # Headers and body go out as separate writes: without this the body would wait for
        # the client's delayed ACK (~40 ms), as no real model server makes it wait.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        """Unregister the connection."""
        self.server.owner._track(self.connection, add=False)
        with contextlib.suppress(OSError):
            super().finish()

    def handle(self) -> None:
        """Serve requests until the client goes away, ignoring client disconnects."""
        try:
            super().handle()
        except OSError:  # includes ConnectionError and TimeoutError
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def _path(self) -> str:
        """The request path without query string or trailing slash."""
        return self.path.split("?", 1)[0].rstrip("/")

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        """Send a complete JSON response with Content-Length."""
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_error_body(
        self,
        status: int,
        message: str,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Send an OpenAI-style error body."""
        error = {
            "message": message,
            "type": _ERROR_TYPES.get(status, "server_error"),
            "param": None,
            "code": code,
        }
        self._send_json(status, {"error": error}, headers)

    def _discard_body(self) -> bytes:
        """Read the request body (so keep-alive stays in sync) and return it."""
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    # -- routes

    def do_GET(self) -> None:
        """Serve ``/v1/models``; 404 otherwise."""
        if self._path() in ("/v1/models", "/models"):
            model = {"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "tests"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._not_found()

    def do_POST(self) -> None:
        """Serve chat completions and responses (timed in ``request_times``); 404 otherwise."""
        started = time.monotonic()
        self._post()
        if self._path() in _COMPLETION_ROUTES:
            owner = self.server.owner
            with owner._lock:
                owner.request_times.append((started, time.monotonic()))

    def _post(self) -> None:
        raw = self._discard_body()
        responses = self._path() in ("/v1/responses", "/responses")
        if self._path() not in _COMPLETION_ROUTES:
            self._not_found()
            return
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body is not a JSON object")
        except ValueError as exc:
            self._send_error_body(400, f"scripted LLM server: invalid JSON body: {exc}")
            return
        owner = self.server.owner
        headers = {k.lower(): v for k, v in self.headers.items()}
        number, reply = owner._next_reply(body, headers)
        if not owner._sleep(reply.delay):
            self.close_connection = True
            return
        if reply.error_status is not None:
            self._send_error_body(
                reply.error_status,
                reply.error_message or f"scripted HTTP {reply.error_status} error",
                reply.error_code,
                reply.error_headers,
            )
        elif responses:
            self._send_json(200, _response(number, body, reply))
        elif self._path() == "/v1/messages":
            if body.get("stream"):
                self._stream_messages(number, body, reply)
            else:
                self._send_json(200, _anthropic_message(number, body, reply))
        elif body.get("stream"):
            self._stream(number, body, reply)
        else:
            self._send_json(200, _completion(number, body, reply))

    def do_PUT(self) -> None:
        """No PUT routes: 404."""
        self._discard_body()
        self._not_found()

    def do_PATCH(self) -> None:
        """No PATCH routes: 404."""
        self.do_PUT()

    def do_DELETE(self) -> None:
        """No DELETE routes: 404."""
        self.do_PUT()

    def _not_found(self) -> None:
        """Send a 404 with an OpenAI error body."""
        self._send_error_body(
            404,
            f"scripted LLM server: unknown route {self.command} {self.path}",
            "unknown_url",
        )

    # -- streaming

    def _stream(self, number: int, body: dict[str, Any], reply: Reply) -> None:
        """Send the reply as server-sent events over chunked transfer encoding."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        owner = self.server.owner
        events = _stream_events(number, body, reply)
        for i, event in enumerate(events):
            if i and not owner._sleep(reply.chunk_delay):
                self.close_connection = True
                return
            self._write_chunk(f"data: {json.dumps(event)}\n\n".encode())
            choices = event.get("choices") or [{}]
            content = choices[0].get("delta", {}).get("content")
            if content:
                owner.sent_chunks.append((time.monotonic(), content))
        self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _stream_messages(self, number: int, body: dict[str, Any], reply: Reply) -> None:
        """Send the reply as Anthropic's Messages API streams it (named events)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        owner = self.server.owner
        for i, event in enumerate(_anthropic_events(number, body, reply)):
            if i and not owner._sleep(reply.chunk_delay):
                self.close_connection = True
                return
            self._write_chunk(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            text = event.get("delta", {}).get("text")
            if text:
                owner.sent_chunks.append((time.monotonic(), text))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _write_chunk(self, data: bytes) -> None:
        """Write and flush one HTTP chunk."""
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


# ---------------------------------------------------------------------- payloads


def _arguments_json(arguments: dict[str, Any] | str) -> str:
    """Encode tool-call arguments; strings are passed through untouched."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _call_id(number: int, index: int, call: ToolCall) -> str:
    """The tool call's id: the scripted one, else ``call_<request>_<index>``."""
    return call.id or f"call_{number}_{index}"


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """Estimate usage (~4 characters a token) and merge in the scripted usage."""
    produced = (reply.text or "") + (reply.reasoning or "")
    produced += "".join(call.name + call.arguments for call in reply.tool_calls)
    usage: dict[str, Any] = {
        "prompt_tokens": len(json.dumps(body.get("messages", []))) // 4,
        "completion_tokens": len(produced) // 4 + 1,
    }
    usage.update(reply.usage or {})
    if not reply.usage or "total_tokens" not in reply.usage:
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


def _finish_reason(reply: Reply) -> str:
    """The scripted finish reason, else "tool_calls" or "stop"."""
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def _completion(number: int, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """Build a non-streaming ``chat.completion`` object."""
    content = reply.text if reply.text is not None or reply.tool_calls else ""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": _call_id(number, i, call),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for i, call in enumerate(reply.tool_calls)
        ]
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", MODEL_NAME),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": _finish_reason(reply),
            }
        ],
        "usage": _usage(body, reply),
    }


def _response(number: int, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """Build a Responses-API ``response`` object: reasoning, message and function calls."""
    output: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        output.append(
            {
                "type": "reasoning",
                "id": f"rs_{number}",
                "summary": [{"type": "summary_text", "text": reply.reasoning}],
                "encrypted_content": f"encrypted-reasoning-{number}",
            }
        )
    if reply.text is not None or not reply.tool_calls:
        text = {"type": "output_text", "text": reply.text or "", "annotations": []}
        output.append(
            {
                "type": "message",
                "id": f"msg_{number}",
                "role": "assistant",
                "status": "completed",
                "content": [text],
            }
        )
    for i, call in enumerate(reply.tool_calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{number}_{i}",
                "call_id": _call_id(number, i, call),
                "name": call.name,
                "arguments": call.arguments,
                "status": "completed",
            }
        )
    counts = _usage({"messages": [body.get("instructions"), body.get("input")]}, reply)
    usage = {
        "input_tokens": counts["prompt_tokens"],
        "output_tokens": counts["completion_tokens"],
        "total_tokens": counts["total_tokens"],
        "input_tokens_details": {
            "cached_tokens": counts.get("prompt_tokens_details", {}).get("cached_tokens", 0)
        },
        "output_tokens_details": {
            "reasoning_tokens": counts.get("completion_tokens_details", {}).get(
                "reasoning_tokens", 0
            )
        },
    }
    return {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": body.get("model", MODEL_NAME),
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools", []),
        "usage": usage,
    }


def _split_words(text: str) -> list[str]:
    """Split text into word chunks that keep their whitespace (they join to ``text``)."""
    return [piece for piece in re.split(r"(?<=\s)(?=\S)", text) if piece]


def _split_arguments(arguments: str) -> list[str]:
    """Split an arguments string into up to 3 pieces, like OpenAI streams them."""
    if len(arguments) < 3:
        return [arguments] if arguments else []
    step = -(-len(arguments) // 3)
    return [arguments[i : i + step] for i in range(0, len(arguments), step)]


def _stream_events(number: int, body: dict[str, Any], reply: Reply) -> Iterator[dict[str, Any]]:
    """Yield the ``chat.completion.chunk`` objects of a streamed reply."""
    created = int(time.time())
    model = body.get("model", MODEL_NAME)

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            ],
        }

    yield chunk({"role": "assistant", "content": ""})
    for piece in _split_words(reply.reasoning or ""):
        yield chunk({"reasoning_content": piece})
    pieces = list(reply.chunks) if reply.chunks is not None else _split_words(reply.text or "")
    for piece in pieces:
        if piece:
            yield chunk({"content": piece})
    for index, call in enumerate(reply.tool_calls):
        head = {
            "index": index,
            "id": _call_id(number, index, call),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield chunk({"tool_calls": [head]})
        for piece in _split_arguments(call.arguments):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, _finish_reason(reply))
    stream_options = body.get("stream_options") or {}
    if isinstance(stream_options, dict) and stream_options.get("include_usage"):
        yield {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": _usage(body, reply),
        }


def _anthropic_usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
    usage = _usage(body, reply)
    return {"input_tokens": usage["prompt_tokens"], "output_tokens": usage["completion_tokens"]}


def _anthropic_message(number: int, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """A non-streamed answer of Anthropic's Messages API (``POST /v1/messages``)."""
    content: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        content.append({"type": "thinking", "thinking": reply.reasoning, "signature": "sig"})
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for i, call in enumerate(reply.tool_calls):
        content.append(
            {
                "type": "tool_use",
                "id": _call_id(number, i, call),
                "name": call.name,
                "input": json.loads(call.arguments or "{}"),
            }
        )
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", MODEL_NAME),
        "content": content,
        "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": _anthropic_usage(body, reply),
    }


def _anthropic_events(number: int, body: dict[str, Any], reply: Reply) -> Iterator[dict[str, Any]]:
    """The events of a streamed Messages-API answer: text in words, tool input in pieces."""
    message = _anthropic_message(number, body, reply)
    usage = message["usage"]
    yield {
        "type": "message_start",
        "message": {
            **message,
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1},
        },
    }
    index = 0
    if reply.text:
        yield {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        }
        pieces = list(reply.chunks) if reply.chunks is not None else _split_words(reply.text)
        for piece in pieces:
            delta = {"type": "text_delta", "text": piece}
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
        index += 1
    for i, call in enumerate(reply.tool_calls):
        block = {
            "type": "tool_use",
            "id": _call_id(number, i, call),
            "name": call.name,
            "input": {},
        }
        yield {"type": "content_block_start", "index": index, "content_block": block}
        for piece in _split_arguments(call.arguments):
            delta = {"type": "input_json_delta", "partial_json": piece}
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
        index += 1
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield {
        "type": "message_delta",
        "delta": delta,
        "usage": {"output_tokens": usage["output_tokens"]},
    }
    yield {"type": "message_stop"}
