"""HookExecutionEvent: one hook ran (what for, what it said, whether it blocked)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import SourceType

if TYPE_CHECKING:
    from rich.text import Text

HookEventType = Literal[
    "PreToolUse", "PostToolUse", "UserPromptSubmit", "SessionStart", "SessionEnd", "Stop"
]
"""When a hook runs, by its name in the hooks file (`ohtui.sdk.hooks.HookEventType`'s values)."""

NO_EXIT_CODE = -1
"""`exit_code` of a hook that never exited by itself (timed out, could not start, not a command)."""


class HookExecutionEvent(Event):
    """A hook ran: for which event and command, how it went, and what it said."""

    source: SourceType = "hook"
    hook_event_type: HookEventType = Field(description="What the hook ran for (PreToolUse, ...).")
    hook_command: str = Field(description="The hook's command (a prompt or agent hook: its label).")
    tool_name: str | None = Field(default=None, description="The tool, for tool hooks.")
    success: bool = Field(description="Whether the hook ran without an error.")
    blocked: bool = Field(default=False, description="Whether it blocked what it ran for.")
    exit_code: int = Field(description=f"The command's exit code ({NO_EXIT_CODE}: none).")
    stdout: str = ""
    stderr: str = ""
    reason: str | None = Field(default=None, description="Why it blocked, in its own words.")
    additional_context: str | None = Field(
        default=None, description="Text it added for the model (UserPromptSubmit, Stop)."
    )
    error: str | None = Field(default=None, description="What went wrong running it.")
    action_id: str | None = Field(default=None, description="The action, for tool hooks.")
    message_id: str | None = Field(default=None, description="The message, for UserPromptSubmit.")
    hook_input: dict[str, Any] | None = Field(
        default=None, description="What the hook was told about the event."
    )

    @model_validator(mode="before")
    @classmethod
    def _earlier_fields(cls, data: Any) -> Any:
        """Read events saved by earlier ohtui versions (hook_event_name, command, exit_code None):
        conversations on disk keep loading."""
        if not isinstance(data, dict) or "hook_event_name" not in data:
            return data
        out = {k: v for k, v in data.items() if k not in ("hook_event_name", "command")}
        out["hook_event_type"] = data["hook_event_name"]
        out["hook_command"] = data.get("command", "")
        out.setdefault("success", not data.get("error"))
        if out.get("exit_code") is None:
            out["exit_code"] = NO_EXIT_CODE
        if out.get("source") == "environment":
            out["source"] = "hook"
        return out

    @property
    def visualize(self) -> Text:
        """The hook and its outcome: red when it failed, yellow when it blocked."""
        from rich.text import Text

        tool = f" ({self.tool_name})" if self.tool_name else ""
        head = f"Hook {self.hook_event_type}{tool} `{self.hook_command}`"
        if self.error:
            return Text(f"{head} failed: {self.error}", style="red")
        if self.blocked:
            why = self.reason or self.additional_context or "no reason given"
            return Text(f"{head} blocked: {why}", style="yellow")
        text = Text(f"{head} ran")
        if self.additional_context:
            text.append(f"; added context: {self.additional_context[:100]}")
        return text

    def __str__(self) -> str:
        status = "BLOCKED" if self.blocked else ("SUCCESS" if self.success else "FAILED")
        tool = f" ({self.tool_name})" if self.tool_name else ""
        return f"HookExecutionEvent: {self.hook_event_type}{tool} - {status}"
