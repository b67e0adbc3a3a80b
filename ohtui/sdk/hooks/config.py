"""HookConfig: commands to run at points of a conversation's life (Claude Code's format)."""

from __future__ import annotations

import json
import re
from enum import Enum
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class HookEventType(str, Enum):
    """When a hook runs."""

    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    STOP = "Stop"
    SESSION_START = "SessionStart"
    SESSION_END = "SessionEnd"


class HookDefinition(BaseModel):
    """One command; it gets the event as JSON on stdin."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    type: Literal["command"] = "command"
    command: str = Field(min_length=1)
    timeout: float = Field(default=60.0, gt=0, description="Seconds before it is killed.")


class HookMatcher(BaseModel):
    """Hooks for the tools whose name matches: exactly, `*` (all), or as a regex."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    matcher: str = "*"
    hooks: list[HookDefinition] = Field(default_factory=list)

    def matches(self, tool_name: str | None) -> bool:
        """Whether this matcher applies to `tool_name` (hooks without a tool always match)."""
        if tool_name is None or self.matcher in ("*", ""):
            return True
        if self.matcher == tool_name:
            return True
        pattern = self._pattern
        return pattern is not None and pattern.fullmatch(tool_name) is not None

    @cached_property
    def _pattern(self) -> re.Pattern[str] | None:
        try:
            return re.compile(self.matcher)
        except re.error:
            return None


class HookConfigError(ValueError):
    """A hook configuration file cannot be used; the message says where and why."""


class HookConfig(BaseModel):
    """Hooks by event type, e.g. `{"PreToolUse": [{"matcher": "terminal", "hooks": [...]}]}`."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid", populate_by_name=True)

    pre_tool_use: list[HookMatcher] = Field(default_factory=list, alias="PreToolUse")
    post_tool_use: list[HookMatcher] = Field(default_factory=list, alias="PostToolUse")
    user_prompt_submit: list[HookMatcher] = Field(default_factory=list, alias="UserPromptSubmit")
    stop: list[HookMatcher] = Field(default_factory=list, alias="Stop")
    session_start: list[HookMatcher] = Field(default_factory=list, alias="SessionStart")
    session_end: list[HookMatcher] = Field(default_factory=list, alias="SessionEnd")

    @classmethod
    def load(cls, path: str | Path) -> HookConfig:
        """Read a JSON file (either the config itself or `{"hooks": {...}}`)."""
        path = Path(path)
        try:
            data: Any = json.loads(path.read_text())
        except OSError as exc:
            raise HookConfigError(f"cannot read hook config {path}: {exc.strerror}") from exc
        except json.JSONDecodeError as exc:
            raise HookConfigError(f"{path} line {exc.lineno}: not valid JSON ({exc.msg})") from exc
        if isinstance(data, dict) and set(data) == {"hooks"}:
            data = data["hooks"]
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
            )
            raise HookConfigError(f"{path}: {problems}") from exc

    def hooks_for(self, event: HookEventType, tool_name: str | None = None) -> list[HookDefinition]:
        """The hooks to run for an event (and tool), in order."""
        matchers: list[HookMatcher] = {
            HookEventType.PRE_TOOL_USE: self.pre_tool_use,
            HookEventType.POST_TOOL_USE: self.post_tool_use,
            HookEventType.USER_PROMPT_SUBMIT: self.user_prompt_submit,
            HookEventType.STOP: self.stop,
            HookEventType.SESSION_START: self.session_start,
            HookEventType.SESSION_END: self.session_end,
        }[event]
        return [hook for m in matchers if m.matches(tool_name) for hook in m.hooks]

    @property
    def is_empty(self) -> bool:
        """Whether no hook is configured."""
        return not any(
            (
                self.pre_tool_use,
                self.post_tool_use,
                self.user_prompt_submit,
                self.stop,
                self.session_start,
                self.session_end,
            )
        )
