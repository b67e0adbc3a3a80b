"""What the managers need to know about chat messages: tool pairs, and tool-result truncation.

In our message list a tool call lives in an assistant message's `tool_calls` and each result
is a `tool`-role message after it (Strands keeps them as toolUse/toolResult content blocks).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ohtui.sdk.llm.message import ImageContent, Message, TextContent

PRESERVE_CHARS = 200
"""Characters kept at each end of a truncated tool result."""
TRUNCATION_MARKER = "... [truncated:"

_DATA_URL = re.compile(r"^data:(?:image/)?([\w.+-]+)?(?:;[^,]*)?,(.*)$", re.DOTALL)


def is_tool_result(message: Message) -> bool:
    """Whether `message` is the result of a tool call."""
    return message.role == "tool"


def has_tool_calls(message: Message) -> bool:
    """Whether `message` asks for tool calls."""
    return bool(message.tool_calls)


def calls_answered_from(messages: Sequence[Message], index: int) -> bool:
    """Whether the tool calls of `messages[index]` all have their results right after it."""
    calls = {c.id for c in messages[index].tool_calls or []}
    following = index + 1
    while calls and following < len(messages) and is_tool_result(messages[following]):
        calls.discard(messages[following].tool_call_id or "")
        following += 1
    return not calls


def oldest_tool_results(messages: Sequence[Message]) -> range | None:
    """The indexes of the oldest run of tool results (one call batch's), or None."""
    for start, message in enumerate(messages):
        if is_tool_result(message):
            end = start
            while end < len(messages) and is_tool_result(messages[end]):
                end += 1
            return range(start, end)
    return None


def truncate_tool_result(message: Message) -> Message | None:
    """`message` with its long text cut to both ends and images replaced by a placeholder;
    None when there was nothing to cut (short, or truncated already)."""
    parts: list[TextContent | ImageContent] = []
    changed = False
    for part in message.content:
        if isinstance(part, ImageContent):
            parts.append(TextContent(text=" ".join(map(image_placeholder, part.image_urls))))
            changed = True
        elif TRUNCATION_MARKER not in part.text and len(part.text) > 2 * PRESERVE_CHARS:
            parts.append(TextContent(text=truncated_text(part.text)))
            changed = True
        else:
            parts.append(part)
    return message.model_copy(update={"content": parts}) if changed else None


def truncated_text(text: str) -> str:
    """The first and last PRESERVE_CHARS characters, saying how many were removed between."""
    removed = len(text) - 2 * PRESERVE_CHARS
    head, tail = text[:PRESERVE_CHARS], text[-PRESERVE_CHARS:]
    return f"{head}...\n\n... [truncated: {removed} chars removed] ...\n\n...{tail}"


def image_placeholder(url: str) -> str:
    """A short text standing for an image: its format and size, or its address."""
    match = _DATA_URL.match(url)
    if match is None:
        return f"[image: {url}]"
    fmt, data = match.group(1) or "unknown", match.group(2)
    size = len(data) * 3 // 4 - data.count("=") if ";base64" in url.split(",", 1)[0] else len(data)
    return f"[image: {fmt}, {max(size, 0)} bytes]"
