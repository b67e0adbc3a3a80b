"""Overrides for one run: environment variables and command-line flags win over config.toml.

Cheap to import (the command line builds overrides before anything heavy loads)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ohtui.settings.schema import Settings

Key = tuple[str, str]
"""(table, key) in config.toml, e.g. ("llm", "model")."""

ENV_VARS: dict[str, Key] = {
    "OHTUI_MODEL": ("llm", "model"),
    "OHTUI_BASE_URL": ("llm", "base_url"),
    "OHTUI_API_VERSION": ("llm", "api_version"),
    "OHTUI_TEMPERATURE": ("llm", "temperature"),
    "OHTUI_MAX_OUTPUT_TOKENS": ("llm", "max_output_tokens"),
    "OHTUI_TIMEOUT": ("llm", "timeout"),
    "OHTUI_NUM_RETRIES": ("llm", "num_retries"),
    "OHTUI_REASONING_EFFORT": ("llm", "reasoning_effort"),
    "OHTUI_MAX_ITERATIONS": ("agent", "max_iteration_per_run"),
    "OHTUI_CONFIRM": ("confirmation", "policy"),
    "OHTUI_SANDBOX": ("sandbox", "mode"),
    "OHTUI_THEME": ("ui", "theme"),
    "OHTUI_CONVERSATIONS_DIR": ("storage", "conversations_dir"),
    "OHTUI_SERVER": ("server", "url"),
    "OHTUI_SCREEN_READER": ("ui", "screen_reader"),
}
"""Environment variables that override a key of config.toml for one run."""


class OverrideError(ValueError):
    """An environment variable or flag has a value the setting cannot take."""


@dataclass(frozen=True, slots=True)
class Override:
    """A value for one key, and where it came from ("OHTUI_MODEL", "--model")."""

    value: Any
    origin: str


def env_overrides(environ: Mapping[str, str]) -> dict[Key, Override]:
    """The overrides set in `environ` (an empty variable counts as unset)."""
    return {
        key: Override(environ[name], name) for name, key in ENV_VARS.items() if environ.get(name)
    }


def run_overrides(
    environ: Mapping[str, str],
    *,
    model: str | None = None,
    base_url: str | None = None,
    policy: str | None = None,
    sandbox: str | None = None,
    server: str | None = None,
    screen_reader: bool = False,
) -> dict[Key, Override]:
    """The overrides of one run: environment variables, then the flags given."""
    overrides = env_overrides(environ)
    flags = {
        ("llm", "model"): (model, "--model"),
        ("llm", "base_url"): (base_url, "--base-url"),
        ("confirmation", "policy"): (policy, "--confirm"),
        ("sandbox", "mode"): (sandbox, "--sandbox"),
        ("server", "url"): (server, "--server"),
    }
    for key, (value, flag) in flags.items():
        if value is not None:
            overrides[key] = Override(value, flag)
    if screen_reader:  # a flag that only turns it on: unset, the variable or the file decide
        overrides[("ui", "screen_reader")] = Override(True, "--screen-reader")
    return overrides


def apply_overrides(settings: Settings, overrides: Mapping[Key, Override]) -> Settings:
    """`settings` with `overrides` applied; OverrideError names the variable or flag at fault."""
    if not overrides:
        return settings
    from pydantic import ValidationError

    from ohtui.settings.schema import Settings

    data = settings.model_dump()
    for (table, key), override in overrides.items():
        data[table][key] = override.value
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        from ohtui.settings.config_file import describe_error

        error = exc.errors(include_url=False)[0]
        loc = tuple(str(part) for part in error["loc"][:2])
        origin = overrides.get(loc) if len(loc) == 2 else None
        name = origin.origin if origin else ".".join(map(str, error["loc"]))
        raise OverrideError(f"{name}: {describe_error(error)}.") from None
