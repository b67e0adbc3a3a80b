"""The MCP client manager: every server's session on ONE background asyncio loop thread.

`start()` returns at once; the loop thread imports the `mcp` SDK, then starts each enabled
server (a stdio child or an HTTP session), initializes it and lists its tools. Calls come
from any thread and block until the server answers, the call times out, or `cancel_calls`
(an interrupt) cancels them. Every failure is reported as a status the user sees (with the
server's stderr tail) or an error observation the model reads, never an exception.
`close()` ends every session: stdio children get their stdin closed, then SIGTERM, then
SIGKILL (the SDK's shutdown sequence), and the loop thread stops.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ohtui.sdk.mcp.config import MCPServerSpec
from ohtui.sdk.mcp.definition import (
    MCPToolDefinition,
    MCPToolExecutor,
    MCPToolObservation,
    mcp_tool_name,
    schema_problems,
    tool_name_prefix,
)
from ohtui.sdk.mcp.failures import (
    SettingError,
    error_observation,
    reason_of,
    session_gone,
    startup_error,
    stderr_file,
    stderr_tail,
)
from ohtui.sdk.mcp.launching import ServerLauncher
from ohtui.sdk.mcp.requests import (
    call_tool,
    list_tools,
)
from ohtui.sdk.mcp.status import (
    ServerInfo,
    ServerStatus,
    ToolInfo,
)

if TYPE_CHECKING:
    from mcp import ClientSession

    from ohtui.sdk.sandbox import Sandbox

logger = logging.getLogger(__name__)

CLOSE_TIMEOUT = 8.0
"""Seconds `close` waits for the sessions to end (the SDK gives a child 2 s, then kills it)."""
SETTLE_MARGIN = 5.0
"""Seconds `wait_settled` adds to the longest startup timeout (the SDK's own import)."""


@dataclass
class _Slot:
    """One server's live state (touched under the manager's lock)."""

    name: str
    spec: MCPServerSpec | None
    status: ServerStatus
    error: str | None = None
    tools: tuple[ToolInfo, ...] = ()
    server_version: str | None = None
    session: ClientSession | None = None
    stop: Any = None  # anyio.Event, set on the loop to end the session
    task: asyncio.Task[None] | None = None
    lost_once: bool = False
    initialized_at: float | None = None
    ready_at: float | None = None
    confined: str = ""
    calls: set[concurrent.futures.Future[MCPToolObservation]] = field(default_factory=set)

    def info(self) -> ServerInfo:
        return ServerInfo(
            self.name,
            self.spec,
            self.status,
            self.tools,
            self.error,
            self.server_version,
            self.initialized_at,
            self.ready_at,
            self.confined,
        )


class MCPClientManager:
    """Runs the configured MCP servers and their calls on one background loop thread."""

    def __init__(
        self,
        specs: Mapping[str, MCPServerSpec],
        *,
        errors: Mapping[str, str] | None = None,
        working_dir: str | None = None,
        secret: Callable[[str], str | None] | None = None,
        sandbox: Callable[[], Sandbox | None] | None = None,
        check: Callable[[str], str | None] | None = None,
    ) -> None:
        """`errors`: servers whose settings are wrong, by name, with the message to show.
        `secret` looks up a conversation secret named in `env` or `headers`; `sandbox` gives
        the conversation's sandbox, which `sandboxed` stdio servers start in; `check`, asked
        before every start of a server (reconnects and /mcp included), says why it may not
        start (the front end's trust: what it runs changed)."""
        self._launcher = ServerLauncher(working_dir, secret, sandbox)
        self._check = check
        self._lock = threading.RLock()
        self._slots: dict[str, _Slot] = {}
        for name, spec in specs.items():
            status = ServerStatus.STARTING if spec.enabled else ServerStatus.DISABLED
            self._slots[name] = _Slot(name, spec, status)
        for name, error in (errors or {}).items():
            self._slots[name] = _Slot(name, None, ServerStatus.FAILED, error=error)
        self._reserved: frozenset[str] = frozenset()
        self._listeners: list[Callable[[], None]] = []
        self._changed = threading.Condition(self._lock)
        self._version = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        """Start the loop thread and every enabled server; returns at once."""
        with self._lock:
            if self._thread is not None or self._closed:
                return
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._thread = threading.Thread(
                target=self._run_loop, args=(loop,), name="ohtui-mcp", daemon=True
            )
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._boot(), loop)

    @staticmethod
    def _run_loop(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def _boot(self) -> None:
        try:
            import mcp  # noqa: F401 - the SDK's import, here, off every other thread
        except ImportError as exc:
            self._fail_all(f"the `mcp` package cannot be imported ({exc}); reinstall ohtui")
            return
        with self._lock:
            names = [n for n, s in self._slots.items() if s.status is ServerStatus.STARTING]
        for name in names:
            self._launch(name)

    def _launch(self, name: str) -> None:
        """Start (or restart) one server's session task; on the loop thread."""
        import anyio

        with self._lock:
            slot = self._slots[name]
            slot.status, slot.error, slot.tools, slot.session = (
                ServerStatus.STARTING,
                None,
                (),
                None,
            )
            slot.stop = anyio.Event()
            slot.task = asyncio.get_running_loop().create_task(self._serve(slot, slot.stop))
        self._notify()

    def close(self) -> None:
        """End every session and stop the loop thread (idempotent); every stdio child is
        terminated."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        self.cancel_calls()
        if loop is None or thread is None:
            return
        if loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(CLOSE_TIMEOUT)
            except (concurrent.futures.TimeoutError, RuntimeError) as exc:
                logger.warning("MCP sessions did not all end in time: %s", exc)
            loop.call_soon_threadsafe(loop.stop)
        thread.join(CLOSE_TIMEOUT)

    async def _shutdown(self) -> None:
        with self._lock:
            slots = list(self._slots.values())
        tasks = []
        for slot in slots:
            if slot.stop is not None:
                slot.stop.set()
            if slot.task is not None and not slot.task.done():
                tasks.append(slot.task)
        if tasks:
            await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT - 1)

    # --- one server's session ----------------------------------------------------------

    async def _serve(self, slot: _Slot, stop: Any) -> None:
        """Open the session, initialize, list the tools, then hold it until `stop`. A
        sandbox that failed to set up is tried again: what it covers is listed just before
        it starts, and a path gone in between (another program's socket) fails that start."""
        from ohtui.sdk.sandbox.boundary import SETUP_TRIES

        for attempt in range(1, SETUP_TRIES + 1):
            if not await self._serve_once(slot, stop, last=attempt == SETUP_TRIES):
                return

    async def _serve_once(self, slot: _Slot, stop: Any, *, last: bool) -> bool:
        """One start of `_serve`; whether to start again (the sandbox did not set up)."""
        import anyio

        spec = slot.spec
        assert spec is not None
        errlog = stderr_file() if spec.transport == "stdio" else None
        ready = False
        confined: Sandbox | None = None
        try:
            from mcp import ClientSession

            confined = self._launcher.confinement(spec)
            if self._check is not None:
                refused = await anyio.to_thread.run_sync(self._check, slot.name)
                if refused:
                    raise SettingError(refused)
            with self._lock:
                slot.confined = confined.config.describe() if confined is not None else ""

            # The deadline covers starting only; the scope wraps the whole session because
            # the transport's task groups must close inside it.
            with anyio.fail_after(spec.startup_timeout) as scope:
                async with contextlib.AsyncExitStack() as stack:
                    read, write = await stack.enter_async_context(
                        self._launcher.transport(spec, errlog, confined)
                    )
                    session = await stack.enter_async_context(
                        ClientSession(read, write, message_handler=cast(Any, self._handler(slot)))
                    )
                    result = await session.initialize()
                    initialized = time.monotonic()
                    tools = await list_tools(session)
                    scope.deadline = math.inf  # started: the session lives until stopped
                    with self._lock:
                        if slot.stop is not stop:
                            return False  # replaced or disabled while starting
                        slot.session, slot.tools = session, tools
                        info = result.serverInfo
                        slot.server_version = f"{info.name} {info.version}".strip()
                        slot.status = ServerStatus.READY
                        slot.initialized_at, slot.ready_at = initialized, time.monotonic()
                        ready = True
                        self._check_conflicts()
                    self._notify()
                    await stop.wait()
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError) and self._closed:
                raise
            why = startup_error(exc, spec) if not ready else f"session ended: {reason_of(exc)}"
            tail = stderr_tail(errlog)
            setup_failed = tail.startswith("stderr: bwrap: ")  # bubblewrap's own, before exec
            if confined is not None and not ready and not last and setup_failed:
                logger.info("MCP server %s: the sandbox did not set up (%s)", slot.name, tail)
                return True
            with self._lock:
                if slot.stop is stop and slot.status is not ServerStatus.DISABLED:
                    slot.status, slot.session = ServerStatus.FAILED, None
                    slot.error = f"{why}\n{tail}" if tail else why
            logger.warning("MCP server %s: %s", slot.name, slot.error)
            self._notify()
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            if errlog is not None:
                errlog.close()
        return False

    def _handler(self, slot: _Slot) -> Callable[[Any], Any]:
        """Re-list the tools when the server says they changed."""

        async def handle(message: Any) -> None:
            from mcp import types

            root = getattr(message, "root", None)
            if isinstance(root, types.ToolListChangedNotification):
                session = slot.session
                if session is None:
                    return
                tools = await list_tools(session)
                with self._lock:
                    slot.tools = tools
                    self._check_conflicts()
                self._notify()

        return handle

    # --- calls -------------------------------------------------------------------------

    def call(
        self, server: str, tool: str, arguments: dict[str, Any], timeout: float | None = None
    ) -> MCPToolObservation:
        """Call a tool and wait for its result; every failure is an error observation."""
        with self._lock:
            slot = self._slots.get(server)
            loop = self._loop
            problem = self._unavailable(server, slot)
            if problem is None and slot is not None and slot.spec is not None:
                timeout = timeout or slot.spec.timeout
        if problem is not None or slot is None or loop is None:
            return error_observation(
                server, tool, problem or f"MCP server '{server}' is not running."
            )
        future = asyncio.run_coroutine_threadsafe(
            self._call(slot, tool, arguments, timeout or 300.0), loop
        )
        with self._lock:
            slot.calls.add(future)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            return error_observation(
                server, tool, "The user interrupted this call before it finished."
            )
        finally:
            with self._lock:
                slot.calls.discard(future)

    def _unavailable(self, server: str, slot: _Slot | None) -> str | None:
        if self._closed:
            return "ohtui is closing; the call was not sent."
        if slot is None:
            return f"MCP server '{server}' is not configured any more."
        if slot.status is ServerStatus.READY and slot.session is not None:
            return None
        if slot.status is ServerStatus.DISABLED:
            return f"MCP server '{server}' is disabled for this session."
        if slot.status is ServerStatus.STARTING:
            return f"MCP server '{server}' is still starting; try again shortly."
        return f"MCP server '{server}' is not available: {slot.error or 'it failed'}"

    async def _call(
        self, slot: _Slot, tool: str, arguments: dict[str, Any], timeout: float
    ) -> MCPToolObservation:
        import anyio
        from mcp.shared.exceptions import McpError

        session = slot.session
        if session is None:
            return error_observation(slot.name, tool, f"MCP server '{slot.name}' is not running.")
        try:
            with anyio.fail_after(timeout):
                result = await call_tool(session, tool, arguments)
        except TimeoutError:
            return error_observation(
                slot.name, tool, f"The call timed out after {timeout:g} s; it may still be running."
            )
        except (McpError, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            reason = reason_of(exc)
            if isinstance(exc, McpError) and not session_gone(exc):
                return error_observation(slot.name, tool, f"The server refused the call: {reason}")
            return error_observation(slot.name, tool, self._lost(slot, reason))
        except Exception as exc:
            logger.warning("MCP call %s/%s failed", slot.name, tool, exc_info=True)
            return error_observation(slot.name, tool, f"The call failed: {reason_of(exc)}")
        from ohtui.sdk.mcp.results import observation_from_result

        info = next((t for t in slot.tools if t.name == tool), None)
        if info is not None and info.output_schema and result.structuredContent is not None:
            problems = schema_problems(info.output_schema, result.structuredContent)
            if problems:  # the text content still goes to the model
                logger.warning(
                    "MCP %s/%s: structured result off its schema: %s", slot.name, tool, problems
                )
        return observation_from_result(slot.name, tool, result)

    def _lost(self, slot: _Slot, reason: str) -> str:
        """The session broke (the server crashed or forgot it): reconnect once."""
        with self._lock:
            again = not slot.lost_once and not self._closed
            slot.lost_once = True
            if slot.stop is not None:
                slot.stop.set()
            if not again:
                slot.status, slot.session = ServerStatus.FAILED, None
                slot.error = f"lost the connection again: {reason}"
        self._notify()
        if again:
            self._launch(slot.name)
            return (
                f"The connection to MCP server '{slot.name}' was lost ({reason}); ohtui is "
                "reconnecting. The call may not have run: call again if it is still needed."
            )
        return f"The connection to MCP server '{slot.name}' was lost again ({reason}); it is off."

    def cancel_calls(self, server: str | None = None) -> None:
        """Cancel the calls in flight, of one server or of all; callable from any thread."""
        with self._lock:
            futures = [f for s in self._slots.values() if server in (None, s.name) for f in s.calls]
        for future in futures:
            future.cancel()

    # --- what the agent and the UI see -------------------------------------------------

    @property
    def version(self) -> int:
        """Grows whenever a server's status or tools change."""
        return self._version

    def servers(self) -> list[ServerInfo]:
        """Every configured server, in the order configured."""
        with self._lock:
            return [slot.info() for slot in self._slots.values()]

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call `listener` (on the loop thread) whenever a server changes."""
        with self._lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[], None]) -> None:
        """Stop calling `listener`."""
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def wait_settled(self, timeout: float | None = None) -> bool:
        """Wait until no server is starting (at most `timeout` s; default: the longest
        startup timeout and a margin); whether they all settled."""
        with self._lock:
            if timeout is None:
                timeouts = [s.spec.startup_timeout for s in self._slots.values() if s.spec]
                timeout = max(timeouts, default=0) + SETTLE_MARGIN
            return self._changed.wait_for(
                lambda: all(s.status.settled for s in self._slots.values()), timeout
            )

    def reserve(self, names: Iterable[str]) -> None:
        """Tool names MCP tools may not take (the agent's own tools)."""
        with self._lock:
            self._reserved = frozenset(names)
            self._check_conflicts()
        self._notify()

    def tool_definitions(self) -> list[MCPToolDefinition]:
        """The tools of every ready server, as ToolDefinitions with executors, each named
        `server_tool` (see `mcp_tool_name`). A workspace's server's tool whose name a user's
        server still starting may give one of its own waits for it (`_check_conflicts` then
        fails the workspace's server): the name never means the workspace's tool first."""
        with self._lock:
            slots = [s for s in self._slots.values() if s.status is ServerStatus.READY]
            starting = [
                tool_name_prefix(s.name)
                for s in self._slots.values()
                if s.status is ServerStatus.STARTING and not _from_workspace(s)
            ]
        return [
            MCPToolDefinition.model_validate(
                {
                    "name": mcp_tool_name(slot.name, tool.name),
                    "tool": tool.name,
                    "description": tool.description or "No description provided",
                    "server": slot.name,
                    "input_schema": tool.input_schema,
                    "output_schema": tool.output_schema,
                    "annotations": tool.annotations,
                }
            ).set_executor(MCPToolExecutor(self, slot.name))
            for slot in slots
            for tool in slot.tools
            if not (_from_workspace(slot) and _claimable(slot.name, tool.name, starting))
        ]

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Turn a server on or off for this session (it starts, or its session ends)."""
        with self._lock:
            slot = self._slots.get(name)
            loop = self._loop
            if slot is None or slot.spec is None or self._closed:
                return
            if not enabled:
                slot.status, slot.session, slot.error = ServerStatus.DISABLED, None, None
                stop, slot.stop = slot.stop, None
            elif slot.status in (ServerStatus.DISABLED, ServerStatus.FAILED):
                slot.status, slot.lost_once, stop = ServerStatus.STARTING, False, None
            else:
                return
        if not enabled:
            self.cancel_calls(name)
            if stop is not None and loop is not None:
                loop.call_soon_threadsafe(stop.set)
            self._notify()
            return
        if loop is None:
            self.start()
        else:
            loop.call_soon_threadsafe(self._launch, name)
        self._notify()

    # --- internals ---------------------------------------------------------------------

    def _check_conflicts(self) -> None:
        """Fail a ready server one of whose tools would be called by the name of another
        server's tool or of one of the agent's own. The user's servers come first, then
        those confined to the sandbox (a workspace's), each in config order: a workspace's
        server never takes a name from the user's, and the outcome is the same on every
        start."""
        taken: dict[str, str] = {}
        slots = sorted(self._slots.values(), key=_from_workspace)
        for slot in slots:
            if slot.status is not ServerStatus.READY:
                continue
            names = {mcp_tool_name(slot.name, t.name): t.name for t in slot.tools}
            clash = next((n for n in names if n in taken or n in self._reserved), None)
            if clash is None:
                taken.update(dict.fromkeys(names, slot.name))
                continue
            slot.status, slot.session = ServerStatus.FAILED, None
            if clash in taken:
                slot.error = (
                    f"its tool '{names[clash]}' would be called {clash}, as a tool of MCP "
                    f"server '{taken[clash]}' is: rename or disable one of the two servers "
                    "(/mcp, or `enabled = false`)"
                )
            else:
                slot.error = (
                    f"its tool '{names[clash]}' would be called {clash}, as one of ohtui's own "
                    "tools is: rename this server or disable it"
                )
            if slot.stop is not None and self._loop is not None:
                self._loop.call_soon_threadsafe(slot.stop.set)

    def _fail_all(self, error: str) -> None:
        with self._lock:
            for slot in self._slots.values():
                if slot.status is ServerStatus.STARTING:
                    slot.status, slot.error = ServerStatus.FAILED, error
        self._notify()

    def _notify(self) -> None:
        with self._lock:
            self._version += 1
            self._changed.notify_all()
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:
                logger.exception("an MCP status listener failed")


def _from_workspace(slot: _Slot) -> bool:
    """Whether a server is a workspace's (confined to the sandbox), second to the user's."""
    return bool(slot.spec and slot.spec.sandboxed)


def _claimable(server: str, tool: str, prefixes: list[str]) -> bool:
    """Whether a server whose tool names start with one of `prefixes` may name a tool as
    `server`'s `tool` is named."""
    name = mcp_tool_name(server, tool)
    return any(name.startswith(prefix) for prefix in prefixes)
