"""The messages exchanged with an LLM, and their conversion to chat-completions dicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["user", "system", "assistant", "tool"]


class TextContent(BaseModel):
    """A piece of text in a message."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    type: Literal["text"] = "text"
    text: str
    cache_prompt: bool = False

    def to_chat_part(self) -> dict[str, Any]:
        """This content as an OpenAI chat `content` part."""
        return {"type": "text", "text": self.text}


class ImageContent(BaseModel):
    """One or more images (http(s) or data URLs) in a message."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    type: Literal["image"] = "image"
    image_urls: list[str]
    cache_prompt: bool = False

    def to_chat_part(self) -> list[dict[str, Any]]:
        """This content as OpenAI chat `image_url` parts."""
        return [{"type": "image_url", "image_url": {"url": url}} for url in self.image_urls]


Content = TextContent | ImageContent


class ThinkingBlock(BaseModel):
    """An Anthropic extended-thinking block, passed back to the model verbatim."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str | None = None


class RedactedThinkingBlock(BaseModel):
    """An Anthropic thinking block the provider chose to hide."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


class MessageToolCall(BaseModel):
    """A tool call requested by the model; `arguments` is the raw JSON string it wrote."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    id: str
    name: str
    arguments: str
    origin: Literal["completion", "responses"] = "completion"

    def to_chat_dict(self) -> dict[str, Any]:
        """This call in the OpenAI `tool_calls` format."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


class Message(BaseModel):
    """One chat message: user, system, assistant (maybe with tool calls) or tool result."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    role: Role
    content: Sequence[TextContent | ImageContent] = Field(default_factory=list)
    tool_calls: list[MessageToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    reasoning_content: str | None = None
    thinking_blocks: list[ThinkingBlock | RedactedThinkingBlock] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The text parts joined; images are left out."""
        return "".join(c.text for c in self.content if isinstance(c, TextContent))

    @property
    def contains_image(self) -> bool:
        """Whether any part of the content is an image."""
        return any(isinstance(c, ImageContent) for c in self.content)

    def to_chat_dict(self) -> dict[str, Any]:
        """This message as a chat-completions dict (the format litellm takes)."""
        out: dict[str, Any] = {"role": self.role}
        if self.contains_image and self.role in ("user", "system"):
            parts: list[dict[str, Any]] = []
            for c in self.content:
                if isinstance(c, TextContent):
                    parts.append(c.to_chat_part())
                else:
                    parts.extend(c.to_chat_part())
            out["content"] = parts
        else:
            # Plain strings are accepted by every provider; part lists are not.
            text = self.text
            out["content"] = text if (text or not self.tool_calls) else None
        if self.tool_calls:
            out["tool_calls"] = [tc.to_chat_dict() for tc in self.tool_calls]
        if self.role == "tool":
            out["tool_call_id"] = self.tool_call_id
            if self.name:
                out["name"] = self.name
        if self.thinking_blocks and self.role == "assistant":
            out["thinking_blocks"] = [b.model_dump() for b in self.thinking_blocks]
        return out


def text_of(content: Sequence[TextContent | ImageContent]) -> str:
    """Join the text parts of a content list."""
    return "".join(c.text for c in content if isinstance(c, TextContent))
