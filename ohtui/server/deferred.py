"""Deferred init (a warm pool's server): `/api/*` answers 503 until `POST /api/init`
delivers the session's configuration, as the OpenHands agent server does with
OH_DEFERRED_INIT.

`GET /api/init` tells the state to anyone (it holds nothing secret); `POST /api/init` needs
`X-Init-API-Key`: the server's secret key (OH_SECRET_KEY or OHTUI_SERVER_SECRET_KEY) when one
was given, else the session key (or, for a server that made its own key, this user's own
programs here). The body may set `session_api_keys` (from then on only they open the
server) and `env` (variables for the server and the conversations it starts); the
OpenHands fields ohtui keeps elsewhere (paths, webhooks, telemetry, ...) are refused with
a sentence, never silently dropped.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ohtui.server.auth import HEADER, KeyChecker
from ohtui.server.limits import parse_json

logger = logging.getLogger("ohtui.server")

INIT_HEADER = "X-Init-API-Key"
DEFERRED_ENV = "OH_DEFERRED_INIT"
"""The OpenHands server's switch for deferred init, honoured by ohtui serve too."""
NOT_OURS = (
    "conversations_path",
    "bash_events_dir",
    "conversation_worktree_root",
    "webhooks",
    "web_url",
    "allow_cors_origins",
    "max_concurrent_runs",
    "telemetry",
    "secret_key",
)
"""InitRequest fields of the OpenHands server that ohtui serve does not take at init."""
InitState = Literal["dormant", "initializing", "ready"]


def deferred_asked(environ: Mapping[str, str]) -> bool:
    """Whether OH_DEFERRED_INIT asks for a dormant start (true/1/yes)."""
    return environ.get(DEFERRED_ENV, "").strip().lower() in ("1", "true", "yes", "on")


class DeferredInit:
    """The dormant → ready switch of one server."""

    def __init__(self, keys: KeyChecker, init_key: str | None, dormant: bool) -> None:
        self.keys = keys
        self._init_key = init_key.encode() if init_key else None
        self.enabled = dormant
        self.state: InitState = "dormant" if dormant else "ready"
        self._lock = asyncio.Lock()

    @property
    def dormant(self) -> bool:
        """Whether `/api/*` is still closed (503)."""
        return self.state != "ready"

    def snapshot(self) -> dict[str, Any]:
        """The state, as `GET /api/init` answers it."""
        return {"state": self.state, "error": None}

    async def handle(self, request: Request) -> Response:
        """GET: the state; POST: initialize."""
        if not self.enabled:
            return JSONResponse(
                {
                    "detail": "ohtui serve was not started dormant (OH_DEFERRED_INIT=true); "
                    "/api/init is not available"
                },
                status_code=404,
            )
        if request.method == "GET":
            return JSONResponse(self.snapshot())
        if not await self._authorized(request):
            return JSONResponse(
                {"detail": f"Unauthorized: send the server's secret key in {INIT_HEADER}"},
                status_code=401,
            )
        try:
            data = parse_json(await request.body() or b"{}")
            unsupported = sorted(set(data) & set(NOT_OURS)) if isinstance(data, dict) else []
            if unsupported:
                return JSONResponse(
                    {
                        "detail": f"ohtui serve does not take {', '.join(unsupported)} at init: "
                        "set them when starting it (its data dir, config.toml)"
                    },
                    status_code=422,
                )
            asked = _init_request(data)
        except ValueError as exc:
            return JSONResponse({"detail": f"bad /api/init body: {exc}"}, status_code=422)
        async with self._lock:
            if self.state != "dormant":
                return JSONResponse(
                    {"detail": f"server already in state: {self.state}"}, status_code=400
                )
            self.state = "initializing"
            try:
                if asked.env:
                    os.environ.update(asked.env)
                if asked.session_api_keys:
                    self.keys.replace(asked.session_api_keys)
            except ValueError as exc:
                self.state = "dormant"
                return JSONResponse({"detail": str(exc)}, status_code=422)
            self.state = "ready"
        logger.info("deferred init: ready (%d variables set)", len(asked.env or {}))
        return JSONResponse(self.snapshot())

    async def _authorized(self, request: Request) -> bool:
        given = request.headers.get(INIT_HEADER)
        if self._init_key is not None:
            return given is not None and hmac.compare_digest(given.encode(), self._init_key)
        return await self.keys.admits(request.scope, request.headers.get(HEADER))


@dataclass(frozen=True)
class InitRequest:
    """What `POST /api/init` may set."""

    session_api_keys: list[str] | None = None
    env: dict[str, str] | None = None


def _init_request(data: Any) -> InitRequest:
    """The body as an InitRequest; ValueError saying what is wrong (pydantic is not
    imported for it: this module loads before the server listens)."""
    if not isinstance(data, dict):
        raise ValueError("the body must be a JSON object")
    unknown = sorted(set(data) - {"session_api_keys", "env"})
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}")
    keys = data.get("session_api_keys")
    if keys is not None and (
        not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k for k in keys)
    ):
        raise ValueError("session_api_keys must be a non-empty list of non-empty strings")
    env = data.get("env")
    if env is not None and (
        not isinstance(env, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
    ):
        raise ValueError("env must be an object of string values")
    return InitRequest(session_api_keys=keys, env=env)
