"""HookConfig: which hooks run at which points of a conversation (Claude Code's format)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from enum import Enum
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ohtui.sdk.hooks.types import HookEventType

logger = logging.getLogger(__name__)

HOOKS_FILE = Path(".openhands") / "hooks.json"
"""Where `HookConfig.load` looks, under the project and then under the home directory."""


class HookType(str, Enum):
    """What a hook is: a shell command, one LLM question, or a small agent."""

    COMMAND = "command"
    PROMPT = "prompt"
    AGENT = "agent"


def _command_always_in_schema(schema: dict[str, Any]) -> None:
    # `command` defaults to "" only so prompt and agent hooks need not give one; the
    # published schema keeps it a required string, as the OpenHands REST contract has it.
    schema["properties"]["command"].pop("default", None)
    if "command" not in schema.setdefault("required", []):
        schema["required"].append("command")


class HookDefinition(BaseModel):
    """One hook. A command gets the event as JSON on stdin; prompt and agent hooks ask the
    conversation's LLM to allow or deny it."""

    model_config = ConfigDict(
        defer_build=True,
        frozen=True,
        extra="forbid",
        populate_by_name=True,
        json_schema_extra=_command_always_in_schema,
    )

    type: HookType = HookType.COMMAND
    name: str | None = Field(default=None, description="A label for logs and events.")
    command: str = ""
    prompt: str | None = Field(default=None, description="Prompt hooks: the policy to apply.")
    system_prompt: str | None = Field(
        default=None, description="Agent hooks: the instructions of the agent that decides."
    )
    tools: list[str] = Field(
        default_factory=list, description="Agent hooks: tools the agent may use besides finish."
    )
    timeout: float = Field(default=60.0, gt=0, description="Seconds before it is abandoned.")
    max_iterations: int = Field(default=3, gt=0, description="Agent hooks: steps at most.")
    async_: bool = Field(
        default=False, alias="async", description="Commands only: run in the background."
    )

    @model_validator(mode="after")
    def _fields_fit_the_type(self) -> HookDefinition:
        kind = self.type.value
        if self.type is HookType.COMMAND:
            if not self.command:
                raise ValueError("'command' is required when type is 'command'")
            return self
        if self.command:
            hint = "system_prompt" if self.type is HookType.AGENT else "prompt"
            raise ValueError(
                f"'command' must not be set when type is '{kind}'; put the instructions in '{hint}'"
            )
        if self.type is HookType.PROMPT and not self.prompt:
            raise ValueError("'prompt' is required when type is 'prompt'")
        if self.async_:
            raise ValueError(
                f"'async' is not supported for {kind} hooks: their decision is awaited"
            )
        return self

    @property
    def display_command(self) -> str:
        """How logs and events name this hook: its command, else its type and name."""
        if self.command:
            return self.command
        kind = self.type.value
        if self.name:
            return f"{kind}-hook:{self.name}"
        text = self.prompt if self.type is HookType.PROMPT else self.system_prompt
        return f"{kind}-hook:{(text or kind)[:20]}"


class HookMatcher(BaseModel):
    """Hooks for the tools whose name matches: exactly, `*` or empty (all), `/regex/`, or a
    bare regex such as `Edit|Write` (recognised by its special characters)."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    matcher: str = "*"
    hooks: list[HookDefinition] = Field(default_factory=list)

    def matches(self, tool_name: str | None) -> bool:
        """Whether this matcher applies to `tool_name` (events without a tool match all)."""
        if tool_name is None or self.matcher in ("*", ""):
            return True
        pattern = self._pattern
        if pattern is not None:
            return pattern.fullmatch(tool_name) is not None
        return self.matcher == tool_name

    @cached_property
    def _pattern(self) -> re.Pattern[str] | None:
        text = self.matcher
        delimited = len(text) > 2 and text.startswith("/") and text.endswith("/")
        if delimited:
            text = text[1:-1]
        elif not _REGEX_SIGNS.search(text):
            return None  # a plain tool name
        try:
            return re.compile(text)
        except re.error:
            # An unusable regex matches nothing when delimited, and only itself otherwise.
            return re.compile("(?!)") if delimited else None


_REGEX_SIGNS = re.compile(r"[|.*+?\[\]()^$\\]")


class HookConfigError(ValueError):
    """A hook configuration file cannot be used; the message says where and why."""


_FIELD_NAMES = {
    "pre_tool_use": HookEventType.PRE_TOOL_USE,
    "post_tool_use": HookEventType.POST_TOOL_USE,
    "user_prompt_submit": HookEventType.USER_PROMPT_SUBMIT,
    "stop": HookEventType.STOP,
    "session_start": HookEventType.SESSION_START,
    "session_end": HookEventType.SESSION_END,
}
"""The snake_case spelling of each event's name."""


