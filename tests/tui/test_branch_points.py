"""Where branches part, as the transcript marks them, on a log read by parent_id (as a remote
conversation's is, state updates delivered among its events) and on a stored one; and where
switching branches goes."""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ohtui.sdk import (
    LLM,
    Agent,
    ConversationStateUpdateEvent,
    LocalConversation,
    Message,
    MessageEvent,
    TextContent,
    Tool,
)
from ohtui.sdk.conversation.branch import Branch
from ohtui.sdk.conversation.event_store import EventsListBase
from ohtui.sdk.event.base import Event
from ohtui.tui.session.branches import branch_points, newest_page, switch_target


def _said(text: str, parent: Event | None = None) -> MessageEvent:
    return MessageEvent(
        source="user",
        llm_message=Message(role="user", content=[TextContent(text=text)]),
        parent_id=parent.id if parent is not None else None,
    )


class _ListLog(EventsListBase):
    """Events in memory, their parents told by parent_id only (as a remote log's)."""

    def __init__(self, events: list[Event]) -> None:
        self._events = events

    def append(self, event: Event) -> None:
        self._events.append(event)

    def get_index(self, event_id: str) -> int:
        return next(i for i, e in enumerate(self._events) if e.id == event_id)

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, index: Any) -> Any:
        return self._events[index]


@dataclass
class _State:
    log: _ListLog
    leaf: str

    def active_branch(self) -> Branch:
        return Branch(self.log, self.log.branch_indexes(self.leaf))


@dataclass
class _Conversation:
    state: _State


def test_branch_points_from_parent_ids_ignore_state_updates() -> None:
    root = _said("root")
    a = _said("a", root)
    a2 = _said("a2", a)
    b = _said("b", root)  # a second branch from root
    update = ConversationStateUpdateEvent(key="execution_status", value="idle", parent_id=b.id)
    log = _ListLog([root, a, a2, b, update])
    conversation: Any = _Conversation(_State(log, b.id))
    # root has two children (a, b); HEAD (b) has only a state update after it: no branch.
    assert branch_points(conversation, 0, 10) == {0: 2}
    assert newest_page(conversation).branches == {0: 2}
    leaf, number, total = switch_target(conversation, 0) or ("", 0, 0)
    assert (leaf, number, total) == (a2.id, 1, 2)  # the other branch, at its newest event
    conversation.state.leaf = a.id  # rewound to a: a2 goes on from HEAD, a new one may too
    assert branch_points(conversation, 0, 10) == {0: 2, 1: 2}
    assert array("q", conversation.state.active_branch().indexes) == array("q", [0, 1])


def test_a_linear_stored_log_has_no_branch_points(tmp_path: Path) -> None:
    llm = LLM(model="openai/test-model", base_url="http://127.0.0.1:9/v1", api_key="sk-test")
    conversation = LocalConversation(
        agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=tmp_path / "ws",
        persistence_dir=tmp_path / "data",
        visualizer=None,
    )
    try:
        first = conversation.state.append_event(_said("one"))
        conversation.state.append_event(_said("two"))
        assert branch_points(conversation, 0, 10) == {}
        conversation.navigate_to(first.id)
        assert branch_points(conversation, 0, 10) == {0: 2}
        conversation.state.append_event(_said("two, again"))
        assert branch_points(conversation, 0, 10) == {0: 2}
        assert switch_target(conversation, 0) is not None
        assert switch_target(conversation, 1) is None  # nothing parts after the newest
    finally:
        conversation.close()
