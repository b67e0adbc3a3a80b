"""The client side for the `ohtui acp` tests: the agent-client-protocol package's own client
connection to a real `ohtui acp` subprocess, recording what the agent sends."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallUpdate,
)

Answer = str | Callable[[list[PermissionOption]], Any]
"""An option's kind to choose ("allow_once", ...), "cancelled", or "wait" (never answer)."""


@dataclass
class Asked:
    """One permission request the agent made."""

    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]
    meta: dict[str, Any]


@dataclass
class RecordingClient:
    """An ACP client that records updates and answers permission requests as scripted."""

    updates: list[tuple[float, str, Any]] = field(default_factory=list)
    asked: list[Asked] = field(default_factory=list)
    answers: deque[str] = field(default_factory=deque)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    on_wire: int = 0
    """The session/update notifications read off the wire so far (see `observe`)."""

    def observe(self, event: StreamEvent) -> None:
        """A stream observer: counts updates as they are read, in the wire's order (the
        package hands each to its handler on a task of its own, so a response can be seen
        before the updates sent ahead of it have been handled)."""
        incoming = event.direction is StreamDirection.INCOMING
        if incoming and event.message.get("method") == "session/update":
            self.on_wire += 1

    async def settle(self) -> None:
        """Until every update read off the wire has been handled."""
        await self.wait_for(lambda: len(self.updates) >= self.on_wire, timeout=10)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **meta: Any,
    ) -> RequestPermissionResponse:
        self.asked.append(Asked(session_id, tool_call, options, meta))
        self.changed.set()
        answer = self.answers.popleft() if self.answers else "reject_once"
        if answer == "wait":
            await asyncio.Event().wait()  # until the agent's turn is cancelled
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        (option,) = [o for o in options if o.kind == answer]
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((time.monotonic(), session_id, update))
        self.changed.set()

    async def wait_for(self, condition: Callable[[], bool], timeout: float = 60) -> None:
        """Until `condition()` holds (checked on every update and request)."""
        async with asyncio.timeout(timeout):
            while not condition():
                self.changed.clear()
                await self.changed.wait()

    def of_kind(self, kind: str) -> list[Any]:
        """The updates of one kind ("agent_message_chunk", "tool_call", ...), in order."""
        return [u for _, _, u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        """The text of the message (or thought, user) chunks, joined."""
        return "".join(u.content.text for u in self.of_kind(kind) if u.content.type == "text")

    async def write_text_file(self, **_: Any) -> Any:
        raise RequestError.method_not_found("fs/write_text_file")

    async def read_text_file(self, **_: Any) -> Any:
        raise RequestError.method_not_found("fs/read_text_file")

    async def create_terminal(self, **_: Any) -> Any:
        raise RequestError.method_not_found("terminal/create")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None


@dataclass
class Agent:
    """A running `ohtui acp` and the client connected to it."""

    connection: ClientSideConnection
    process: asyncio.subprocess.Process
    client: RecordingClient
    started: float

    async def initialize(self) -> Any:
        return await self.connection.initialize(protocol_version=PROTOCOL_VERSION)

    async def new_session(self, cwd: Path, **kwargs: Any) -> str:
        response = await self.connection.new_session(cwd=str(cwd), mcp_servers=[], **kwargs)
        return response.session_id

    async def prompt(self, session_id: str, text: str) -> Any:
        response = await self.connection.prompt(
            session_id=session_id, prompt=[TextContentBlock(type="text", text=text)]
        )
        await self.client.settle()
        return response


def text_chunk(update: Any) -> bool:
    """Whether an update is a chunk of the agent's message."""
    return isinstance(update, AgentMessageChunk)


@contextlib.asynccontextmanager
async def running(env: dict[str, str], cwd: Path, *args: str) -> AsyncIterator[Agent]:
    """`ohtui acp ARGS` as a subprocess, with the package's client connected to it; on exit
    stdin is closed and the process must end by itself."""
    client = RecordingClient()
    started = time.monotonic()
    async with spawn_agent_process(
        client,
        sys.executable,
        "-m",
        "ohtui",
        "acp",
        *args,
        env=env,
        cwd=cwd,
        observers=[client.observe],
    ) as (connection, process):
        yield Agent(connection, process, client, started)
        assert process.stdin is not None
        process.stdin.close()
        async with asyncio.timeout(30):
            code = await process.wait()
        assert code == 0


def environment(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    """An environment of its own: config, data and logs under `home`, the scripted model."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OHTUI_", "OPENAI_"))}
    env.update(
        OHTUI_CONFIG=str(home / "config.toml"),
        OHTUI_DATA_DIR=str(home / "data"),
        OHTUI_LOG_DIR=str(home / "logs"),
        OHTUI_MODEL="openai/test-model",
        OHTUI_BASE_URL=base_url,
        OHTUI_API_KEY="sk-test",
        OHTUI_NUM_RETRIES="0",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    env.update(extra)
    return env
