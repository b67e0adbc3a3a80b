"""SystemPromptEvent: the system prompt and the tools offered to the model."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, PlainSerializer, PlainValidator

from ohtui.sdk.event.base import LLMConvertibleEvent
from ohtui.sdk.event.base.types import SourceType
from ohtui.sdk.llm.message import Message, TextContent
from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolDefinition

if TYPE_CHECKING:
    from rich.text import Text

DESCRIPTION_PREVIEW = 100
PARAMETERS_PREVIEW = 200


class OfferedTool(ToolDefinition[Action, Observation]):
    """A tool known only as the model was offered it (name, description, parameters): read
    back from a saved conversation, it can be shown, not run."""

    entry: dict[str, Any] = Field(
        default_factory=dict, description="The chat-completions entry, as it was offered."
    )

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> OfferedTool:
        """The tool a chat-completions entry (or the SDK's own dump of a tool) describes."""
        if "function" not in entry and "name" in entry:  # the SDK's own dump of a tool
            entry = {
                "type": "function",
                "function": {"name": entry["name"], "description": entry.get("description", "")},
            }
        function = entry.get("function") or {}
        return cls.model_validate(
            {
                "name": str(function.get("name") or "?"),
                "description": str(function.get("description") or ""),
                "action_type": Action,
                "entry": copy.deepcopy(entry),
            }
        )

    def to_openai_tool(self, add_security_risk_prediction: bool = False) -> dict[str, Any]:
        """The entry as it was offered."""
        return copy.deepcopy(self.entry)

    def __hash__(self) -> int:
        return hash(json.dumps(self.entry, sort_keys=True))


def _as_tool(value: object) -> ToolDefinition[Any, Any]:
    if isinstance(value, ToolDefinition):
        return value
    if isinstance(value, dict):
        return OfferedTool.from_entry(value)
    raise ValueError(f"a tool is a ToolDefinition or its chat-completions entry, not {value!r}")


def _as_entry(tool: ToolDefinition[Any, Any]) -> dict[str, Any]:
    return tool.to_openai_tool()


OfferedToolField = Annotated[
    ToolDefinition[Any, Any], PlainValidator(_as_tool), PlainSerializer(_as_entry)
]
"""A tool in a SystemPromptEvent: any ToolDefinition, saved as its chat-completions entry
(what the model saw), read back as an OfferedTool."""


class SystemPromptEvent(LLMConvertibleEvent):
    """The system prompt, and the tools offered with it."""

    source: SourceType = "agent"
    system_prompt: TextContent
    tools: list[OfferedToolField] = Field(
        default_factory=list, description="The tools offered to the model."
    )
    dynamic_context: TextContent | None = Field(
        default=None,
        description="Per-conversation context sent after the prompt, in the same message.",
    )

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered."""
        return [t.name for t in self.tools]

    @property
    def visualize(self) -> Text:
        """The prompt, then each tool with its parameters (both cut short)."""
        from rich.text import Text

        text = Text("System Prompt:\n", style="bold")
        text.append(self.system_prompt.text)
        if self.dynamic_context is not None:
            text.append("\n\nDynamic Context:\n", style="bold")
            text.append(self.dynamic_context.text)
        text.append(f"\n\nTools Available: {len(self.tools)}", style="bold")
        for tool in self.tools:
            text.append(f"\n  - {tool.name}: ", style="bold")
            text.append(_preview(tool.description.strip().split("\n", 1)[0], DESCRIPTION_PREVIEW))
            parameters = tool.to_openai_tool().get("function", {}).get("parameters", {})
            text.append("\n    Parameters: ", style="dim")
            text.append(_preview(json.dumps(parameters), PARAMETERS_PREVIEW), style="dim")
        return text

    def to_llm_message(self) -> Message:
        """The system message: the prompt, then the dynamic context as a second block."""
        blocks = [self.system_prompt]
        if self.dynamic_context is not None:
            blocks.append(self.dynamic_context)
        return Message(role="system", content=blocks)


def _preview(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
