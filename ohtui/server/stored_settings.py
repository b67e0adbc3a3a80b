"""The settings a client stores on `ohtui serve` (`/api/settings`, its secrets, LLM
profiles): one JSON file in the data dir, readable by this user only, every secret in it
encrypted with the server's key (Fernet). A value is never written in the clear.

What is kept: `agent_settings` (the LLM, MCP servers: any JSON object, deep-merged by
PATCH), custom secrets (name, value, description) and named LLM profiles. Every key named
`api_key` anywhere in them, and each secret's value, is kept as a token of the server's
cipher; reads decrypt it, answers redact it unless the client asks for it in the clear
(`X-Expose-Secrets: plaintext`, as the OpenHands server allows an authenticated client).
"""

from __future__ import annotations

import copy
import json
import os
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ohtui.sdk.utils.cipher import Cipher

SECRET_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
"""A secret's name: a letter, then letters, digits and underscores; 64 at most (it
becomes an environment variable)."""
REDACTED = "**********"
_ENCRYPTED = "__ohtui_encrypted__"
"""Marks a stored token: `{"__ohtui_encrypted__": "<Fernet token>"}`."""


class SettingsFileError(Exception):
    """The settings file cannot be read (damaged, or written with another key)."""


class StoredSettings:
    """The server's stored settings; thread-safe, each change written at once."""

    def __init__(self, path: Path, cipher: Cipher) -> None:
        self.path = path
        self.cipher = cipher
        self._lock = threading.Lock()

    # --- the file --------------------------------------------------------------------

    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise SettingsFileError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SettingsFileError(f"{self.path} is damaged (not JSON): {exc}") from exc
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(data, file)
        os.replace(temporary, self.path)

    def _change(self, change: Callable[[dict[str, Any]], Any]) -> Any:
        with self._lock:
            data = self._read()
            result = change(data)
            self._write(data)
            return result

    # --- encryption ------------------------------------------------------------------

    def _seal(self, data: Any) -> Any:
        """`data` with every `api_key` string encrypted."""
        if isinstance(data, Mapping):
            out: dict[str, Any] = {}
            for key, value in data.items():
                if key == "api_key" and isinstance(value, str) and value:
                    out[key] = {_ENCRYPTED: self.cipher.encrypt(value)}
                else:
                    out[key] = self._seal(value)
            return out
        if isinstance(data, list):
            return [self._seal(item) for item in data]
        return data

    def _open(self, data: Any, expose: bool) -> Any:
        """`data` with every token decrypted (`expose`) or redacted."""
        if isinstance(data, Mapping):
            if set(data) == {_ENCRYPTED}:
                if not expose:
                    return REDACTED
                clear = self.cipher.decrypt(data[_ENCRYPTED])
                if clear is None:
                    raise SettingsFileError(
                        f"a secret in {self.path} was saved with another server key: set it again"
                    )
                return clear.get_secret_value()
            return {key: self._open(value, expose) for key, value in data.items()}
        if isinstance(data, list):
            return [self._open(item, expose) for item in data]
        return data

    # --- agent settings --------------------------------------------------------------

    def settings(self, expose: bool = False) -> dict[str, Any]:
        """The settings as `GET /api/settings` answers them."""
        with self._lock:
            data = self._read()
        agent = data.get("agent_settings") or {}
        llm = agent.get("llm") if isinstance(agent.get("llm"), dict) else {}
        return {
            "agent_settings": self._open(agent, expose),
            "conversation_settings": data.get("conversation_settings") or {},
            "llm_api_key_is_set": bool(llm and llm.get("api_key")),
            "active_profile": data.get("active_profile"),
            "active_agent_profile_id": None,
            "misc_settings": data.get("misc_settings") or {},
        }

    def update(self, diff: Mapping[str, Any]) -> None:
        """Deep-merge `agent_settings_diff`, `conversation_settings_diff` and
        `misc_settings_diff` (a null inside a nested object removes that key), and set
        `active_profile` when given."""

        def change(data: dict[str, Any]) -> None:
            for part in ("agent_settings", "conversation_settings", "misc_settings"):
                given = diff.get(f"{part}_diff")
                if given is not None:
                    sealed = self._seal(given) if part == "agent_settings" else given
                    data[part] = _merged(data.get(part) or {}, sealed)
            if "active_profile" in diff:
                data["active_profile"] = diff["active_profile"]

        self._change(change)

    # --- secrets ---------------------------------------------------------------------

    def secrets(self) -> list[dict[str, Any]]:
        """Every secret's name and description (never its value)."""
        with self._lock:
            stored = self._read().get("secrets") or {}
        return [{"name": n, "description": s.get("description")} for n, s in stored.items()]

    def secret(self, name: str) -> str | None:
        """The value of secret `name`, or None."""
        with self._lock:
            entry = (self._read().get("secrets") or {}).get(name)
        if not isinstance(entry, dict):
            return None
        value = self._open(entry.get("value"), expose=True)
        return value if isinstance(value, str) else None

    def put_secret(self, name: str, value: str, description: str | None) -> None:
        """Store (or replace) secret `name`, its value encrypted."""

        def change(data: dict[str, Any]) -> None:
            data.setdefault("secrets", {})[name] = {
                "value": {_ENCRYPTED: self.cipher.encrypt(value)},
                "description": description,
            }

        self._change(change)

    def delete_secret(self, name: str) -> bool:
        """Remove secret `name`; whether there was one."""

        def change(data: dict[str, Any]) -> bool:
            return (data.get("secrets") or {}).pop(name, None) is not None

        return bool(self._change(change))

    # --- LLM profiles ----------------------------------------------------------------

    def profiles(self) -> list[str]:
        """The names of the stored LLM profiles."""
        with self._lock:
            return sorted(self._read().get("profiles") or {})

    def profile(self, name: str, expose: bool = False) -> dict[str, Any] | None:
        """Profile `name`'s LLM settings (api_key redacted unless `expose`), or None."""
        with self._lock:
            entry = (self._read().get("profiles") or {}).get(name)
        return self._open(entry, expose) if isinstance(entry, dict) else None

    def put_profile(self, name: str, llm: Mapping[str, Any]) -> bool:
        """Store (or replace) profile `name`; whether it is new."""

        def change(data: dict[str, Any]) -> bool:
            profiles = data.setdefault("profiles", {})
            new = name not in profiles
            profiles[name] = self._seal(dict(llm))
            return new

        return bool(self._change(change))

    def delete_profile(self, name: str) -> bool:
        """Remove profile `name`; whether there was one."""

        def change(data: dict[str, Any]) -> bool:
            return (data.get("profiles") or {}).pop(name, None) is not None

        return bool(self._change(change))


def _merged(base: Mapping[str, Any], diff: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `diff` merged in: objects recursively, a null removing the key."""
    out = copy.deepcopy(dict(base))
    for key, value in diff.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merged(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out
