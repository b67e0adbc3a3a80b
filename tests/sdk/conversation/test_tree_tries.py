"""Tries at the conversation tree as an attacker or a careless caller would make them, written
after the tree was built and not designed around it: a tampered database, forged parents,
races between forks, secrets copied into a fork, a server's events that do not form a tree."""

from __future__ import annotations

import sqlite3
import threading
import uuid
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer
from tree_support import Factory, open_conversation

from ohtui.sdk import MessageEvent
from ohtui.sdk.conversation.branch import Branch
from ohtui.sdk.conversation.event_store import EventsListBase
from ohtui.sdk.conversation.exceptions import ConversationIdTakenError
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import ROOT_PARENT_ID
from ohtui.sdk.llm import Message, TextContent

__all__ = ["open_conversation"]  # the fixture, used by name


def user(text: str, parent_id: str | None = None, event_id: str | None = None) -> MessageEvent:
    fields: dict[str, object] = {"parent_id": parent_id}
    if event_id is not None:
        fields["id"] = event_id
    return MessageEvent(
        source="user",
        llm_message=Message(role="user", content=[TextContent(text=text)]),
        **fields,  # type: ignore[arg-type]
    )


def turn(conv: object, server: ScriptedLLMServer, text: str) -> None:
    server.reply_text(f"answer to {text}")
    conv.send_message(text)  # type: ignore[attr-defined]
    conv.run()  # type: ignore[attr-defined]


def test_a_parent_in_another_conversation_is_refused_and_nothing_is_written(
    open_conversation: Factory,
    llm_server: ScriptedLLMServer,
) -> None:
    one, two = open_conversation(), open_conversation()
    turn(one, llm_server, "in one")
    foreign = one.state.active_branch()[-1].id
    before = len(two.state.events)
    with pytest.raises(ValueError, match="does not exist"):
        two.state.append_event(user("grafted", parent_id=foreign))
    assert len(two.state.events) == before


def test_the_root_marker_as_a_head_to_move_to_is_an_unknown_event(
    open_conversation: Factory,
    llm_server: ScriptedLLMServer,
) -> None:
    conv = open_conversation()
    turn(conv, llm_server, "hello")
    head = conv.state.leaf_event_id
    with pytest.raises(ValueError, match="Unknown event_id"):
        conv.navigate_to(ROOT_PARENT_ID)
    with pytest.raises(ValueError, match="Unknown from_event_id"):
        conv.fork(from_event_id=ROOT_PARENT_ID)
    assert conv.state.leaf_event_id == head


@pytest.mark.parametrize("event_id", ["' OR 1=1 --", "%", "_", "x" * 10_000, "\x00", "é\u202e"])
def test_ids_that_look_like_sql_or_wildcards_name_no_event(
    open_conversation: Factory,
    llm_server: ScriptedLLMServer,
    event_id: str,
) -> None:
    conv = open_conversation()
    turn(conv, llm_server, "hello")
    branch = [e.id for e in conv.state.active_branch()]
    with pytest.raises(ValueError, match="Unknown"):
        conv.navigate_to(event_id)
    assert [e.id for e in conv.state.active_branch()] == branch


def test_two_threads_forking_to_one_id_give_exactly_one_fork(
    open_conversation: Factory,
    llm_server: ScriptedLLMServer,
) -> None:
    a, b = open_conversation(), open_conversation()
    turn(a, llm_server, "a")
    turn(b, llm_server, "b")
    wanted = uuid.uuid4()
    made, refused = [], []
    start = threading.Barrier(2)

    def fork(source: object) -> None:
        start.wait()
        try:
            made.append(source.fork(conversation_id=wanted))  # type: ignore[attr-defined]
        except ConversationIdTakenError:
            refused.append(source)

    threads = [threading.Thread(target=fork, args=(s,)) for s in (a, b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    try:
        assert len(made) == 1 and len(refused) == 1
    finally:
        for fork_made in made:
            fork_made.close()


def test_a_secret_is_not_copied_into_the_forks_saved_state_in_the_clear(
    open_conversation: Factory,
    llm_server: ScriptedLLMServer,
    persistence_dir: Path,
) -> None:
    conv = open_conversation(secrets={"API_TOKEN": "s3cr3t-value-xyz"})
    turn(conv, llm_server, "hello")
    conv.fork(title="copy").close()
    conv.close()
    with sqlite3.connect(persistence_dir / "conversations.db") as db:
        states = [row[0] for row in db.execute("SELECT state FROM states")]
    assert len(states) == 2
    assert not any("s3cr3t-value-xyz" in state for state in states)


def test_a_head_naming_no_event_in_a_tampered_database_gives_way_to_the_newest_event(
    open_conversation: Factory,
    llm_server: ScriptedLLMServer,
    persistence_dir: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    conv = open_conversation()
    turn(conv, llm_server, "hello")
    conversation_id = conv.id
    branch = [e.id for e in conv.state.active_branch()]
    conv.close()
    with sqlite3.connect(persistence_dir / "conversations.db") as db:
        db.execute("UPDATE conversations SET leaf = 'no-such-event'")
    again = open_conversation(conversation_id=conversation_id)
    assert [e.id for e in again.state.active_branch()] == branch  # nothing lost
    assert "no-such-event" in caplog.text
    turn(again, llm_server, "still going")
    assert len(again.state.active_branch()) > len(branch)


class _Listed(EventsListBase):
    """Events as a server lists them (a plain list: no parents' index)."""

    def __init__(self, events: list[Event]) -> None:
        self._events = events

    def append(self, event: Event) -> None:
        self._events.append(event)

    def get_index(self, event_id: str) -> int:
        for index, event in enumerate(self._events):
            if event.id == event_id:
                return index
        raise KeyError(event_id)

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, index):  # type: ignore[no-untyped-def,override]
        return self._events[index]


@pytest.mark.parametrize(
    "shape",
    [
        [("a", "b"), ("b", "a")],  # two events naming each other
        [("a", "a")],  # an event its own parent
        [("a", None), ("b", "c"), ("c", "b")],  # a loop below a root
    ],
)
def test_a_servers_events_that_loop_are_an_error_not_a_hang(
    shape: list[tuple[str, str | None]],
) -> None:
    listed = _Listed(
        [
            user(f"m{i}", parent, f"{name}-id")
            for i, (name, parent) in enumerate([(n, f"{p}-id" if p else None) for n, p in shape])
        ]
    )
    leaf = listed[len(listed) - 1].id
    with pytest.raises(ValueError, match="do not form a tree"):
        Branch(listed, listed.branch_indexes(leaf))
