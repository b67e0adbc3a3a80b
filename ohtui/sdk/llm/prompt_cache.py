"""Prompt caching by explicit breakpoints, for the models that need them (Anthropic's Claude).

OpenAI, DeepSeek and Gemini cache a repeated prefix on their own; Claude caches only up to
the content blocks marked with `cache_control`. Two marks make every step of a conversation
read the whole history from the cache: one at the end of the system prompt (with the tools
before it, the same for every conversation) and one at the end of the newest user or tool
message (the prefix the next request repeats).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

CACHE_CONTROL = {"type": "ephemeral"}
"""The mark that ends a cached prefix (Anthropic's five-minute cache)."""
_NO_CACHE_CONTROL = ("claude-2", "claude-instant")
"""Claude models from before prompt caching."""


def needs_cache_marks(model: str) -> bool:
    """Whether `model` (any provider's name for it) caches only up to marked blocks."""
    name = model.lower()
    return "claude" in name and not any(old in name for old in _NO_CACHE_CONTROL)


def mark_cache_points(chat: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat-completions messages with the system prompt and the newest user or tool
    message marked as cache breakpoints; the given dicts are left unchanged."""
    marked = list(chat)
    if marked and marked[0].get("role") == "system":
        marked[0] = _marked(marked[0])
    for index in range(len(marked) - 1, -1, -1):
        if marked[index].get("role") in ("user", "tool"):
            marked[index] = _marked(marked[index])
            break
    return marked


def _marked(message: dict[str, Any]) -> dict[str, Any]:
    """`message` with its last content block marked (a string becomes one text block)."""
    content = message.get("content")
    if isinstance(content, str) and content:
        parts: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list) and content:
        parts = list(content)
    else:
        return message  # nothing to mark
    parts[-1] = {**parts[-1], "cache_control": dict(CACHE_CONTROL)}
    return {**message, "content": parts}