class HookConfig(BaseModel):
    """Hooks by event, e.g. `{"PreToolUse": [{"matcher": "terminal", "hooks": [...]}]}`.

    Accepts Claude Code's PascalCase event names or the snake_case field names, optionally
    wrapped in `{"hooks": {...}}` (as in Claude Code's settings files).
    """

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid", populate_by_name=True)

    pre_tool_use: list[HookMatcher] = Field(default_factory=list, alias="PreToolUse")
    post_tool_use: list[HookMatcher] = Field(default_factory=list, alias="PostToolUse")
    user_prompt_submit: list[HookMatcher] = Field(default_factory=list, alias="UserPromptSubmit")
    stop: list[HookMatcher] = Field(default_factory=list, alias="Stop")
    session_start: list[HookMatcher] = Field(default_factory=list, alias="SessionStart")
    session_end: list[HookMatcher] = Field(default_factory=list, alias="SessionEnd")

    @model_validator(mode="before")
    @classmethod
    def _event_names(cls, data: Any) -> Any:
        """Unwrap `{"hooks": ...}` and spell every event name as Claude Code does."""
        if not isinstance(data, dict):
            return data
        if "hooks" in data:
            data = data["hooks"]  # other keys of a settings file are not ours
            if not isinstance(data, dict):
                raise ValueError("'hooks' must map event names to lists of matchers")
        names = {e.value for e in HookEventType}
        mapped: dict[str, Any] = {}
        spelled: dict[str, str] = {}
        for key, value in data.items():
            name = _FIELD_NAMES[key].value if key in _FIELD_NAMES else key
            if name not in names:
                raise ValueError(
                    f"Unknown event type '{key}'. Valid types: "
                    f"{', '.join(e.value for e in HookEventType)} (or their snake_case names)"
                )
            if name in mapped:
                raise ValueError(
                    f"Duplicate hook event: '{spelled[name]}' and '{key}' both name {name}; "
                    "keep one of them"
                )
            mapped[name] = value
            spelled[name] = key
        return mapped

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HookConfig:
        """The config in `data` (ValueError, from pydantic, naming what is wrong)."""
        return cls.model_validate(data)

    @classmethod
    def load(
        cls, path: str | Path | None = None, working_dir: str | Path | None = None
    ) -> HookConfig:
        """Read a JSON hooks file: `path`, else `.openhands/hooks.json` under `working_dir`
        (default: the current directory) or the home directory.

        No file means no hooks; a file that cannot be used raises HookConfigError naming it.
        """
        if path is None:
            base = Path(working_dir) if working_dir is not None else Path.cwd()
            found = [p for p in (base / HOOKS_FILE, Path.home() / HOOKS_FILE) if p.is_file()]
            if not found:
                return cls()
            path = found[0]
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            logger.warning("hook config %s does not exist; no hooks loaded from it", path)
            return cls()
        except (OSError, UnicodeDecodeError) as exc:
            detail = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise HookConfigError(f"cannot read hook config {path}: {detail}") from exc
        try:
            data: Any = json.loads(text)
        except json.JSONDecodeError as exc:
            raise HookConfigError(f"{path} line {exc.lineno}: not valid JSON ({exc.msg})") from exc
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'top level'}: {e['msg']}"
                for e in exc.errors()
            )
            raise HookConfigError(f"{path}: {problems}") from exc

    @classmethod
    def merge(cls, configs: Iterable[HookConfig | None]) -> HookConfig | None:
        """All the configs' hooks, event by event in order (all of them run); None if none."""
        present = [c for c in configs if c is not None and not c.is_empty()]
        if not present:
            return None
        return cls.model_validate(
            {name: [m for c in present for m in getattr(c, name)] for name in cls.model_fields}
        )

    def _matchers(self, event_type: HookEventType) -> list[HookMatcher]:
        return {
            HookEventType.PRE_TOOL_USE: self.pre_tool_use,
            HookEventType.POST_TOOL_USE: self.post_tool_use,
            HookEventType.USER_PROMPT_SUBMIT: self.user_prompt_submit,
            HookEventType.STOP: self.stop,
            HookEventType.SESSION_START: self.session_start,
            HookEventType.SESSION_END: self.session_end,
        }[HookEventType(event_type)]

    def get_hooks_for_event(
        self, event_type: HookEventType, tool_name: str | None = None
    ) -> list[HookDefinition]:
        """The hooks to run for an event (and tool), in order."""
        return [h for m in self._matchers(event_type) if m.matches(tool_name) for h in m.hooks]

    def has_hooks_for_event(self, event_type: HookEventType) -> bool:
        """Whether any hook is configured for this event (for any tool)."""
        return any(m.hooks for m in self._matchers(event_type))

    def is_empty(self) -> bool:
        """Whether no hook is configured at all."""
        return not any(self.has_hooks_for_event(event) for event in HookEventType)
