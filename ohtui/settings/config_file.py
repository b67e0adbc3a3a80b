"""ConfigFile: reads and writes config.toml.

Reading never raises for what the file says: a problem comes back as a ConfigError naming
the file, the line, the key and what is expected, next to the defaults to run with. Writing
is atomic (a temporary file, then a rename) and keeps every key we do not know.
"""

from __future__ import annotations

import copy
import difflib
import os
import re
import shutil
import tempfile
import threading
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ohtui.settings import paths
from ohtui.settings.schema import Settings


class ConfigError(Exception):
    """config.toml cannot be used as it is; the message says where and what to write."""

    def __init__(self, path: Path, message: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = f"{path}, line {line}" if line else str(path)
        super().__init__(f"{where}: {message}")


@dataclass
class LoadedConfig:
    """What reading config.toml gave: settings to run with, and what was wrong."""

    settings: Settings
    error: ConfigError | None = None
    """Set when the file is invalid: `settings` are then the defaults."""
    warnings: list[str] = field(default_factory=list)
    """Keys we do not know (kept, but not read), with a likely meant one."""
    exists: bool = False


class ConfigFile:
    """config.toml at `path` (it need not exist yet)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def load(self) -> LoadedConfig:
        """Read and validate the file; a missing file means every default."""
        try:
            text = paths.config_text(self.path)
        except FileNotFoundError:
            return LoadedConfig(Settings())
        except OSError as exc:  # UnusableFileError has no strerror: "is not a regular file"
            reason = exc.strerror or str(exc)
            # Saving over it would lose what it holds: save() reads it again and fails too.
            return LoadedConfig(
                Settings(),
                ConfigError(self.path, f"cannot be read ({reason}); the defaults are used."),
                exists=True,
            )
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            return LoadedConfig(Settings(), self._syntax_error(exc), exists=True)
        try:
            settings = Settings.model_validate(raw)
        except ValidationError as exc:
            error = self._invalid(exc, text)
            return LoadedConfig(_valid_part(raw), error, self._unknown_keys(raw, text), True)
        return LoadedConfig(settings, warnings=self._unknown_keys(raw, text), exists=True)

    def save(self, settings: Settings) -> None:
        """Write `settings`, keeping keys we do not know; raises OSError if it cannot.

        A file with errors is copied to config.toml.bak first: what the user wrote that we
        could not read is never lost.
        """
        with self._lock:
            self._write(_merge(self._raw_for_update(), settings.to_toml()))

    def update(self, change: Callable[[Settings], None]) -> Settings:
        """Read the file, apply `change` to its settings, write it back; returns the result."""
        with self._lock:
            settings = self.load().settings
            change(settings)
            self._write(_merge(self._raw_for_update(), settings.to_toml()))
            return settings

    def _raw_for_update(self) -> dict[str, Any]:
        """The file's tables, to keep what we do not know; a file with errors is backed up."""
        try:
            text = paths.config_text(self.path)
        except FileNotFoundError:
            return {}
        backup = self.path.with_name(f"{self.path.name}.bak")
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            shutil.copy2(self.path, backup)
            return {}
        try:
            Settings.model_validate(raw)
        except ValidationError:
            shutil.copy2(self.path, backup)
        return raw

    def _write(self, data: dict[str, Any]) -> None:
        import tomli_w

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".config-", suffix=".toml")
        try:
            with os.fdopen(fd, "wb") as file:
                tomli_w.dump(data, file)
                file.flush()
                os.fsync(file.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    # --- messages -------------------------------------------------------------------------

    def _syntax_error(self, exc: tomllib.TOMLDecodeError) -> ConfigError:
        text = str(exc)
        found = re.search(r"\(at line (\d+), column (\d+)\)", text)
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", text)
        line = int(found.group(1)) if found else None
        column = f", column {found.group(2)}" if found else ""
        return ConfigError(
            self.path,
            f"this is not valid TOML{column}: {reason[:1].lower()}{reason[1:]}. "
            "Fix the file, or open /settings (saving there keeps a copy as .bak); the defaults "
            "are used until then.",
            line,
        )

    def _invalid(self, exc: ValidationError, text: str) -> ConfigError:
        problems = [_problem(error, text) for error in exc.errors(include_url=False)]
        # In the order they are written, not the order of the settings' fields.
        problems.sort(key=lambda problem: (problem[0] is None, problem[0] or 0))
        if len(problems) == 1:
            line, message = problems[0]
            return ConfigError(
                self.path,
                f"{message}. Fix it or open /settings; the default is used until then.",
                line,
            )
        listed = "\n".join(
            f"  {f'line {line}: ' if line else ''}{message}" for line, message in problems
        )
        error = ConfigError(
            self.path,
            f"{len(problems)} problems; those keys take their defaults until fixed (edit the "
            f"file or open /settings):\n{listed}",
        )
        error.line = problems[0][0]
        return error

    def _unknown_keys(self, raw: dict[str, Any], text: str) -> list[str]:
        warnings: list[str] = []
        for section, table in raw.items():
            if section not in Settings.model_fields:
                hint = _did_you_mean(section, list(Settings.model_fields))
                warnings.append(f"{self._where(text, [section])}: unknown table [{section}]{hint}")
                continue
            if not isinstance(table, dict):
                continue
            known = section_keys(section)
            for key in table:
                if key not in known:
                    hint = _did_you_mean(key, known)
                    warnings.append(
                        f"{self._where(text, [section, key])}: unknown key {section}.{key} "
                        f"(kept, not used){hint}"
                    )
        return warnings

    def _where(self, text: str, loc: list[str | int]) -> str:
        line = locate(text, loc)
        return f"{self.path}, line {line}" if line else str(self.path)


_HEADER = re.compile(r"^\s*\[(\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.-]+)\s*=""")


def locate(text: str, loc: list[str | int]) -> int | None:
    """The 1-based line where the key at `loc` (e.g. ["llm", "timeout"]) is written.

    Understands [tables], [[arrays of tables]] and dotted keys; falls back to the line of
    the deepest enclosing table or key, or None when nothing of it is written.
    """
    names = [p for p in loc if isinstance(p, str)]
    index = next((p for p in loc if isinstance(p, int)), None)
    best, best_depth = None, 0
    table: list[str] = []
    entries: dict[tuple[str, ...], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if header := _HEADER.match(line):
            table = _split(header.group(2))
            if header.group(1):  # [[array of tables]]: one entry per header
                entry = entries[tuple(table)] = entries.get(tuple(table), -1) + 1
                if index is not None and entry != index:
                    table = ["\0"]  # not the entry the error is about
            path = table
        elif key := _KEY.match(line):
            path = table + _split(key.group(1))
        else:
            continue
        if path == names:
            return number
        if names[: len(path)] == path and len(path) > best_depth:
            best, best_depth = number, len(path)
    return best


def _split(dotted: str) -> list[str]:
    return [part.strip().strip("\"'") for part in dotted.split(".")]


def section_keys(section: str) -> list[str]:
    """The keys a config.toml table of ours knows."""
    model = Settings.model_fields[section].annotation
    if isinstance(model, type) and issubclass(model, BaseModel):
        return list(model.model_fields)
    return []


def _merge(raw: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """`raw` with our sections' known keys replaced by `ours` (a default: removed)."""
    merged = dict(raw)
    for section in Settings.model_fields:
        known = section_keys(section)
        old = raw.get(section)
        table = {k: v for k, v in old.items() if k not in known} if isinstance(old, dict) else {}
        table.update(ours.get(section, {}))
        if table:
            merged[section] = table
        else:
            merged.pop(section, None)
    return merged


def _valid_part(raw: dict[str, Any]) -> Settings:
    """Settings from the keys of `raw` that are valid: each invalid key takes its default,
    an invalid entry of a list (a rule) is left out."""
    data = copy.deepcopy(raw)
    for _ in range(10):  # each round drops what every error points at; nesting is shallow
        try:
            return Settings.model_validate(data)
        except ValidationError as exc:
            for error in exc.errors():
                _drop(data, list(error["loc"]))
            data = _without_dropped(data)
    return Settings()


_DROPPED = object()


def _drop(data: Any, loc: list[Any]) -> None:
    """Mark the value at `loc` (or the deepest part of it that exists) as dropped."""
    for depth, part in enumerate(loc):
        if isinstance(data, dict):
            present = part in data
        else:
            present = isinstance(data, list) and isinstance(part, int) and part < len(data)
        if not present:
            return
        if depth == len(loc) - 1 or not isinstance(data[part], dict | list):
            data[part] = _DROPPED
            return
        data = data[part]


def _without_dropped(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _without_dropped(v) for k, v in data.items() if v is not _DROPPED}
    if isinstance(data, list):
        return [_without_dropped(v) for v in data if v is not _DROPPED]
    return data


def _problem(error: Any, text: str) -> tuple[int | None, str]:
    """(line, "key: what is expected (found what)") for one validation error."""
    loc = list(error["loc"])
    return locate(text, loc), f"{_dotted(loc)}: {describe_error(error)}"


def describe_error(error: Any) -> str:
    """What a pydantic error expects, and the value found: 'expected a number (found "hot")'."""
    got = error.get("input")
    shown = f" (found {_toml_repr(got)})" if not isinstance(got, dict | list) else ""
    return f"{_expected(error)}{shown}"


def _dotted(loc: list[Any]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the file"


def _expected(error: Any) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    plain = {
        "float_parsing": "expected a number",
        "float_type": "expected a number",
        "int_parsing": "expected a whole number",
        "int_type": "expected a whole number",
        "int_from_float": "expected a whole number",
        "bool_parsing": "expected true or false",
        "bool_type": "expected true or false",
        "string_type": "expected a text in quotes",
        "list_type": 'expected a list, e.g. ["a", "b"]',
        "dict_type": "expected a table",
        "model_type": "expected a table",
        "extra_forbidden": "is not a key here",
        "missing": "is required",
        "string_too_short": "must not be empty",
    }
    if kind in plain:
        return plain[kind]
    if kind in ("literal_error", "enum"):
        return f"expected one of {ctx.get('expected', '')}"
    bounds = {
        "greater_than": "greater than",
        "greater_than_equal": "at least",
        "less_than": "less than",
        "less_than_equal": "at most",
    }
    if kind in bounds:
        limit = next(iter(ctx.values()), "")
        if isinstance(limit, float) and limit.is_integer():
            limit = int(limit)
        return f"expected a number {bounds[kind]} {limit}"
    message = str(error["msg"])
    return message.removeprefix("Value error, ")


def _toml_repr(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _did_you_mean(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f"; did you mean {close[0]}?" if close else ""
