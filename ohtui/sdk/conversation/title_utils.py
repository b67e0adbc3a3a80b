"""Conversation titles: asked of an LLM, or cut from the first message when that fails."""

from __future__ import annotations

import logging
from collections.abc import Container, Iterable

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.llm.llm import LLM
from ohtui.sdk.llm.message import Message, TextContent

logger = logging.getLogger(__name__)

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
    """The first line of `text`, cut at a word boundary to `max_length` with an ellipsis."""
    line = " ".join(text.strip().split("\n", 1)[0].split())
    if len(line) <= max_length:
        return line
    cut = line[: max_length - 1].rsplit(" ", 1)[0] or line[: max_length - 1]
    return cut.rstrip(" ,.;:") + "…"


def generate_conversation_title(
    events: Iterable[Event], llm: LLM, max_length: int = 50, skip: Container[str] = ()
) -> str:
    """A title for the conversation; ValueError when it has no user message yet.

    Messages in `skip` (blocked by a hook) are never sent to the LLM.
    """
    message = first_user_message(events, skip)
    if message is None:
        raise ValueError("the conversation has no user message to title it from")
    try:
        response = llm.completion(
            [
                Message(
                    role="user",
                    content=[
                        TextContent(
                            text=TITLE_PROMPT.format(max_length=max_length, message=message[:2000])
                        )
                    ],
                )
            ]
        )
        title = response.message.text.strip().strip("\"'").strip()
    except Exception as exc:  # noqa: BLE001 - any failure falls back to the message itself
        logger.info("title generation failed, truncating instead: %s", exc)
        title = ""
    return truncate_title(title or message, max_length)
