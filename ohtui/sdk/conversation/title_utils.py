"""Conversation titles: asked of an LLM, or cut from the first message when that fails."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Container, Iterable

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.llm.llm import LLM
from ohtui.sdk.llm.message import Message, TextContent

logger = logging.getLogger(__name__)

TRUNCATION_MARKER = "..."
"""Ends a cut title: plain ASCII, so every console shows it."""
TITLE_PROMPT = (
    "Write a short title (at most {max_length} characters, no quotes, no trailing period) "
    "for a conversation that starts with this request:\n\n{message}"
)


def first_user_message(events: Iterable[Event], skip: Container[str] = ()) -> str | None:
    """The text of the first user message (not one of `skip`), if any."""
    for event in events:
        if isinstance(event, MessageEvent) and event.source == "user" and event.id not in skip:
            return event.llm_message.text
    return None


def truncate_title(text: str, max_length: int) -> str:
    """The first line of `text`, cut at a word boundary to `max_length` ending in "..."."""
    line = " ".join(text.strip().split("\n", 1)[0].split())
    if len(line) <= max_length:
        return line
    room = max_length - len(TRUNCATION_MARKER)
    if room < 1:
        return line[:max_length]
    cut = line[:room].rsplit(" ", 1)[0] or line[:room]
    return cut.rstrip(" ,.;:") + TRUNCATION_MARKER


def generate_title_with_llm(
    message: str,
    llm: LLM,
    max_length: int = 50,
    on_error: Callable[[Exception], None] | None = None,
) -> str | None:
    """The model's title for a conversation opening with `message` (unquoted, not cut to
    length); None when it gives none. A failed call is handed to `on_error`, if given."""
    prompt = TITLE_PROMPT.format(max_length=max_length, message=message[:2000])
    try:
        response = llm.completion(
            [Message(role="user", content=[TextContent(text=prompt)])],
            stream=False,  # nobody reads a title's tokens as they come
        )
    except Exception as exc:  # noqa: BLE001 - any failure means no title from the model
        if on_error is not None:
            on_error(exc)
        return None
    return plain_title(response.message.text) or None


_MARKUP = re.compile(r"\*\*|__|`|^#+\s*|^title:\s*", re.IGNORECASE)


def plain_title(text: str) -> str:
    """A model's title without its Markdown emphasis, heading marks, "Title:" or quotes
    (a title is shown as plain text everywhere)."""
    line = text.strip().split("\n", 1)[0]
    return _MARKUP.sub("", line).strip().strip("\"'").strip()


def generate_conversation_title(
    events: Iterable[Event], llm: LLM, max_length: int = 50, skip: Container[str] = ()
) -> str:
    """A title for the conversation; ValueError when it has no user message yet.

    Messages in `skip` (blocked by a hook) are never sent to the LLM; when the LLM gives no
    title, the first message is cut to length instead.
    """
    message = first_user_message(events, skip)
    if message is None:
        raise ValueError(
            "No user messages found in conversation events: there is nothing to title yet. "
            "Send a message first."
        )
    title = generate_title_with_llm(
        message,
        llm,
        max_length,
        on_error=lambda exc: logger.info("title generation failed, truncating instead: %s", exc),
    )
    return truncate_title(title or message, max_length)
