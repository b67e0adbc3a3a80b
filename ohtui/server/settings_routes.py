"""`/api/settings` (GET, PATCH), `/api/settings/secrets` and `/api/profiles`: the
OpenHands agent server's settings API, on `StoredSettings`.

Values are redacted in answers unless the client sends `X-Expose-Secrets: plaintext`
(`GET /api/settings`, `GET /api/profiles/{name}`), as the OpenHands server does for an
authenticated client; a secret's own route (`GET /api/settings/secrets/{name}`) answers its
value as text, which is how a `LookupSecret` reads it. Nothing here logs a value.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from ohtui.server.limits import parse_json
from ohtui.server.stored_settings import SECRET_NAME, SettingsFileError, StoredSettings

logger = logging.getLogger(__name__)

EXPOSE_HEADER = "X-Expose-Secrets"
PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
BAD_SECRET_NAME = (
    "Invalid secret name format. Must start with a letter, contain only letters, numbers, "
    "and underscores, and be 1-64 characters long."
)


class SettingsUpdate(BaseModel):
    """`PATCH /api/settings`."""

    model_config = ConfigDict(extra="forbid")

    agent_settings_diff: dict[str, Any] | None = None
    conversation_settings_diff: dict[str, Any] | None = None
    misc_settings_diff: dict[str, Any] | None = None
    active_profile: str | None = None


class SecretCreate(BaseModel):
    """`PUT /api/settings/secrets`."""

    model_config = ConfigDict(extra="forbid")

    name: str
    value: str
    description: str | None = None


class ProfileSave(BaseModel):
    """`POST /api/profiles/{name}`."""

    model_config = ConfigDict(extra="forbid")

    llm: dict[str, Any]
    include_secrets: bool = True


class _RequestError(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status


async def _parsed(request: Request, model: type[Any]) -> Any:
    try:
        data = parse_json(await request.body() or b"{}")
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(body)"
        raise _RequestError(422, f"{where}: {first['msg']}") from exc
    except ValueError as exc:
        raise _RequestError(422, str(exc)) from exc


def _exposed(request: Request) -> bool:
    mode = (request.headers.get(EXPOSE_HEADER) or "").strip().lower()
    if mode not in ("", "plaintext"):
        raise _RequestError(
            422, f"{EXPOSE_HEADER} may be 'plaintext' (or absent): ohtui serve has no '{mode}'"
        )
    return mode == "plaintext"


class SettingsApi:
    """The handlers, bound to one store."""

    def __init__(self, store: StoredSettings) -> None:
        self.store = store

    async def get_settings(self, request: Request) -> Response:
        expose = _exposed(request)
        if expose:
            logger.warning("settings read with secrets in the clear (%s)", EXPOSE_HEADER)
        return JSONResponse(await run_in_threadpool(self.store.settings, expose))

    async def patch_settings(self, request: Request) -> Response:
        update = await _parsed(request, SettingsUpdate)
        given = update.model_dump(exclude_none=True)
        if "active_profile" in update.model_fields_set:
            given["active_profile"] = update.active_profile
        if not given:
            raise _RequestError(
                400,
                "At least one of agent_settings_diff, conversation_settings_diff, "
                "misc_settings_diff or active_profile must be provided",
            )
        llm = (update.agent_settings_diff or {}).get("llm")
        if llm is not None and not isinstance(llm, dict):
            raise _RequestError(422, "agent_settings_diff.llm must be an object")
        await run_in_threadpool(self.store.update, given)
        logger.info("settings updated (%s)", ", ".join(sorted(given)))
        return JSONResponse(await run_in_threadpool(self.store.settings, False))

    async def list_secrets(self, request: Request) -> Response:
        return JSONResponse({"secrets": await run_in_threadpool(self.store.secrets)})

    async def put_secret(self, request: Request) -> Response:
        asked = await _parsed(request, SecretCreate)
        if not SECRET_NAME.match(asked.name):
            raise _RequestError(422, BAD_SECRET_NAME)
        await run_in_threadpool(self.store.put_secret, asked.name, asked.value, asked.description)
        logger.info("secret %s stored", asked.name)
        return JSONResponse({"name": asked.name, "description": asked.description})

    async def get_secret(self, request: Request) -> Response:
        name = self._secret_name(request)
        value = await run_in_threadpool(self.store.secret, name)
        if value is None:
            raise _RequestError(404, "Secret not found")
        return PlainTextResponse(value)

    async def delete_secret(self, request: Request) -> Response:
        name = self._secret_name(request)
        if not await run_in_threadpool(self.store.delete_secret, name):
            raise _RequestError(404, "Secret not found")
        return JSONResponse({"deleted": True})

    async def list_profiles(self, request: Request) -> Response:
        def listing() -> dict[str, Any]:
            items = []
            for name in self.store.profiles():
                llm = self.store.profile(name) or {}
                items.append(
                    {
                        "name": name,
                        "model": llm.get("model"),
                        "base_url": llm.get("base_url"),
                        "api_key_set": bool(llm.get("api_key")),
                    }
                )
            return {"profiles": items, "active_profile": self.store.settings()["active_profile"]}

        return JSONResponse(await run_in_threadpool(listing))

    async def get_profile(self, request: Request) -> Response:
        name = self._profile_name(request)
        expose = _exposed(request)
        llm = await run_in_threadpool(self.store.profile, name, expose)
        if llm is None:
            raise _RequestError(404, f"Profile '{name}' not found")
        key_set = bool(llm.get("api_key"))
        if not expose:
            llm["api_key"] = None
        return JSONResponse({"name": name, "config": llm, "api_key_set": key_set})

    async def save_profile(self, request: Request) -> Response:
        name = self._profile_name(request)
        asked = await _parsed(request, ProfileSave)
        llm = dict(asked.llm)
        if not isinstance(llm.get("model"), str) or not llm["model"]:
            raise _RequestError(422, "llm.model: give the model's name")
        if not asked.include_secrets:
            llm.pop("api_key", None)
        await run_in_threadpool(self.store.put_profile, name, llm)
        return JSONResponse({"name": name, "message": f"Profile '{name}' saved"}, status_code=201)

    async def delete_profile(self, request: Request) -> Response:
        name = self._profile_name(request)
        if not await run_in_threadpool(self.store.delete_profile, name):
            raise _RequestError(404, f"Profile '{name}' not found")
        return JSONResponse({"name": name, "message": f"Profile '{name}' deleted"})

    @staticmethod
    def _secret_name(request: Request) -> str:
        name = str(request.path_params["name"])
        if not SECRET_NAME.match(name):
            raise _RequestError(422, BAD_SECRET_NAME)
        return name

    @staticmethod
    def _profile_name(request: Request) -> str:
        name = str(request.path_params["name"])
        if not PROFILE_NAME.match(name):
            raise _RequestError(
                422,
                "A profile name is 1-64 letters, digits, '.', '_' or '-', starting with a "
                "letter or digit",
            )
        return name

    def routes(self) -> list[Route]:
        """The routes, relative to /api."""
        table = [
            ("/settings", self.get_settings, ["GET"]),
            ("/settings", self.patch_settings, ["PATCH"]),
            ("/settings/secrets", self.list_secrets, ["GET"]),
            ("/settings/secrets", self.put_secret, ["PUT"]),
            ("/settings/secrets/{name}", self.get_secret, ["GET"]),
            ("/settings/secrets/{name}", self.delete_secret, ["DELETE"]),
            ("/profiles", self.list_profiles, ["GET"]),
            ("/profiles/{name}", self.get_profile, ["GET"]),
            ("/profiles/{name}", self.save_profile, ["POST"]),
            ("/profiles/{name}", self.delete_profile, ["DELETE"]),
        ]
        return [
            Route(path, _answered(handler), methods=methods) for path, handler, methods in table
        ]


def _answered(handler: Any) -> Any:
    async def wrapper(request: Request) -> Response:
        try:
            response: Response = await handler(request)
            return response
        except _RequestError as exc:
            return JSONResponse({"detail": str(exc)}, status_code=exc.status)
        except SettingsFileError as exc:
            return JSONResponse({"detail": str(exc)}, status_code=409)
        except OSError as exc:
            logger.error("settings file: %s", exc.strerror or type(exc).__name__)
            return JSONResponse({"detail": "Failed to save the settings"}, status_code=500)

    return wrapper
