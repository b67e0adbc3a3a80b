"""The Starlette app of `ohtui serve`: probes, guards, auth, and the engine loaded in the
background.

Every request passes, in order: the guard (a Host the server answers as, no foreign Origin,
JSON bodies only), the session key (for `/api/*`), the body limit. The engine (ohtui.sdk and
the user's settings, about a second of imports) loads on a thread once the server listens,
so `/alive`, `/health` and `/ready` answer at once; a request that needs the engine
(`/api/*`, `/sockets/*`, `/server_info`) waits for it. This module imports nothing from
ohtui.sdk.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, Router, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from ohtui.server.auth import HEADER, KeyChecker
from ohtui.server.deferred import DeferredInit
from ohtui.server.errors import StoppingError
from ohtui.server.guard import AllowedHosts, BodyLimit, RequestGuard
from ohtui.server.hub import Hub
from ohtui.server.roots import Roots

if TYPE_CHECKING:
    from ohtui.server.confinement import Confinement
    from ohtui.server.registry import Registry
    from ohtui.server.routes import Api

logger = logging.getLogger("ohtui.server")

SETTINGS_FILE = "server-settings.json"
"""Beside the server's secret key: what clients store through /api/settings, encrypted."""


@dataclass(frozen=True)
class ServerConfig:
    """What the app needs: where conversations live, the session key, the server's secret,
    the names it answers as, and where the settings that confine conversations come from."""

    conversations_dir: Path
    api_key: str
    secret_key_file: Path
    """The key that encrypts the agents' API keys saved for resume (made on first start)."""
    hosts: AllowedHosts
    config_file: Path
    """config.toml: its [sandbox] and [server] roots apply (read when the engine loads)."""
    start_dir: Path
    """The folder the server started in: the root when none is given."""
    sandbox: str | None = None
    """--sandbox, winning over OHTUI_SANDBOX and config.toml."""
    roots: Roots | None = None
    """--root, winning over config.toml."""
    warm_up: bool = True
    """Prepare each conversation's LLM path in the background as it opens (litellm's import
    only where its model needs litellm)."""
    local_users: bool = False
    """Let this user's own programs here in without the key (a key the server made itself:
    see `ohtui.server.peer`)."""
    deferred: bool = False
    """Start dormant: `/api/*` answers 503 until `POST /api/init` (`ohtui.server.deferred`)."""
    init_key: str | None = None
    """The key `POST /api/init` wants in X-Init-API-Key (None: the session key)."""


@dataclass
class Loaded:
    """The engine side of the app, once loaded."""

    registry: Registry
    confinement: Confinement
    api: Api
    api_router: Router
    socket_router: Router
    gateway_router: Router


