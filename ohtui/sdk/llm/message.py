"""The messages exchanged with an LLM, and their conversion to chat-completions dicts."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

logger = logging.getLogger(__name__)

Role = Literal["user", "system", "assistant", "tool"]


def _field(obj: Any, name: str) -> Any:
    """A field of a litellm object, or of its dict form."""
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


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


class ReasoningItemModel(BaseModel):
    """A reasoning item from OpenAI's Responses API, kept to send back with the history.

    Its summary and content may be shown; `encrypted_content` is opaque and never shown.
    """

    # Extra keys are ignored: other producers' items carry more (e.g. their `type`).
    model_config = ConfigDict(defer_build=True, frozen=True, extra="ignore")

    id: str | None = None
    summary: list[str] = Field(default_factory=list)
    content: list[str] | None = None
    encrypted_content: str | None = None
    status: str | None = None

    @property
    def text(self) -> str:
        """The readable reasoning: the summary, then the content ("" when there is none)."""
        return "\n".join([*self.summary, *(self.content or [])])


class MessageToolCall(BaseModel):
    """A tool call requested by the model; `arguments` is the raw JSON string it wrote."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    id: str
    name: str
    arguments: str
    origin: Literal["completion", "responses"] = "completion"

    @classmethod
    def from_chat_tool_call(cls, tool_call: Any) -> MessageToolCall:
        """Our tool call for a chat-completions one (a litellm tool call or its dict form).

        ValueError when it is not a function call with a name. A call without an id gets one.
        """
        call_id = _field(tool_call, "id") or f"call_{uuid.uuid4().hex[:24]}"
        kind = _field(tool_call, "type") or "function"
        if kind != "function":
            raise ValueError(
                f"tool call {call_id!r} is a {kind!r} call; only functions are supported"
            )
        function = _field(tool_call, "function")
        name = _field(function, "name") if function is not None else None
        if name is None:
            raise ValueError(f"tool call {call_id!r} names no function")
        return cls(id=call_id, name=name, arguments=_field(function, "arguments") or "{}")

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
    responses_reasoning_item: ReasoningItemModel | None = None

    @classmethod
    def from_llm_chat_message(cls, message: Any) -> Message:
        """Our Message for a chat-completions message (a litellm Message or its dict form).

        The inverse of `to_chat_dict`: content parts (text, image URLs) and a tool result's
        call id and name are kept. Tool calls other than function calls are dropped (with a
        warning); a `function` role message is a ValueError (the model should have used a
        tool call).
        """
        role = _field(message, "role") or "assistant"
        if role == "function":
            raise ValueError("a 'function' role message cannot be converted; use tool calls")
        tool_calls: list[MessageToolCall] = []
        for call in _field(message, "tool_calls") or []:
            if (_field(call, "type") or "function") == "function":
                tool_calls.append(MessageToolCall.from_chat_tool_call(call))
            else:
                kind = _field(call, "type")
                logger.warning("ignored a %r tool call: only functions are supported", kind)
        blocks: list[ThinkingBlock | RedactedThinkingBlock] = []
        for block in _field(message, "thinking_blocks") or []:
            if _field(block, "type") == "redacted_thinking":
                blocks.append(RedactedThinkingBlock(data=_field(block, "data") or ""))
            elif (thinking := _field(block, "thinking")) is not None:
                blocks.append(
                    ThinkingBlock(thinking=thinking, signature=_field(block, "signature"))
                )
        return cls(
            role=role,
            content=_content_of(_field(message, "content")),
            tool_calls=tool_calls or None,
            tool_call_id=_field(message, "tool_call_id") if role == "tool" else None,
            name=_field(message, "name") if role == "tool" else None,
            reasoning_content=_field(message, "reasoning_content") or None,
            thinking_blocks=blocks,
        )

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


def _content_of(content: Any) -> list[TextContent | ImageContent]:
    """Chat-completions content (a string, or parts) as ours: neighbouring text parts make
    one TextContent, neighbouring image parts one ImageContent."""
    if not isinstance(content, list):
        return [TextContent(text=content)] if content else []
    out: list[TextContent | ImageContent] = []
    for part in content:
        if _field(part, "type") == "image_url":
            image = _field(part, "image_url")
            url = image if isinstance(image, str) else _field(image, "url")
            last = out[-1] if out else None
            if isinstance(last, ImageContent):
                out[-1] = ImageContent(image_urls=[*last.image_urls, url])
            else:
                out.append(ImageContent(image_urls=[url]))
        elif text := _field(part, "text"):
            last = out[-1] if out else None
            if isinstance(last, TextContent):
                out[-1] = TextContent(text=last.text + text)
            else:
                out.append(TextContent(text=text))
    return out


def content_to_str(contents: Sequence[TextContent | ImageContent]) -> list[str]:
    """Each part of a content list as a string to show: its text, or a placeholder saying
    how many images it holds."""
    parts: list[str] = []
    for item in contents:
        if isinstance(item, TextContent):
            parts.append(item.text)
        else:
            count = len(item.image_urls)
            parts.append("[image]" if count == 1 else f"[{count} images]")
    return parts


def text_of(content: Sequence[TextContent | ImageContent]) -> str:
    """Join the text parts of a content list."""
    return "".join(c.text for c in content if isinstance(c, TextContent))
