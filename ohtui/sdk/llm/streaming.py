"""Streaming: the deltas handed to token callbacks, and their assembly into a message."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ohtui.sdk.utils.valid_text import valid_text


@dataclass(frozen=True, slots=True)
class FunctionDelta:
    """`tool_call.function` of a streamed tool call, as litellm shapes it."""

    name: str | None
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call as it streams: the name first, then argument fragments.

    Read as a litellm tool-call delta too: `function.name`, `function.arguments`, `type`.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""

    @property
    def function(self) -> FunctionDelta:
        """The name and argument fragment, as `function` in litellm's delta."""
        return FunctionDelta(self.name, self.arguments)

    @property
    def type(self) -> str:
        """Always "function", as in litellm's delta."""
        return "function"


@dataclass(frozen=True, slots=True)
class StreamDelta:
    """`choice.delta` of a streamed chunk, as litellm shapes it: a field with nothing in
    this chunk is None."""

    content: str | None
    reasoning_content: str | None
    tool_calls: list[ToolCallDelta] | None
    role: str = "assistant"


@dataclass(frozen=True, slots=True)
class StreamChoice:
    """One entry of a streamed chunk's `choices`, as litellm shapes it."""

    index: int
    delta: StreamDelta
    finish_reason: str | None


@dataclass(frozen=True, slots=True)
class LLMStreamChunk:
    """One streamed delta of an LLM response.

    Read it by its own fields (`content`, `reasoning_content`, `tool_calls`), as ohtui's
    front ends do, or as litellm's `ModelResponseStream`, as SDK token callbacks do:
    `chunk.id`, `chunk.choices[0].delta.content`, `...delta.tool_calls[i].function.name`.
    """

    response_id: str
    content: str = ""
    reasoning_content: str = ""
    tool_calls: tuple[ToolCallDelta, ...] = ()
    finish_reason: str | None = None

    @property
    def id(self) -> str:
        """The response's id, as `id` in litellm's chunk."""
        return self.response_id

    @property
    def object(self) -> str:
        """Always "chat.completion.chunk", as in litellm's chunk."""
        return "chat.completion.chunk"

    @property
    def choices(self) -> list[StreamChoice]:
        """This delta as litellm's one-choice list; empty for a chunk that carries nothing
        (litellm's last, usage-only chunk)."""
        if not (self.content or self.reasoning_content or self.tool_calls or self.finish_reason):
            return []
        delta = StreamDelta(
            content=self.content or None,
            reasoning_content=self.reasoning_content or None,
            tool_calls=list(self.tool_calls) or None,
        )
        return [StreamChoice(index=0, delta=delta, finish_reason=self.finish_reason)]


ModelResponseStream = LLMStreamChunk
"""The SDK's name for what token callbacks get (litellm's chunk there; ours reads alike)."""

TokenCallbackType = Callable[[LLMStreamChunk], None]


@dataclass
class _ToolCallBuffer:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamAssembler:
    """Accumulates litellm stream chunks into one chat-completion-like message dict."""

    def __init__(self) -> None:
        self.response_id = ""
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.tool_calls: dict[int, _ToolCallBuffer] = {}
        self.finish_reason: str | None = None
        self.usage: Any = None

    def add(self, chunk: Any) -> LLMStreamChunk:
        """Fold one litellm chunk in and return it as our delta type."""
        self.response_id = self.response_id or getattr(chunk, "id", "") or ""
        usage = getattr(chunk, "usage", None)
        if usage:
            self.usage = usage
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return LLMStreamChunk(response_id=self.response_id)
        choice = choices[0]
        delta = getattr(choice, "delta", None)
        content = (getattr(delta, "content", None) or "") if delta else ""
        reasoning = (getattr(delta, "reasoning_content", None) or "") if delta else ""
        deltas: list[ToolCallDelta] = []
        for raw in (getattr(delta, "tool_calls", None) or []) if delta else []:
            index = getattr(raw, "index", None)
            index = len(self.tool_calls) if index is None else index
            function = getattr(raw, "function", None)
            name = getattr(function, "name", None) if function else None
            arguments = (getattr(function, "arguments", None) or "") if function else ""
            buffer = self.tool_calls.setdefault(index, _ToolCallBuffer())
            buffer.id = buffer.id or getattr(raw, "id", None) or ""
            buffer.name = buffer.name or name or ""
            buffer.arguments.append(arguments)
            shown_name = valid_text(name) if name else name
            deltas.append(
                ToolCallDelta(index, getattr(raw, "id", None), shown_name, valid_text(arguments))
            )
        if content:
            self.content.append(content)
        if reasoning:
            self.reasoning.append(reasoning)
        if getattr(choice, "finish_reason", None):
            self.finish_reason = choice.finish_reason
        # The delta is shown as it comes, so its text is made valid now; the pieces are kept
        # as sent, so a pair of surrogates split between two deltas still joins in the message.
        return LLMStreamChunk(
            response_id=self.response_id,
            content=valid_text(content),
            reasoning_content=valid_text(reasoning),
            tool_calls=tuple(deltas),
            finish_reason=getattr(choice, "finish_reason", None),
        )

    def message(self) -> dict[str, Any]:
        """The assembled assistant message, in chat-completions dict form."""
        return {
            "role": "assistant",
            "content": "".join(self.content) or None,
            "reasoning_content": "".join(self.reasoning) or None,
            "tool_calls": [
                {
                    "id": b.id,
                    "type": "function",
                    "function": {"name": b.name, "arguments": "".join(b.arguments)},
                }
                for _, b in sorted(self.tool_calls.items())
            ]
            or None,
        }
