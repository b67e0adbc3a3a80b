"""The conversation tree on disk: HEAD saved with what moved it, a process killed without
closing, events written behind, a database of schema 1 (before the tree) opened, upgraded
and continued, damaged parents, and big trees.

Real SQLite files; a process killed with SIGKILL; runs against the scripted LLM server.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer
from tree_support import Factory, assert_is_tree, ids, open_conversation, texts, walk_to_root

from ohtui.sdk import (
    LLM,
    Agent,
    Conversation,
    ConversationRunError,
    Message,
    MessageEvent,
    TextContent,
    Tool,
)
from ohtui.sdk.conversation.exceptions import PersistenceError
from ohtui.sdk.conversation.state import ConversationState
from ohtui.sdk.conversation.store import ConversationStore
from ohtui.sdk.event.types import ROOT_PARENT_ID
from ohtui.sdk.workspace import LocalWorkspace

__all__ = ["open_conversation"]  # the fixture, used by name

ROOT = Path(__file__).resolve().parents[3]
SCHEMA_1 = ROOT / "tests" / "fixtures" / "schema1"


def user(text: str) -> MessageEvent:
    return MessageEvent(
        source="user", llm_message=Message(role="user", content=[TextContent(text=text)])
    )


def reopen(open_conversation: Factory, conversation_id: uuid.UUID):
    return open_conversation(conversation_id=conversation_id)


# --- HEAD across close and resume -----------------------------------------------------------


def test_head_and_an_empty_head_survive_close_and_resume(
    open_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = open_conversation()
    for text in ("one", "two", "three"):
        llm_server.reply_text(f"answer {text}")
        conv.send_message(text)
        conv.run()
    middle = conv.state.active_branch()[3]
    conv.navigate_to(middle.id)
    branch = ids(conv.state.active_branch())
    conv.close()

    again = reopen(open_conversation, conv.id)
    assert again.state.leaf_event_id == middle.id
    assert ids(again.state.active_branch()) == branch
    again.navigate_to(None)
    again.close()

    empty = reopen(open_conversation, conv.id)
    assert empty.state.head_is_empty and empty.state.leaf_event_id is None
    assert list(empty.state.active_branch()) == []
    llm_server.reply_text("fresh")
    empty.send_message("a new root")
    empty.run()
    root = next(e for e in empty.state.events if getattr(e, "llm_message", None) and
                e.llm_message.text == "a new root")  # fmt: skip
    assert root.parent_id == ROOT_PARENT_ID
    assert texts(llm_server.requests[-1])[1:] == ["a new root"]


KILLED = textwrap.dedent(
    """
    import os, signal, sys, uuid
    from ohtui.sdk import LLM, Agent, Conversation, Message, MessageEvent, TextContent
    base, conversation_id, move = sys.argv[1], uuid.UUID(sys.argv[2]), sys.argv[3]
    conv = Conversation(agent=Agent(llm=LLM(model="openai/none"), tools=[]),
                        workspace=base + "/ws", persistence_dir=base + "/convs",
                        conversation_id=conversation_id, visualizer=None)
    def user(text):
        return MessageEvent(source="user",
                            llm_message=Message(role="user", content=[TextContent(text=text)]))
    with conv.state:
        for i in range(5):
            conv.state.append_event(user(f"m{i}"))
    branch = conv.state.active_branch()
    if move == "back":
        conv.navigate_to(branch[1].id)
        with conv.state:
            conv.state.append_event(user("after the move"))
    elif move == "empty":
        conv.navigate_to(None)
    elif move == "behind":
        with conv.state:
            for i in range(5):
                conv.state.append_event(user(f"behind {i}"), durable=False)
        conv.state.events.flush()
    print(conv.state.leaf_event_id, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # no close(), nothing more saved
    """
)


@pytest.mark.parametrize("move", ["back", "empty", "behind"])
def test_head_is_on_disk_with_what_moved_it_when_the_process_is_killed(
    tmp_path: Path, move: str
) -> None:
    conversation_id = uuid.uuid4()
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(tmp_path), str(conversation_id), move],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}"},
        timeout=120,
    )
    assert done.returncode == -9, done.stderr
    leaf = done.stdout.strip()
    conv = Conversation(
        agent=Agent(llm=LLM(model="openai/none"), tools=[]),
        workspace=tmp_path / "ws",
        persistence_dir=tmp_path / "convs",
        conversation_id=conversation_id,
        visualizer=None,
    )
    try:
        log = list(conv.state.events)
        branch = [e.llm_message.text for e in conv.state.active_branch()]
        if move == "back":
            assert conv.state.leaf_event_id == leaf
            assert branch == ["m0", "m1", "after the move"]
            assert [e.llm_message.text for e in log][-1] == "after the move"
        elif move == "empty":
            assert leaf == "None" and conv.state.head_is_empty
            assert branch == [] and len(log) == 5
        else:
            assert conv.state.leaf_event_id == leaf
            assert branch == [*(f"m{i}" for i in range(5)), *(f"behind {i}" for i in range(5))]
        assert_is_tree(log)
    finally:
        conv.close()


def test_events_written_behind_are_on_the_branch_before_they_reach_the_disk(
    open_conversation: Factory,
) -> None:
    conv = open_conversation()
    state = conv.state
    with state:
        first = [state.append_event(user(f"durable {i}")) for i in range(3)]
        behind = [state.append_event(user(f"behind {i}"), durable=False) for i in range(300)]
    assert ids(state.active_branch()) == ids(first + behind)  # before any flush
    conv.navigate_to(behind[100].id)
    with state:
        sibling = state.append_event(user("sibling"), durable=False)
    assert sibling.parent_id == behind[100].id
    assert ids(state.active_branch()) == ids([*first, *behind[:101], sibling])
    assert state.events.children(state.events.get_index(behind[100].id)) == [
        state.events.get_index(behind[101].id),
        state.events.get_index(sibling.id),
    ]
    conv.close()
    again = reopen(open_conversation, conv.id)
    assert ids(again.state.active_branch()) == ids([*first, *behind[:101], sibling])
    assert len(again.state.events) == 304


# --- a database from before the tree ----------------------------------------------------------


@pytest.fixture
def schema_1(tmp_path: Path) -> tuple[Path, uuid.UUID]:
    """A copy of a database written by ohtui before the tree (see fixtures/schema1)."""
    base = tmp_path / "old"
    base.mkdir()
    shutil.copy(SCHEMA_1 / "conversations.db", base / "conversations.db")
    conversation_id = uuid.UUID((SCHEMA_1 / "conversation_id.txt").read_text().strip())
    return base, conversation_id


def version_of(base: Path) -> int:
    with sqlite3.connect(base / "conversations.db") as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def test_a_schema_1_database_is_upgraded_and_its_history_is_one_branch(
    schema_1: tuple[Path, uuid.UUID],
    llm: LLM,
    llm_server: ScriptedLLMServer,
    workspace: Path,
) -> None:
    base, conversation_id = schema_1
    assert version_of(base) == 1
    conv = Conversation(
        agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=workspace,
        persistence_dir=base,
        conversation_id=conversation_id,
        visualizer=None,
    )
    try:
        assert version_of(base) == 2
        log = list(conv.state.events)
        assert len(log) == 10
        assert all(e.parent_id is None for e in log)  # as they were written
        assert conv.state.leaf_event_id is None and not conv.state.head_is_empty
        assert ids(conv.state.active_branch()) == ids(log)  # the whole history

        llm_server.reply_text("fourth answer")
        conv.send_message("fourth turn")
        conv.run()
        request = llm_server.requests[-1]
        user_said = [t for m, t in zip(request["messages"], texts(request), strict=True)
                     if m["role"] == "user"]  # fmt: skip
        assert user_said == [
            "first turn: say hello",
            "second turn: run echo",
            "third turn: answer",
            "fourth turn",
        ]
        fourth = conv.state.events[10]
        assert fourth.parent_id == log[-1].id

        turn_two = log[3]
        assert turn_two.llm_message.text == "second turn: run echo"
        conv.navigate_to(turn_two.id)
        assert ids(conv.state.active_branch()) == ids(log[:4])
        fork = conv.fork(from_event_id=log[8].id, title="from the old days")
        try:
            assert ids(fork.state.events) == ids(log[:9])
            assert fork.state.leaf_event_id == log[8].id
        finally:
            fork.close()
    finally:
        conv.close()
    store = ConversationStore(base, read_only=True)
    try:
        assert store.fork_origin(fork.id.hex) == (conversation_id.hex, log[8].id)
    finally:
        store.close()


def test_a_schema_1_database_opened_read_only_says_it_needs_an_upgrade(
    schema_1: tuple[Path, uuid.UUID], workspace: Path
) -> None:
    base, conversation_id = schema_1
    with pytest.raises(
        PersistenceError, match=r"schema 1, .* cannot be upgraded while it is read-only"
    ):
        ConversationState.create(
            id=conversation_id,
            agent=Agent(llm=LLM(model="openai/none"), tools=[Tool(name="terminal")]),
            workspace=LocalWorkspace(working_dir=str(workspace)),
            persistence_dir=str(base / conversation_id.hex),
            read_only=True,
        )
    assert version_of(base) == 1  # untouched


# --- damaged trees ----------------------------------------------------------------------------


@pytest.mark.parametrize("parent", [5, 3, -7])
def test_a_damaged_parent_is_a_clear_error_not_a_hang(
    open_conversation: Factory,
    llm_server: ScriptedLLMServer,
    persistence_dir: Path,
    parent: int,
) -> None:
    conv = open_conversation()
    with conv.state:
        for i in range(6):
            conv.state.append_event(user(f"m{i}"))
    conversation_id, key = conv.id, conv.state._key
    damaged = conv.state.events[3].id
    conv.close()
    with sqlite3.connect(persistence_dir / "conversations.db") as db:
        db.execute("UPDATE events SET parent = ? WHERE conversation = ? AND seq = 3", (parent, key))
    again = reopen(open_conversation, conversation_id)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            again.state.active_branch()
        except BaseException as exc:  # handed to the test
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "reading a damaged tree hung"
    assert len(outcome) == 1 and isinstance(outcome[0], ValueError)
    assert "do not form a tree" in str(outcome[0]) and damaged in str(outcome[0])
    llm_server.reply_text("never asked")
    with pytest.raises(ConversationRunError, match="do not form a tree"):
        again.run()
    assert not llm_server.requests
    fork = again.fork(from_event_id=again.state.events[2].id)  # the way on
    try:
        assert [e.llm_message.text for e in fork.state.active_branch()] == ["m0", "m1", "m2"]
    finally:
        fork.close()


# --- big trees ---------------------------------------------------------------------------------


def test_a_big_tree_reads_every_branch_as_its_parents_say_before_and_after_resume(
    open_conversation: Factory,
) -> None:
    rng = random.Random(26)
    conv = open_conversation()
    state = conv.state
    with state:
        for i in range(4000):
            if i and rng.random() < 0.02:  # a branch from anywhere, now and then
                target = state.events[rng.randrange(len(state.events))].id
                state.move_head(target if rng.random() < 0.95 else None)
            state.append_event(user(f"m{i}"), durable=False)
    log = list(state.events)
    assert_is_tree(log)
    leaves = [log[rng.randrange(len(log))].id for _ in range(25)] + [log[-1].id]
    expected = {leaf: walk_to_root(log, leaf) for leaf in leaves}
    for leaf in leaves:
        assert ids(state.events.path_to_root(leaf)) == expected[leaf]
        assert ids(state.events.path_to_root(leaf, limit=7)) == expected[leaf][-7:]
    assert ids(state.active_branch()) == walk_to_root(log, state.leaf_event_id)
    conv.close()

    again = reopen(open_conversation, conv.id)
    for leaf in leaves:
        assert ids(again.state.events.path_to_root(leaf)) == expected[leaf]
    assert ids(again.state.active_branch()) == walk_to_root(log, state.leaf_event_id)