class Engine:
    """Loads the registry, REST routes and event socket on a thread; awaitable."""

    def __init__(self, config: ServerConfig, hub: Hub, keys: KeyChecker) -> None:
        self.config = config
        self.hub = hub
        self.keys = keys
        self.started = time.time()
        self._future: asyncio.Future[Loaded] | None = None
        self._loaded: Loaded | None = None
        self._closed = False
        self._close_lock = threading.Lock()

    def start(self) -> None:
        """Begin loading (on the running loop's default executor)."""
        self._future = asyncio.get_running_loop().run_in_executor(None, self._load)

    async def loaded(self) -> Loaded:
        """The engine; raises what loading raised."""
        if self._future is None:
            self.start()
        assert self._future is not None
        return await asyncio.shield(self._future)

    def _load(self) -> Loaded:
        started = time.perf_counter()
        from ohtui.server.bash_routes import BashApi
        from ohtui.server.confinement import Confinement
        from ohtui.server.gateway import Gateway
        from ohtui.server.registry import Registry
        from ohtui.server.routes import Api
        from ohtui.server.secret import server_cipher
        from ohtui.server.settings_routes import SettingsApi
        from ohtui.server.sockets import EventSocket
        from ohtui.server.stored_settings import StoredSettings

        config = self.config
        confinement = Confinement.load(
            config.config_file, config.sandbox, config.roots, config.start_dir
        )
        for line in confinement.notices:
            logger.warning("%s", line)
        for line in confinement.start_lines():
            logger.info("%s", line)
        cipher = server_cipher(config.secret_key_file)
        registry = Registry(
            config.conversations_dir,
            cipher,
            self.hub,
            confinement,
            warm_up=config.warm_up,
        )
        api = Api(registry, confinement, self.started)
        stored = StoredSettings(config.secret_key_file.with_name(SETTINGS_FILE), cipher)
        socket = EventSocket(registry, self.hub, self.keys)
        loaded = Loaded(
            registry=registry,
            confinement=confinement,
            api=api,
            api_router=Router(
                routes=[
                    *api.routes(),
                    *SettingsApi(stored).routes(),
                    *BashApi(confinement).routes(),
                ]
            ),
            socket_router=Router(
                routes=[WebSocketRoute("/events/{conversation_id}", socket.handle)]
            ),
            gateway_router=Router(routes=Gateway(registry, stored, confinement).routes()),
        )
        with self._close_lock:
            if self._closed:  # a signal came while it loaded: nothing may open now
                registry.close()
                raise StoppingError()
            self._loaded = loaded
        logger.info("engine loaded in %.0f ms", (time.perf_counter() - started) * 1000)
        return loaded

    def close(self) -> None:
        """Close every conversation (their commands stopped, their state saved) and the
        store, if the engine was loaded; once (the first signal and the shutdown both call
        it). An engine still loading closes itself when done."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
            if self._loaded is None:
                return
            self._loaded.registry.close()


class Lazy:
    """An ASGI app that waits for the engine, then hands the request to `pick(loaded)`."""

    def __init__(self, engine: Engine, pick: Callable[[Loaded], ASGIApp]) -> None:
        self.engine = engine
        self.pick = pick

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            loaded = await self.engine.loaded()
        except StoppingError as exc:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1001, "reason": str(exc)})
                return
            await JSONResponse({"detail": str(exc)}, status_code=503)(scope, receive, send)
            return
        except Exception as exc:
            logger.exception("the engine failed to load")
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1011, "reason": "engine failed"})
                return
            detail = f"ohtui serve cannot start its engine: {exc}"
            await JSONResponse({"detail": detail}, status_code=503)(scope, receive, send)
            return
        await self.pick(loaded)(scope, receive, send)


class ApiKeyMiddleware:
    """401 for every `/api/*` and `/v1/*` request without the session key (constant-time
    compare; `/v1`, the OpenAI-compatible gateway, takes it as a Bearer token too), but
    `/api/init` (its own key); then 503 while a deferred server is dormant."""

    DETAIL = (
        "Unauthorized: send the session API key in the X-Session-API-Key header (ohtui serve "
        "printed where it keeps it when it started)."
    )

    def __init__(self, app: ASGIApp, keys: KeyChecker, deferred: DeferredInit) -> None:
        self.app = app
        self.keys = keys
        self.deferred = deferred

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"] if scope["type"] == "http" else ""
        wanted = _under(path, "/api") or _under(path, "/v1")
        if not wanted or _under(path, "/api/init"):
            await self.app(scope, receive, send)
            return
        presented = _header(scope, HEADER)
        if presented is None and _under(path, "/v1"):
            presented = _bearer(_header(scope, "Authorization"))
        if not await self.keys.admits(scope, presented):
            response = JSONResponse({"detail": self.DETAIL}, status_code=401)
            await response(scope, receive, send)
            return
        if self.deferred.dormant:
            detail = (
                f"server is in deferred-init state '{self.deferred.state}'; call POST /api/init "
                "first"
            )
            await JSONResponse({"detail": detail}, status_code=503)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class AccessLog:
    """One log line per request: method, path (never the query: it could hold a key),
    status and time taken."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: dict[str, Any] = {}

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            logger.info(
                "%s %s %s %.1f ms",
                scope["method"],
                scope["path"],
                status.get("code", "-"),
                (time.perf_counter() - started) * 1000,
            )


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def _bearer(value: str | None) -> str | None:
    if value is None:
        return None
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _header(scope: Scope, name: str) -> str | None:
    wanted = name.lower().encode()
    for key, value in scope.get("headers", []):
        if key.lower() == wanted:
            return str(value.decode("latin-1"))
    return None


def create_app(config: ServerConfig) -> Starlette:
    """The app; its engine is `app.state.engine` (loaded at start, closed at shutdown)."""
    hub = Hub()
    keys = KeyChecker(config.api_key, local_users=config.local_users)
    deferred = DeferredInit(keys, config.init_key, config.deferred)
    engine = Engine(config, hub, keys)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub.bind(asyncio.get_running_loop())
        engine.start()
        try:
            yield
        finally:
            await asyncio.get_running_loop().run_in_executor(None, engine.close)

    async def alive(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def ready(request: Request) -> Response:
        return JSONResponse({"status": "ready"})

    async def server_info(request: Request) -> Response:
        return await (await engine.loaded()).api.server_info(request)

    routes = [
        Route("/alive", alive),
        Route("/health", alive),
        Route("/ready", ready),
        Route("/server_info", server_info),
        Route("/api/init", deferred.handle, methods=["GET", "POST"]),
        Mount("/api", app=Lazy(engine, lambda loaded: loaded.api_router)),
        Mount("/sockets", app=Lazy(engine, lambda loaded: loaded.socket_router)),
        Mount("/v1", app=Lazy(engine, lambda loaded: loaded.gateway_router)),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    # The last added runs first: log, guard, key, then the body is read.
    app.add_middleware(BodyLimit)
    app.add_middleware(ApiKeyMiddleware, keys=keys, deferred=deferred)
    app.add_middleware(RequestGuard, hosts=config.hosts)
    app.add_middleware(AccessLog)
    app.state.engine = engine
    app.state.hub = hub
    return app
