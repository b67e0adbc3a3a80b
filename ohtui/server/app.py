"""The Starlette app of `ohtui serve`: routes, the event socket, auth, start and stop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from ohtui.sdk.utils.cipher import Cipher
from ohtui.server.auth import HEADER, KeyChecker
from ohtui.server.hub import Hub
from ohtui.server.registry import Registry
from ohtui.server.routes import Api
from ohtui.server.sockets import EventSocket

logger = logging.getLogger("ohtui.server")


@dataclass(frozen=True)
class ServerConfig:
    """What the app needs: where conversations live, the key, the cipher for saved keys."""

    conversations_dir: Path
    api_key: str | None
    cipher: Cipher
    warm_up: bool = True
    """Import litellm in the background once serving."""


class ApiKeyMiddleware:
    """401 for every `/api/*` request without the session key (constant-time compare)."""

    def __init__(self, app: ASGIApp, keys: KeyChecker) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/api"):
            presented = _header(scope, HEADER)
            if not self.keys.accepts(presented):
                response = JSONResponse({"detail": "Unauthorized"}, status_code=401)
                await response(scope, receive, send)
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


def _header(scope: Scope, name: str) -> str | None:
    wanted = name.lower().encode()
    for key, value in scope.get("headers", []):
        if key.lower() == wanted:
            return str(value.decode("latin-1"))
    return None


def create_app(config: ServerConfig) -> Starlette:
    """The app; its registry is `app.state.registry` (opened now, closed at shutdown)."""
    hub = Hub()
    registry = Registry(config.conversations_dir, config.cipher, hub)
    keys = KeyChecker(config.api_key)
    api = Api(registry)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        hub.bind(asyncio.get_running_loop())
        if config.warm_up:
            from ohtui.sdk.llm._litellm import warm_up

            warm_up()  # the first run then does not wait seconds for litellm's import
        try:
            yield
        finally:
            await asyncio.get_running_loop().run_in_executor(None, registry.close)

    routes = [
        *api.routes(),
        WebSocketRoute(
            "/sockets/events/{conversation_id}", EventSocket(registry, hub, keys).handle
        ),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(ApiKeyMiddleware, keys=keys)
    app.add_middleware(AccessLog)
    app.state.registry = registry
    app.state.hub = hub
    return app
