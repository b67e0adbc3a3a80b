"""OpenAI's Responses API: our messages and tools as its input, its output as our message.

The conversion only; `LLM.responses` makes the call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ohtui.sdk.llm.message import (
    ImageContent,
    Message,
    MessageToolCall,
    ReasoningItemModel,
    TextContent,
)


def _field(obj: Any, name: str) -> Any:
    """A field of an SDK object, or of its dict form."""
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


@dataclass(frozen=True)
class ResponsesInput:
    """A conversation as the Responses API takes it: system text apart, then the items."""

    instructions: str | None
    items: list[dict[str, Any]]


def to_responses_input(messages: Sequence[Message]) -> ResponsesInput:
    """The Responses-API form of chat messages.

    System messages become the instructions; a tool call and its result become a
    `function_call` and a `function_call_output` item; a reasoning item the model sent
    is passed back when it carries its encrypted content (nothing is stored server-side).
    """
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            instructions.append(message.text)
        elif message.role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": message.text,
                }
            )
        elif message.role == "user":
            items.append({"role": "user", "content": _input_parts(message)})
        else:
            items.extend(_assistant_items(message))
    return ResponsesInput("\n\n".join(t for t in instructions if t) or None, items)


def _input_parts(message: Message) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for content in message.content:
        if isinstance(content, TextContent):
            parts.append({"type": "input_text", "text": content.text})
        else:
            parts.extend({"type": "input_image", "image_url": url} for url in content.image_urls)
    return parts


def _assistant_items(message: Message) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    reasoning = message.responses_reasoning_item
    if reasoning is not None and reasoning.id and reasoning.encrypted_content:
        items.append(
            {
                "type": "reasoning",
                "id": reasoning.id,
                "summary": [{"type": "summary_text", "text": s} for s in reasoning.summary],
                "encrypted_content": reasoning.encrypted_content,
            }
        )
    text = "".join(c.text for c in message.content if isinstance(c, TextContent))
    if text:
        items.append({"role": "assistant", "content": [{"type": "output_text", "text": text}]})
    for call in message.tool_calls or []:
        items.append(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
        )
    return items


def to_responses_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Chat-completions tool entries as Responses-API function tools (those already in that
    form are kept)."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        function = tool.get("function")
        out.append(
            {"type": "function", **function} if isinstance(function, Mapping) else dict(tool)
        )
    return out


def message_from_response(response: Any) -> Message:
    """The assistant message in a Responses-API response (an SDK object or its dict form)."""
    texts: list[str] = []
    calls: list[MessageToolCall] = []
    reasoning: ReasoningItemModel | None = None
    for item in _field(response, "output") or []:
        kind = _field(item, "type")
        if kind == "message":
            for part in _field(item, "content") or []:
                if _field(part, "type") == "output_text":
                    texts.append(_field(part, "text") or "")
        elif kind == "function_call":
            calls.append(
                MessageToolCall(
                    id=_field(item, "call_id") or _field(item, "id") or "",
                    name=_field(item, "name") or "",
                    arguments=_field(item, "arguments") or "{}",
                    origin="responses",
                )
            )
        elif kind == "reasoning":
            reasoning = ReasoningItemModel(
                id=_field(item, "id"),
                summary=[_field(s, "text") or "" for s in _field(item, "summary") or []],
                content=[_field(c, "text") or "" for c in _field(item, "content") or []] or None,
                encrypted_content=_field(item, "encrypted_content"),
                status=_field(item, "status"),
            )
    text = "".join(texts)
    content: list[TextContent | ImageContent] = [TextContent(text=text)] if text else []
    return Message(
        role="assistant",
        content=content,
        tool_calls=calls or None,
        responses_reasoning_item=reasoning,
    )


def token_counts(usage: Any) -> dict[str, int]:
    """A Responses-API usage record as `Metrics.add_token_usage` takes it."""

    def number(obj: Any, name: str) -> int:
        return int((_field(obj, name) if obj is not None else None) or 0)

    return {
        "prompt_tokens": number(usage, "input_tokens"),
        "completion_tokens": number(usage, "output_tokens"),
        "cache_read_tokens": number(_field(usage, "input_tokens_details"), "cached_tokens")
        if usage is not None
        else 0,
        "reasoning_tokens": number(_field(usage, "output_tokens_details"), "reasoning_tokens")
        if usage is not None
        else 0,
    }
