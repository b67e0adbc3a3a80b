"""TokenMasker: keeps secret values out of streamed LLM deltas."""

from __future__ import annotations

import dataclasses

from ohtui.sdk.conversation.secret_registry import SecretRegistry, StreamMasker
from ohtui.sdk.llm.streaming import LLMStreamChunk


class TokenMasker:
    """Masks secrets in the text, reasoning and tool arguments of a stream of deltas.

    Each stream is masked across chunk boundaries; what is held back waiting for the next
    chunk is released with the chunk that carries a finish reason.
    """

    def __init__(self, registry: SecretRegistry) -> None:
        self._registry = registry
        self._content = StreamMasker(registry)
        self._reasoning = StreamMasker(registry)
        self._arguments: dict[int, StreamMasker] = {}
        self._response_id: str | None = None

    def mask(self, chunk: LLMStreamChunk) -> LLMStreamChunk:
        """The chunk as it may be shown."""
        if not self._registry.has_values:
            return chunk
        if chunk.response_id != self._response_id:
            # A new response: what an unfinished one held back must not leak into it.
            self._response_id = chunk.response_id
            self._content = StreamMasker(self._registry)
            self._reasoning = StreamMasker(self._registry)
            self._arguments.clear()
        content = self._content.feed(chunk.content)
        reasoning = self._reasoning.feed(chunk.reasoning_content)
        calls = tuple(
            dataclasses.replace(
                call,
                arguments=self._arguments.setdefault(call.index, StreamMasker(self._registry)).feed(
                    call.arguments
                ),
            )
            for call in chunk.tool_calls
        )
        if chunk.finish_reason:
            content += self._content.flush()
            reasoning += self._reasoning.flush()
            self._arguments.clear()
        return dataclasses.replace(
            chunk, content=content, reasoning_content=reasoning, tool_calls=calls
        )
