"""When hooks run and what they are told: HookEventType, HookEvent, HookDecision."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class HookEventType(str, Enum):
    """When a hook runs."""

    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    STOP = "Stop"
    SESSION_START = "SessionStart"
    SESSION_END = "SessionEnd"


class HookDecision(str, Enum):
    """A hook's verdict on what it was asked about."""

    ALLOW = "allow"
    DENY = "deny"


class HookEvent(BaseModel):
    """The event a hook is asked about; command hooks read it as JSON on stdin."""

    model_config = ConfigDict(defer_build=True, use_enum_values=True)

    event_type: HookEventType
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None
    tool_response: dict[str, Any] | None = None
    message: str | None = Field(default=None, description="The user's prompt.")
    session_id: str | None = None
    working_dir: str | None = None
    stop_hook_active: bool | None = Field(
        default=None, description="Stop only: whether a Stop hook already kept this run going."
    )
    metadata: dict[str, Any] = Field(default_factory=dict)

    def stdin_json(self) -> str:
        """The JSON a command hook reads: these fields, plus Claude Code's names for them.

        Claude Code's hooks read `hook_event_name`, `cwd` and `prompt`; giving both spellings
        lets hooks written for either run unchanged.
        """
        data = self.model_dump(mode="json", exclude_none=True)
        data["hook_event_name"] = data["event_type"]
        if self.working_dir is not None:
            data["cwd"] = self.working_dir
        if self.message is not None:
            data["prompt"] = self.message
        return json.dumps(data)
