"""The bridge keeps the engine's order: text streamed after an event reaches the screen
after that event, however late the screen takes what was buffered."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from ohtui.sdk import MessageEvent
from ohtui.sdk.llm import LLMStreamChunk, TextContent
from ohtui.sdk.llm import Message as LLMMessage
from ohtui.settings.profile import Profile
from ohtui.tui import messages as msg
from ohtui.tui.session.bridge import Bridge
from ohtui.tui.session.link import Link


class Inbox:
    """A screen that only collects what is posted to it."""

    def __init__(self) -> None:
        self.posted: list[Message] = []

    def post_message(self, message: Message) -> bool:
        self.posted.append(message)
        return True


def a_bridge() -> tuple[Bridge, Inbox]:
    inbox = Inbox()
    link = Link(inbox)  # type: ignore[arg-type]
    profile = Profile(None, use_keyring=False)
    bridge = Bridge(link, profile, running=lambda: True, safety=lambda: None)
    return bridge, inbox


def an_event(text: str) -> MessageEvent:
    return MessageEvent(
        source="agent", llm_message=LLMMessage(role="assistant", content=[TextContent(text=text)])
    )


def screen_reads(bridge: Bridge, inbox: Inbox) -> list[Any]:
    """What a screen handling the messages in order sees: events and token batches."""
    seen: list[Any] = []
    for message in inbox.posted:
        if isinstance(message, msg.TokensReady):
            seen.append(bridge.take_tokens())
        elif isinstance(message, msg.EngineEvent):
            seen.append(message.event)
    return seen


def test_tokens_streamed_after_an_event_come_after_it_when_the_screen_is_slow() -> None:
    """The screen is busy: the first call's text, its event and the second call's text are
    all waiting before it takes any tokens. It must not get the second call's text first."""
    bridge, inbox = a_bridge()
    callbacks = bridge.callbacks()
    on_event, on_token = callbacks.on_event, callbacks.on_token
    assert on_event is not None and on_token is not None
    on_token(LLMStreamChunk(response_id="r1", content="Let me "))
    on_token(LLMStreamChunk(response_id="r1", content="look."))
    first = an_event("Let me look.")
    on_event(first)
    on_token(LLMStreamChunk(response_id="r2", content="It printed "))
    on_token(LLMStreamChunk(response_id="r2", content="two lines."))
    second = an_event("It printed two lines.")
    on_event(second)

    assert screen_reads(bridge, inbox) == [
        [("r1", "Let me look.", "")],
        first,
        [("r2", "It printed two lines.", "")],
        second,
    ]


def test_tokens_between_two_takes_are_announced_again() -> None:
    """Taken once, then more text: a new announcement, and each take gets only its part."""
    bridge, inbox = a_bridge()
    on_token = bridge.callbacks().on_token
    assert on_token is not None
    on_token(LLMStreamChunk(response_id="r1", content="a"))
    on_token(LLMStreamChunk(response_id="r1", content="b"))
    assert sum(isinstance(m, msg.TokensReady) for m in inbox.posted) == 1
    assert bridge.take_tokens() == [("r1", "ab", "")]
    on_token(LLMStreamChunk(response_id="r1", content="c"))
    assert sum(isinstance(m, msg.TokensReady) for m in inbox.posted) == 2
    assert bridge.take_tokens() == [("r1", "c", "")]
    assert bridge.take_tokens() == []
