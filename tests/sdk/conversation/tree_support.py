"""What the conversation-tree tests share: opening conversations against the scripted LLM
server, reading what the model was sent, and checking that a log forms a tree."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from ohtui.sdk import LLM, Agent, Conversation, LocalConversation, Tool
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import ROOT_PARENT_ID

Factory = Callable[..., LocalConversation]


@pytest.fixture
def open_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    """Open conversations (a terminal-tool agent each, unless given one); close them all."""
    made: list[LocalConversation] = []

    def make(agent: Agent | None = None, **kwargs: Any) -> LocalConversation:
        kwargs.setdefault("visualizer", None)
        kwargs.setdefault("persistence_dir", persistence_dir)
        conv = Conversation(
            agent=agent or Agent(llm=llm, tools=[Tool(name="terminal")]),
            workspace=workspace,
            **kwargs,
        )
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def texts(request: dict[str, Any]) -> list[str]:
    """The text of each message of a chat-completions request, in order."""
    out = []
    for message in request["messages"]:
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        out.append(content)
    return out


def sent(request: dict[str, Any]) -> str:
    """The whole request as text, tool calls included (to look for anything in it)."""
    return json.dumps(request["messages"])


def ids(events: Sequence[Event]) -> list[str]:
    return [event.id for event in events]


def assert_is_tree(events: Sequence[Event]) -> None:
    """Every event's parent is a root marker or an event listed before it."""
    seen: set[str] = set()
    for event in events:
        assert event.parent_id in (None, ROOT_PARENT_ID) or event.parent_id in seen, event
        seen.add(event.id)


def walk_to_root(events: Sequence[Event], leaf: str | None) -> list[str]:
    """The branch ending at `leaf`, root first, walked by hand from the events' parent_id
    (None as a parent: the event listed before, as in a log older than the tree)."""
    position = {event.id: i for i, event in enumerate(events)}
    chain: list[str] = []
    index = position[leaf] if leaf is not None else -1
    while index >= 0:
        event = events[index]
        chain.append(event.id)
        if event.parent_id == ROOT_PARENT_ID:
            break
        index = position[event.parent_id] if event.parent_id is not None else index - 1
    chain.reverse()
    return chain


class RunThread(threading.Thread):
    """`conv.run()` in the background, keeping any exception."""

    def __init__(self, conv: LocalConversation) -> None:
        super().__init__(daemon=True)
        self.conv = conv
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.conv.run()
        except BaseException as exc:  # handed to the test
            self.error = exc
