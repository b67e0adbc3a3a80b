"""LLMProfileStore: LLM configurations saved by name, one JSON file each, to reuse later.

A profile is `<base_dir>/<name>.json`: the LLM's fields as the OpenHands SDK writes them
(its own profiles load here; fields ohtui's LLM does not have are ignored). Its secrets
(the API key, and the values of headers that carry credentials, such as Authorization) are
never written in clear: without `include_secrets` they are redacted; with it, they are
encrypted with the `cipher` given, or else kept in the OS keyring (service "ohtui") and
the file only says so (`"ohtui_api_key": "keyring"`). Where no safe keyring works, they are
kept in this process's memory for the profile (`"memory"`), with a warning: another
process loads the profile without them. Writes are atomic (a temporary file renamed) and files
readable by their owner only; a file lock keeps processes sharing a folder in turn.
"""

# `list` is a method of the store: annotations must not be evaluated in the class body.
from __future__ import annotations

import builtins
import contextlib
import fcntl
import json
import logging
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pydantic import SecretStr, ValidationError

from ohtui.sdk.utils.os_keyring import KeyringUnavailableError, read_secret, write_secret
from ohtui.sdk.utils.secret_headers import is_secret_header

if TYPE_CHECKING:
    from ohtui.sdk.llm.llm import LLM
    from ohtui.sdk.utils.cipher import Cipher

logger = logging.getLogger(__name__)

PROFILE_NAME_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
"""1-64 letters, digits, '.', '_' or '-', starting with a letter or digit (no paths)."""
PROFILE_NAME_REGEX: Final = re.compile(PROFILE_NAME_PATTERN)
REDACTED: Final = "**********"
"""What a profile holds in place of a key it does not carry (the OpenHands SDK's mark)."""
KEY_HOME_FIELD: Final = "ohtui_api_key"
"""Where the profile's secrets are kept when not in the file: "keyring" or "memory"."""
SCHEMA_VERSION: Final = 1
_FERNET_PREFIX: Final = "gAAAA"
_NOT_LLM_FIELDS: Final = frozenset({"schema_version", KEY_HOME_FIELD})

_memory_keys: dict[str, str] = {}
"""Secrets of profiles saved where no safe keyring worked (as JSON), for this process only."""
_thread_lock = threading.Lock()


def default_profile_dir() -> Path:
    """Where profiles are kept when no folder is given: ~/.openhands/profiles."""
    return Path.home() / ".openhands" / "profiles"


def profile_names(base_dir: Path | str | None = None) -> builtins.list[str]:
    """The names of the profiles saved in `base_dir` (the default folder when None), sorted;
    read without creating the folder."""
    folder = Path(base_dir) if base_dir is not None else default_profile_dir()
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.json") if _valid(p.stem))


class ProfileLimitExceeded(Exception):  # noqa: N818 - the SDK's name
    """Saving a new profile would exceed `max_profiles`."""


