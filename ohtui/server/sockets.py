"""`/sockets/events/{conversation_id}`: the event stream of one conversation (notes §1.4).

Auth comes first: the `X-Session-API-Key` header of the upgrade, or a first frame
`{"type": "auth", "session_api_key": ...}` within 10 s and 4 KiB (a key in the URL is
refused: URLs end up in logs). A bad key closes with 4001, an unknown conversation with 4004, one
subscriber too many with 1013, one working outside the server's roots with 4003, a server
that is stopping with 1001. Then a
`full_state` snapshot, then every new event. A frame from the client holding a user message
is sent with `run: true`; a frame that fails (not JSON text, nested too deep, not a message)
is answered with a `ServerErrorEvent`. Messages larger than the body limit never arrive:
uvicorn closes the socket with 1009.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from datetime import datetime
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.websockets import WebSocket, WebSocketDisconnect

from ohtui.sdk.llm.message import Message
from ohtui.sdk.wire.events_out import event_to_wire
from ohtui.server.auth import HEADER, KeyChecker
from ohtui.server.errors import StoppingError
from ohtui.server.event_search import wants_ohtui_fields
from ohtui.server.hub import Hub
from ohtui.server.limits import JSONBodyError, parse_json
from ohtui.server.registry import Registry
from ohtui.server.requests import message_from_wire
from ohtui.server.roots import OutsideRootsError

logger = logging.getLogger(__name__)

AUTH_TIMEOUT_SECONDS = 10.0
AUTH_FAILED = 4001
FORBIDDEN = 4003
NOT_FOUND = 4004
TRY_AGAIN_LATER = 1013
GOING_AWAY = 1001
MAX_AUTH_FRAME = 4096
"""The longest auth frame read (characters); an auth frame holds a key of tens."""


class EventSocket:
    """The WebSocket endpoint, bound to the registry, hub and key."""

    def __init__(self, registry: Registry, hub: Hub, keys: KeyChecker) -> None:
        self.registry = registry
        self.hub = hub
        self.keys = keys

    async def handle(self, websocket: WebSocket) -> None:
        """Serve one socket until either side closes it."""
        await websocket.accept()
        if not await self._authenticate(websocket):
            await websocket.close(AUTH_FAILED, "Authentication failed")
            return
        try:
            conversation_id = uuid.UUID(websocket.path_params["conversation_id"])
        except ValueError:
            await websocket.close(NOT_FOUND, "Conversation not found")
            return
        try:
            served = await run_in_threadpool(self.registry.get, conversation_id)
        except OutsideRootsError:
            await websocket.close(FORBIDDEN, "The conversation works outside the server's roots")
            return
        except StoppingError as exc:
            await websocket.close(GOING_AWAY, str(exc))
            return
        if served is None:
            await websocket.close(NOT_FOUND, "Conversation not found")
            return
        ours = wants_ohtui_fields(websocket.query_params)
        subscription = self.hub.subscribe(conversation_id, ours)
        if subscription is None:
            await websocket.close(TRY_AGAIN_LATER, "Too many subscribers")
            return
        try:
            await websocket.send_text(json.dumps(await run_in_threadpool(served.full_state_frame)))
            if websocket.query_params.get("resend_mode") == "all":
                history = await run_in_threadpool(_history, served.live.state.events, ours)
                for frame in history:
                    await websocket.send_text(json.dumps(frame))
            sender = asyncio.create_task(_forward(websocket, subscription.queue))
            try:
                await self._receive(websocket, conversation_id)
            finally:
                sender.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await sender
        except WebSocketDisconnect:
            pass
        finally:
            self.hub.unsubscribe(subscription)

    async def _authenticate(self, websocket: WebSocket) -> bool:
        if await self.keys.admits(websocket.scope, websocket.headers.get(HEADER)):
            return True
        try:
            text = await asyncio.wait_for(_receive_text(websocket), AUTH_TIMEOUT_SECONDS)
            if len(text) > MAX_AUTH_FRAME:
                return False  # not parsed: it is on the event loop, from anyone
            frame = parse_json(text)
        except (TimeoutError, ValueError, WebSocketDisconnect):
            return False
        return (
            isinstance(frame, dict)
            and frame.get("type") == "auth"
            and isinstance(frame.get("session_api_key"), str)
            and self.keys.accepts(frame["session_api_key"])
        )

    async def _receive(self, websocket: WebSocket, conversation_id: uuid.UUID) -> None:
        """Send each message frame to the conversation served now (looked up per frame: a
        switched LLM reopens it as another object)."""
        while True:
            received = await websocket.receive()
            if received["type"] == "websocket.disconnect":
                raise WebSocketDisconnect(received.get("code", 1000), received.get("reason"))
            try:
                text = _text_of(received)
                frame = await run_in_threadpool(parse_json, text)
                if isinstance(frame, dict) and frame.get("type") == "auth":
                    continue  # a second auth frame is harmless
                message, _ = message_from_wire(frame)
                await run_in_threadpool(self._send, conversation_id, message)
            except Exception as exc:  # noqa: BLE001 -- told to the client, not fatal
                await websocket.send_text(json.dumps(_server_error(exc)))

    def _send(self, conversation_id: uuid.UUID, message: Message) -> None:
        served = self.registry.get(conversation_id)
        if served is None:
            raise LookupError(f"conversation {conversation_id.hex} is no longer saved")
        served.send_message(message, True)


async def _receive_text(websocket: WebSocket) -> str:
    """The next text frame; JSONBodyError for a binary one, WebSocketDisconnect at the end."""
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000), message.get("reason"))
    return _text_of(message)


def _text_of(message: Any) -> str:
    """A received frame's text; JSONBodyError for a binary frame."""
    text = message.get("text")
    if text is None:
        raise JSONBodyError("ohtui serve reads JSON in text frames, not binary ones")
    return str(text)


async def _forward(websocket: WebSocket, queue: asyncio.Queue[str]) -> None:
    while True:
        await websocket.send_text(await queue.get())


def _history(events: Any, ohtui_fields: bool) -> list[dict[str, Any]]:
    frames = (event_to_wire(event, ohtui_fields=ohtui_fields) for event in events)
    return [frame for frame in frames if frame is not None]


def _server_error(exc: Exception) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "timestamp": datetime.now().isoformat(),
        "source": "environment",
        "code": type(exc).__name__,
        "detail": str(exc),
        "kind": "ServerErrorEvent",
    }
