"""Counting the tokens of events, for condensers."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ohtui.sdk.event.base import LLMConvertibleEvent
from ohtui.sdk.event.llm_convertible.system import SystemPromptEvent
from ohtui.sdk.llm.llm import LLM
from ohtui.sdk.llm.message import ImageContent


def event_text(event: LLMConvertibleEvent, limit: int | None = None) -> str:
    """One event as plain text for a summarizer: who, what was said, which tool calls."""
    message = event.to_llm_message()
    lines = [f"{type(event).__name__} ({message.role}): {message.text}".rstrip()]
    lines.extend(f"call {c.name}({c.arguments})" for c in message.tool_calls or [])
    text = "\n".join(lines)
    if limit is not None and len(text) > limit:
        text = text[: max(limit, 0)] + f"... [{len(text) - limit} characters cut]"
    return text


TOKENS_PER_IMAGE = 8_000
"""More than any image costs (a 2048-pixel square is 2,805 tokens at OpenAI)."""
OVERHEAD_PER_PART = 16
"""More than a tokenizer adds per message or tool (its role, separators)."""


def token_upper_bound(events: Sequence[LLMConvertibleEvent]) -> int:
    """At least as many tokens as `events` take with any tokenizer, without one (no token
    stands for less than one byte): when this is under a limit, counting can wait."""
    total = OVERHEAD_PER_PART
    for event in events:
        message = event.to_llm_message()
        images = sum(len(p.image_urls) for p in message.content if isinstance(p, ImageContent))
        total += len(json.dumps(message.to_chat_dict()).encode()) + OVERHEAD_PER_PART
        total += images * TOKENS_PER_IMAGE
        if isinstance(event, SystemPromptEvent):
            tools = [t.to_openai_tool() for t in event.tools]
            total += len(json.dumps(tools).encode()) + OVERHEAD_PER_PART * len(tools)
    return total


def event_token_counts(
    events: Sequence[LLMConvertibleEvent], llm: LLM, cache: dict[str, int] | None = None
) -> list[int]:
    """Each event's tokens on its own (the system prompt's with its tools).

    Events never change, so `cache` (by event id) lets each be counted once."""
    counts = []
    for event in events:
        if cache is not None and event.id in cache:
            counts.append(cache[event.id])
            continue
        tools = None
        if isinstance(event, SystemPromptEvent):
            tools = [t.to_openai_tool() for t in event.tools]
        count = llm.get_token_count([event.to_llm_message()], tools=tools)
        if cache is not None:
            cache[event.id] = count
        counts.append(count)
    return counts


def get_total_token_count(events: Sequence[LLMConvertibleEvent], llm: LLM) -> int:
    """The tokens of all `events` as the model would get them, counted in one go (with the
    tools of the first system prompt among them)."""
    tools = next((e.tools for e in events if isinstance(e, SystemPromptEvent)), None)
    return llm.get_token_count(
        [e.to_llm_message() for e in events],
        tools=[t.to_openai_tool() for t in tools] if tools else None,
    )


def get_suffix_length_for_token_reduction(
    events: Sequence[LLMConvertibleEvent],
    llm: LLM,
    token_reduction: int,
    cache: dict[str, int] | None = None,
) -> int:
    """The most events that can be kept from the end of `events` while dropping at least
    `token_reduction` tokens from the front."""
    if token_reduction <= 0:
        return len(events)
    dropped = 0
    counts = event_token_counts(events, llm, cache)
    for index, count in enumerate(counts):
        dropped += count
        if dropped >= token_reduction:
            return len(events) - index - 1
    return 0