class LLMProfileStore:
    """Saves, loads, lists, renames and deletes LLM profiles in one folder."""

    def __init__(self, base_dir: Path | str | None = None) -> None:
        """`base_dir`: the profiles' folder (made if missing); ~/.openhands/profiles by default."""
        self.base_dir = Path(base_dir) if base_dir is not None else default_profile_dir()
        self.base_dir.mkdir(parents=True, exist_ok=True)

    def list(self) -> list[str]:
        """The profiles' file names ("fast.json", ...), sorted."""
        with self._locked():
            return sorted(p.name for p in self.base_dir.glob("*.json"))

    def save(
        self,
        name: str,
        llm: LLM,
        include_secrets: bool = False,
        *,
        cipher: Cipher | None = None,
        max_profiles: int | None = None,
    ) -> None:
        """Save `llm` as profile `name`, replacing one of that name.

        With `include_secrets`, its secrets (API key, credential headers) are saved
        encrypted with `cipher`, or without one in the OS keyring (see the module); otherwise
        they are redacted. `max_profiles` caps how many profiles the folder may hold
        (ProfileLimitExceeded for a new one past it).
        """
        path = self._path(name)
        data = llm.model_dump(mode="json", exclude_none=True)
        data.pop("api_key", None)
        secrets = _secrets_of(llm)
        with self._locked():
            if max_profiles is not None and not path.exists():
                count = sum(1 for p in self.base_dir.glob("*.json") if _valid(p.stem))
                if count >= max_profiles:
                    raise ProfileLimitExceeded(
                        f"Profile limit reached ({max_profiles}): delete a profile in "
                        f"{self.base_dir} before saving '{name}'."
                    )
            old_home = _read(path).get(KEY_HOME_FIELD) if path.exists() else None
            _put_secrets(data, secrets, lambda _: REDACTED)
            if secrets and include_secrets and cipher is not None:
                _put_secrets(data, secrets, cipher.encrypt)
            elif secrets and include_secrets:
                data[KEY_HOME_FIELD] = self._keep_secrets(path, secrets)
            if old_home and not data.get(KEY_HOME_FIELD):
                self._forget_secrets(path)
            data["schema_version"] = SCHEMA_VERSION
            _write_atomically(path, json.dumps(data, indent=2))
        logger.info("saved LLM profile %r at %s", name, path)

    def load(self, name: str, *, cipher: Cipher | None = None) -> LLM:
        """The LLM saved as `name`, its key restored where the profile keeps it.

        FileNotFoundError names the profiles there are; ValueError says what is wrong with
        a damaged or invalid profile.
        """
        path = self._path(name)
        with self._locked():
            if not path.exists():
                names = ", ".join(self.list_names()) or "none"
                raise FileNotFoundError(
                    f"LLM profile '{name}' not found in {self.base_dir}. Profiles: {names}"
                )
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ValueError(f"Failed to load profile '{name}': {exc}") from exc
            if not isinstance(data, dict):
                raise ValueError(f"Failed to load profile '{name}': not a JSON object")
            secrets = self._secrets_in(name, path, data, cipher)
        return _llm_from(name, data, secrets)

    def delete(self, name: str) -> None:
        """Delete profile `name` (and its secrets in the keyring); nothing if there is none."""
        path = self._path(name)
        with self._locked():
            if not path.exists():
                return
            if _read(path).get(KEY_HOME_FIELD):
                self._forget_secrets(path)
            path.unlink()
        logger.info("deleted LLM profile %r", name)

    def rename(self, old_name: str, new_name: str) -> None:
        """Rename a profile, its secrets with it (FileNotFoundError, FileExistsError)."""
        old, new = self._path(old_name), self._path(new_name)
        with self._locked():
            if not old.exists():
                raise FileNotFoundError(f"LLM profile '{old_name}' not found in {self.base_dir}")
            if old == new:
                return
            if new.exists():
                raise FileExistsError(f"LLM profile '{new_name}' already exists")
            if _read(old).get(KEY_HOME_FIELD):
                kept = self._kept_secrets(old)
                if kept:
                    self._keep_secrets(new, kept)
                self._forget_secrets(old)
            old.rename(new)

    def list_summaries(self) -> builtins.list[dict[str, Any]]:
        """Name, model, base URL and whether a key is saved, per profile, without building
        LLMs or reading keys; damaged files are skipped with a warning."""
        summaries: builtins.list[dict[str, Any]] = []
        with self._locked():
            for path in sorted(self.base_dir.glob("*.json")):
                if not _valid(path.stem):
                    logger.warning("skipping LLM profile with an invalid name: %r", path.stem)
                    continue
                data = _read(path)
                if not data:
                    logger.warning("skipping damaged LLM profile %r", path.stem)
                    continue
                api_key = data.get("api_key")
                in_file = isinstance(api_key, str) and bool(api_key.strip()) and api_key != REDACTED
                summaries.append(
                    {
                        "name": path.stem,
                        "model": data.get("model"),
                        "base_url": data.get("base_url"),
                        "api_key_set": in_file or bool(data.get(KEY_HOME_FIELD)),
                    }
                )
        return summaries

    def list_names(self) -> builtins.list[str]:
        """The profiles' names, without ".json"."""
        return sorted(p.stem for p in self.base_dir.glob("*.json"))

    # --- secrets ------------------------------------------------------------------------

    def _secrets_in(
        self, name: str, path: Path, data: dict[str, Any], cipher: Cipher | None
    ) -> Secrets:
        """The profile's secrets, wherever it keeps them; what cannot be read is left out
        (with a warning), so the LLM loads without it."""
        if data.get(KEY_HOME_FIELD):
            kept = self._kept_secrets(path)
            if kept is None:
                logger.warning(
                    "the secrets of LLM profile %r are not in the OS keyring or this process "
                    "(they were kept in the memory of the process that saved it, or removed); "
                    "it loads without them",
                    name,
                )
            return kept or {}
        found: Secrets = {}
        key = self._readable(name, "API key", data.get("api_key"), cipher)
        if key:
            found["api_key"] = key
        headers = data.get("extra_headers")
        if isinstance(headers, dict):
            readable = {
                header: self._readable(name, f"header {header}", value, cipher)
                for header, value in headers.items()
                if is_secret_header(str(header))
            }
            found["extra_headers"] = {k: v for k, v in readable.items() if v}
        return found

    def _readable(self, name: str, what: str, value: Any, cipher: Cipher | None) -> str:
        """A secret as the file holds it, read: "" when redacted or unreadable."""
        if not isinstance(value, str) or not value.strip() or value == REDACTED:
            return ""
        if value.startswith(_FERNET_PREFIX):
            secret = cipher.decrypt(value) if cipher is not None else None
            if secret is None:
                logger.warning(
                    "the %s of LLM profile %r is encrypted and %s; it loads without it",
                    what,
                    name,
                    "no cipher was given" if cipher is None else "this cipher cannot read it",
                )
                return ""
            return secret.get_secret_value()
        logger.warning(
            "LLM profile %r holds its %s in plain text; save it again to keep it encrypted "
            "or in the OS keyring",
            name,
            what,
        )
        return value

    def _keep_secrets(self, path: Path, secrets: Secrets) -> str:
        """Keep the profile's secrets in the OS keyring, else in memory; where they went."""
        user = _keyring_user(path)
        text = json.dumps(secrets)
        try:
            write_secret(user, text)
        except KeyringUnavailableError as exc:
            logger.warning(
                "%s The secrets of LLM profile %r are kept for this process only; pass "
                "cipher= to save them encrypted in the profile instead.",
                exc,
                path.stem,
            )
            with _thread_lock:
                _memory_keys[user] = text
            return "memory"
        with _thread_lock:
            _memory_keys.pop(user, None)
        return "keyring"

    def _kept_secrets(self, path: Path) -> Secrets | None:
        user = _keyring_user(path)
        with _thread_lock:
            text = _memory_keys.get(user)
        if text is None:
            try:
                text = read_secret(user)
            except KeyringUnavailableError as exc:
                logger.warning("cannot read the secrets of LLM profile %r: %s", path.stem, exc)
                return None
        try:
            kept = json.loads(text) if text else None
        except ValueError:
            kept = None
        return kept if isinstance(kept, dict) else None

    def _forget_secrets(self, path: Path) -> None:
        user = _keyring_user(path)
        with _thread_lock:
            _memory_keys.pop(user, None)
        with contextlib.suppress(KeyringUnavailableError):  # then nothing can be in it
            write_secret(user, None)

    # --- files ---------------------------------------------------------------------------

    def _path(self, name: str) -> Path:
        clean = name.removesuffix(".json")
        if not _valid(clean):
            raise ValueError(
                f"Invalid LLM profile name {name!r}: use 1-64 letters, digits, '.', '_' or "
                "'-', starting with a letter or digit."
            )
        return self.base_dir / f"{clean}.json"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """This folder, for this thread and process alone (re-entrant within a thread)."""
        held = _held.__dict__.setdefault("dirs", set())
        key = str(self.base_dir.resolve())
        if key in held:
            yield
            return
        descriptor = os.open(self.base_dir / ".profiles.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            held.add(key)
            try:
                yield
            finally:
                held.discard(key)
        finally:
            os.close(descriptor)  # closing releases the lock


_held = threading.local()


Secrets = dict[str, Any]
"""A profile's secrets: "api_key" (text) and "extra_headers" (name -> value), when it has them."""


def _secrets_of(llm: LLM) -> Secrets:
    """The API key and credential headers of `llm`, in clear (for encrypting or keeping)."""
    secrets: Secrets = {}
    if llm.api_key is not None and llm.api_key.get_secret_value():
        secrets["api_key"] = llm.api_key.get_secret_value()
    headers = {k: v for k, v in (llm.extra_headers or {}).items() if is_secret_header(k)}
    if headers:
        secrets["extra_headers"] = headers
    return secrets


def _put_secrets(data: dict[str, Any], secrets: Secrets, write: Callable[[str], str]) -> None:
    """Write each secret into the profile's data as `write` turns it (redacted, encrypted)."""
    if "api_key" in secrets:
        data["api_key"] = write(secrets["api_key"])
    for header, value in secrets.get("extra_headers", {}).items():
        data["extra_headers"][header] = write(value)


def _valid(name: str) -> bool:
    return bool(PROFILE_NAME_REGEX.match(name))


def _keyring_user(path: Path) -> str:
    return f"llm-profile:{path.resolve()}"


def _read(path: Path) -> dict[str, Any]:
    """A profile's JSON object; {} when it cannot be read as one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_atomically(path: Path, text: str) -> None:
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _llm_from(name: str, data: dict[str, Any], secrets: Secrets) -> LLM:
    """The LLM a profile describes: fields ohtui's LLM lacks, or whose value it cannot take
    (beyond the model), are left out with a note in the log."""
    from ohtui.sdk.llm.llm import LLM

    version = data.get("schema_version", 0) or 0
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ValueError(
            f"Failed to load profile '{name}': schema_version {version!r} is not one this "
            f"version reads (up to {SCHEMA_VERSION})"
        )
    unknown = sorted(k for k in data if k not in LLM.model_fields and k not in _NOT_LLM_FIELDS)
    if unknown:
        logger.info("LLM profile %r: fields ignored here: %s", name, ", ".join(unknown))
    fields = {k: v for k, v in data.items() if k in LLM.model_fields and k != "api_key"}
    if secrets.get("api_key"):
        fields["api_key"] = SecretStr(secrets["api_key"])
    headers = fields.get("extra_headers")
    if isinstance(headers, dict):
        plain = {k: v for k, v in headers.items() if not is_secret_header(str(k))}
        fields["extra_headers"] = {**plain, **secrets.get("extra_headers", {})}
    while True:
        try:
            return LLM.model_validate(fields)
        except ValidationError as exc:
            bad = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
            if "model" in bad or not bad & fields.keys() or "model" not in fields:
                raise ValueError(f"Failed to load profile '{name}': {exc}") from exc
            for field in sorted(bad & fields.keys()):
                logger.warning(
                    "LLM profile %r: %s=%r is not supported here: ignored",
                    name,
                    field,
                    fields.pop(field),
                )
