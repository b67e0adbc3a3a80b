"""A small in-repo agent server (Starlette + uvicorn on a thread) replaying recorded frames.

The recordings in tests/fixtures/agent_server/ come from the real openhands-agent-server
1.58 (scripts/record-agent-server.py). A run replays a recording's frames after its first
`full_state`: persisted ones join the conversation's history (what `events/search` pages),
all go to the connected sockets. Knobs make the server misbehave the ways a client must
survive: dropped sockets, fatal close codes, a stale snapshot, 409, 404 while polling, a
run that never ends, no first frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import socket as sockets
import threading
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "agent_server"


def recording(name: str) -> dict[str, Any]:
    """A recorded scenario: info_created, info_final, frames, events, rest."""
    return json.loads((FIXTURES / f"{name}.json").read_text())


@dataclass
class FakeConversation:
    """One conversation on the fake server."""

    id: str
    info: dict[str, Any]
    script: list[dict[str, Any]]
    history: list[dict[str, Any]] = field(default_factory=list)
    running: bool = False
    run_posts: int = 0
    position: int = 0
    """Where in the script the next run goes on (each run ends at a full_state)."""


class FakeAgentServer:
    """The fake server; `url` answers once constructed. Use as a context manager."""

    def __init__(self, recording_name: str = "basic_turn", api_key: str | None = "fake-key"):
        self.api_key = api_key
        self.recording = recording(recording_name)
        self.conversations: dict[str, FakeConversation] = {}
        self.requests: list[tuple[str, str, Any]] = []
        """(method, path, JSON body or None) of every REST request, in order."""
        self.first_frames: list[Any] = []
        self.socket_urls: list[str] = []
        self.capabilities: list[str] = []
        # Misbehaviour knobs.
        self.frame_delay = 0.01
        self.close_code: int | None = None  # close every new socket with this code
        self.send_first_frame = True
        self.stale_snapshot_on_run = False
        self.poll_404_after_run = False
        self.never_end = False
        self.drop_after_frames: int | None = None  # drop sockets after this many run frames
        self.omit_id_on_create = False
        self.final_status_override: str | None = None
        self._sockets: set[WebSocket] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        # Bound here and handed over: a port only picked and bound later can be taken by
        # another test process meanwhile.
        listener = sockets.socket()
        listener.bind(("127.0.0.1", 0))
        self.port = listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(self._app(), log_level="warning", ws="websockets-sansio")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [listener]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the fake agent server did not start")
            time.sleep(0.01)

    def close(self) -> None:
        """Stop serving."""
        self._server.should_exit = True
        self._thread.join(10)

    def __enter__(self) -> FakeAgentServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- helpers for tests ---------------------------------------------------------------

    def only(self) -> FakeConversation:
        """The one conversation."""
        (conversation,) = self.conversations.values()
        return conversation

    def drop_sockets(self, code: int = 1012) -> None:
        """Close every open socket (from any thread) with a non-fatal code."""
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(self._drop(code), self._loop)
        future.result(5)

    async def _drop(self, code: int) -> None:
        for socket in list(self._sockets):
            self._sockets.discard(socket)
            with contextlib.suppress(RuntimeError):
                await socket.close(code)

    def paths(self, method: str | None = None) -> list[str]:
        """The REST paths requested (optionally of one method)."""
        return [p for m, p, _ in self.requests if method is None or m == method]

    # --- the app -------------------------------------------------------------------------

    def _app(self) -> Starlette:
        routes = [
            Route("/server_info", self._server_info),
            Route("/api/conversations", self._create, methods=["POST"]),
            Route("/api/conversations/search", self._list),
            Route("/api/conversations/{cid}", self._get, methods=["GET"]),
            Route("/api/conversations/{cid}", self._patch, methods=["PATCH"]),
            Route("/api/conversations/{cid}", self._delete, methods=["DELETE"]),
            Route("/api/conversations/{cid}/events/search", self._search),
            Route("/api/conversations/{cid}/events/count", self._count),
            Route("/api/conversations/{cid}/events", self._send, methods=["POST"]),
            Route("/api/conversations/{cid}/run", self._run, methods=["POST"]),
            Route("/api/conversations/{cid}/{action}", self._simple, methods=["POST"]),
            Route(
                "/api/conversations/{cid}/events/respond_to_confirmation",
                self._simple,
                methods=["POST"],
            ),
            WebSocketRoute("/sockets/events/{cid}", self._socket),
        ]
        return Starlette(routes=routes, lifespan=self._lifespan)

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        self._loop = asyncio.get_running_loop()
        yield

    async def _record(self, request: Request) -> Any:
        body = None
        if request.method in ("POST", "PATCH"):
            raw = await request.body()
            body = json.loads(raw) if raw else None
        self.requests.append((request.method, request.url.path, body))
        return body

    def _authorized(self, request: Request) -> bool:
        return self.api_key is None or request.headers.get("x-session-api-key") == self.api_key

    def _conversation(self, request: Request) -> FakeConversation | None:
        return self.conversations.get(_norm(request.path_params["cid"]))

    async def _server_info(self, request: Request) -> JSONResponse:
        return JSONResponse({"version": "fake", "capabilities": self.capabilities})

    async def _create(self, request: Request) -> JSONResponse:
        body = await self._record(request)
        if not self._authorized(request):
            return JSONResponse({"detail": "Unauthorized"}, 401)
        cid = _norm(body.get("conversation_id") or str(uuid.uuid4()))
        if cid in self.conversations:
            return JSONResponse(self.conversations[cid].info, 200)
        info = copy.deepcopy(self.recording["info_created"])
        redacted = {**body["agent"]["llm"], "api_key": "**********"}
        info.update(id=str(uuid.UUID(cid)), agent={**body["agent"], "llm": redacted})
        info["workspace"] = {**body["workspace"], "kind": "LocalWorkspace"}
        info["agent"]["kind"] = body["agent"]["kind"]
        first = next(
            i for i, f in enumerate(self.recording["frames"]) if f.get("key") == "full_state"
        )
        script = copy.deepcopy(self.recording["frames"][first + 1 :])
        self.conversations[cid] = FakeConversation(cid, info, script)
        if self.omit_id_on_create:
            info = {k: v for k, v in info.items() if k != "id"}
        return JSONResponse(info, 201)

    async def _list(self, request: Request) -> JSONResponse:
        await self._record(request)
        if not self._authorized(request):
            return JSONResponse({"detail": "Unauthorized"}, 401)
        items = [c.info for c in self.conversations.values()]
        return JSONResponse({"items": items, "next_page_id": None})

    async def _get(self, request: Request) -> JSONResponse:
        await self._record(request)
        if not self._authorized(request):
            return JSONResponse({"detail": "Unauthorized"}, 401)
        conversation = self._conversation(request)
        if conversation is None or (self.poll_404_after_run and conversation.run_posts):
            return JSONResponse({"detail": "Not Found"}, 404)
        return JSONResponse(conversation.info)

    async def _patch(self, request: Request) -> JSONResponse:
        body = await self._record(request)
        conversation = self._conversation(request)
        if conversation is None:
            return JSONResponse({"detail": "Not Found"}, 404)
        conversation.info["title"] = body.get("title")
        return JSONResponse({"success": True})

    async def _delete(self, request: Request) -> JSONResponse:
        await self._record(request)
        if self.conversations.pop(_norm(request.path_params["cid"]), None) is None:
            return JSONResponse({"detail": "Not Found"}, 404)
        return JSONResponse({"success": True})

    async def _search(self, request: Request) -> JSONResponse:
        await self._record(request)
        conversation = self._conversation(request)
        if conversation is None:
            return JSONResponse({"detail": "Not Found"}, 404)
        limit = int(request.query_params.get("limit", 100))
        history = conversation.history
        if request.query_params.get("sort_order") == "TIMESTAMP_DESC":
            history = history[::-1]
        start = 0
        page_id = request.query_params.get("page_id")
        if page_id:
            start = next(i for i, e in enumerate(history) if e["id"] == page_id)
        items = history[start : start + limit]
        rest = history[start + limit :]
        return JSONResponse({"items": items, "next_page_id": rest[0]["id"] if rest else None})

    async def _count(self, request: Request) -> JSONResponse:
        await self._record(request)
        conversation = self._conversation(request)
        if conversation is None:
            return JSONResponse({"detail": "Not Found"}, 404)
        return JSONResponse(len(conversation.history))

    async def _send(self, request: Request) -> JSONResponse:
        await self._record(request)
        return JSONResponse({"success": True})

    async def _simple(self, request: Request) -> JSONResponse:
        await self._record(request)
        return JSONResponse({"success": True})

    async def _run(self, request: Request) -> JSONResponse:
        await self._record(request)
        conversation = self._conversation(request)
        if conversation is None:
            return JSONResponse({"detail": "Not Found"}, 404)
        if conversation.running:
            detail = "Conversation already running. Wait for completion or pause first."
            return JSONResponse({"detail": detail}, 409)
        conversation.running = True
        conversation.run_posts += 1
        if self.stale_snapshot_on_run:
            stale = {**conversation.info, "execution_status": "finished"}
            await self._broadcast(_full_state(stale))
        asyncio.get_running_loop().create_task(self._replay(conversation))
        return JSONResponse({"success": True})

    async def _replay(self, conversation: FakeConversation) -> None:
        await asyncio.sleep(0.1)  # the run starts after the POST is answered
        count = 0
        while conversation.position < len(conversation.script):
            recorded = conversation.script[conversation.position]
            conversation.position += 1
            count += 1
            frame = copy.deepcopy(recorded)
            ends = frame.get("value") in ("finished", "error", "waiting_for_confirmation")
            if self.never_end and frame.get("key") == "execution_status" and ends:
                return
            if frame.get("key") != "full_state" and frame.get("kind") != "StreamingDeltaEvent":
                conversation.history.append(frame)
            if frame.get("key") == "full_state":
                if self.final_status_override:
                    frame["value"]["execution_status"] = self.final_status_override
                for key in ("id", "workspace", "agent", "title"):  # this one's, not the recording's
                    if key in conversation.info:
                        frame["value"][key] = conversation.info[key]
                conversation.info.update(frame["value"])
                conversation.running = False
            elif frame.get("kind") == "ConversationStateUpdateEvent":
                conversation.info[frame["key"]] = frame["value"]
            await self._broadcast(frame)
            if frame.get("key") == "full_state":
                return  # the run is over; the next one goes on from here
            if self.drop_after_frames is not None and count == self.drop_after_frames:
                await self._drop(1012)
                await asyncio.sleep(0.3)  # events go on while no socket listens
            await asyncio.sleep(self.frame_delay)
        conversation.running = False

    async def _broadcast(self, frame: dict[str, Any]) -> None:
        for socket in list(self._sockets):
            try:
                await socket.send_text(json.dumps(frame))
            except (RuntimeError, WebSocketDisconnect):
                self._sockets.discard(socket)

    async def _socket(self, socket: WebSocket) -> None:
        await socket.accept()
        self.socket_urls.append(str(socket.url))
        try:
            first = json.loads(await asyncio.wait_for(socket.receive_text(), 5))
        except (TimeoutError, WebSocketDisconnect):
            return
        self.first_frames.append(first)
        if self.close_code is not None:
            await socket.close(self.close_code)
            return
        if self.api_key is not None and first.get("session_api_key") != self.api_key:
            await socket.close(4001, "Authentication failed")
            return
        conversation = self.conversations.get(_norm(socket.path_params["cid"]))
        if conversation is None:
            await socket.close(4004, "Conversation not found")
            return
        if self.send_first_frame:
            await socket.send_text(json.dumps(_full_state(conversation.info)))
        self._sockets.add(socket)
        try:
            while True:
                await socket.receive_text()
        except WebSocketDisconnect:
            pass
        finally:
            self._sockets.discard(socket)


def _full_state(info: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "timestamp": "2026-11-24T15:32:53.000000",
        "source": "environment",
        "key": "full_state",
        "value": info,
        "kind": "ConversationStateUpdateEvent",
    }


def _norm(cid: str) -> str:
    return uuid.UUID(cid).hex
