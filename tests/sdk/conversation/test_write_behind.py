"""Events written behind: what is handed to the background writer reads back at once, lands
on disk in order and in groups, and a failed write reaches the engine; a conversation puts
the user's messages and every action with effects on disk before going on."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer

import ohtui.sdk.conversation.event_store as event_store_module
from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    Conversation,
    LocalConversation,
    Message,
    MessageEvent,
    ObservationEvent,
    TextContent,
    Tool,
)
from ohtui.sdk.conversation import EventLog
from ohtui.sdk.conversation.exceptions import PersistenceError
from ohtui.sdk.conversation.store import ConversationStore, StoredEvent
from ohtui.sdk.security.confirmation_policy import NeverConfirm


def message(text: str) -> MessageEvent:
    return MessageEvent(
        source="agent", llm_message=Message(role="assistant", content=[TextContent(text=text)])
    )


class GatedStore(ConversationStore):
    """A store whose commits wait for `gate` and are recorded (their sizes)."""

    def __init__(self, base: Path) -> None:
        super().__init__(base)
        self.gate = threading.Event()
        self.gate.set()
        self.batches: list[int] = []
        self.fail_with: BaseException | None = None

    def append_many(
        self,
        key: int,
        events: Any,
        state: tuple[str, dict[str, Any]] | None = None,
    ) -> list[int]:
        assert self.gate.wait(30)
        if self.fail_with is not None:
            raise self.fail_with
        self.batches.append(len(events))
        return super().append_many(key, events, state)


@pytest.fixture
def gated(persistence_dir: Path) -> Iterator[tuple[GatedStore, int, EventLog]]:
    store = GatedStore(persistence_dir)
    key = store.create(uuid.uuid4().hex, "{}", {})
    yield store, key, EventLog(store, key)
    store.gate.set()
    store.close()


def on_disk(persistence_dir: Path, key: int) -> list[str]:
    """The ids of the events committed, read on a connection of their own."""
    store = ConversationStore(persistence_dir, read_only=True)
    try:
        return [e.id for e in EventLog(store, key)]
    finally:
        store.close()


def test_events_written_behind_read_back_at_once_then_land_in_one_group(
    gated: tuple[GatedStore, int, EventLog], persistence_dir: Path, monkeypatch: Any
) -> None:
    monkeypatch.setattr(event_store_module, "CACHED_EVENTS", 4)  # most fall out of the cache
    store, key, log = gated
    first = message("first")
    log.append(first, durable=False)  # the writer takes it, then waits at the gate
    store.gate.clear()
    events = [message(f"event {i}") for i in range(10)]
    for event in events:
        log.append(event, durable=False)
    assert len(log) == 11
    assert [e.id for e in log] == [first.id, *(e.id for e in events)]
    assert log[3].id == events[2].id and log.get_index(events[0].id) == 1
    assert log.cached <= 4  # read from the events waiting for the writer, not the store
    with pytest.raises(ValueError, match="already exists"):
        log.append(events[5], durable=False)  # a duplicate of one not on disk yet
    assert len(on_disk(persistence_dir, key)) <= 1
    store.gate.set()
    log.flush(10)
    assert on_disk(persistence_dir, key) == [first.id, *(e.id for e in events)]
    assert sum(store.batches) == 11 and len(store.batches) <= 3  # grouped, not one by one
    assert [e.id for e in log] == on_disk(persistence_dir, key)


def test_a_durable_append_waits_for_those_before_it(
    gated: tuple[GatedStore, int, EventLog], persistence_dir: Path
) -> None:
    store, key, log = gated
    store.gate.clear()
    behind = message("behind")
    log.append(behind, durable=False)
    done = threading.Event()
    durable = message("durable")
    thread = threading.Thread(target=lambda: (log.append(durable), done.set()))
    thread.start()
    assert not done.wait(0.3)  # it waits for the one before it
    store.gate.set()
    assert done.wait(10)
    thread.join()
    assert on_disk(persistence_dir, key) == [behind.id, durable.id]


def test_a_failed_write_reaches_the_next_append_and_flush(
    gated: tuple[GatedStore, int, EventLog],
) -> None:
    store, _key, log = gated
    store.fail_with = PersistenceError("the disk is full")
    lost = message("lost")
    log.append(lost, durable=False)
    with pytest.raises(PersistenceError, match="the disk is full"):
        log.flush(10)
    with pytest.raises(PersistenceError, match="the disk is full"):
        log.append(message("next"), durable=False)
    with pytest.raises(PersistenceError, match="the disk is full"):
        log.append(message("next, durable"))
    assert [e.id for e in log] == [lost.id]  # still readable here
    assert len(log) == 1


def test_refused_writes_are_refused_at_the_append(
    gated: tuple[GatedStore, int, EventLog],
) -> None:
    from ohtui.sdk.conversation.exceptions import ConversationReadOnlyError

    store, _key, log = gated
    store.refuse_writes("opened again elsewhere")
    with pytest.raises(ConversationReadOnlyError, match="opened again elsewhere"):
        log.append(message("x"), durable=False)
    assert len(log) == 0


def test_the_state_saved_after_events_written_behind_is_the_newest(
    llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    conversation = LocalConversation(
        agent=Agent(llm=llm, tools=[]),
        workspace=workspace,
        persistence_dir=persistence_dir,
        visualizer=None,
    )
    state = conversation.state
    state.notify_stats_changed()  # its state rides with the next event
    state.append_event(message("behind"), durable=False)
    state.title = "the newest title"  # saved at once, after what waits
    store = ConversationStore(persistence_dir, read_only=True)
    try:
        stored = store.load(conversation.id.hex)
        assert stored is not None and stored.event_count == 1
        assert json.loads(stored.state_json)["title"] == "the newest title"
    finally:
        store.close()
        conversation.close()


CHECK_SCRIPT = """\
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT data FROM events WHERE kind = 'ActionEvent'").fetchall()
print("ON-DISK" if any("check_disk.py" in data for (data,) in rows) else "NOT-ON-DISK")
"""


def test_an_action_with_effects_is_on_disk_before_it_runs_and_the_rest_once_run_returns(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path, persistence_dir: Path
) -> None:
    (workspace / "check_disk.py").write_text(CHECK_SCRIPT)
    database = persistence_dir / "conversations.db"
    llm_server.reply_tool_call("think", {"thought": "first, look"})
    llm_server.reply_tool_call(
        "terminal", {"command": f"{sys.executable} check_disk.py {database}"}
    )
    llm_server.reply_text("done")
    conversation = Conversation(
        agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=workspace,
        persistence_dir=persistence_dir,
        visualizer=None,
    )
    try:
        conversation.set_confirmation_policy(NeverConfirm())
        conversation.send_message("check")
        with sqlite3.connect(database) as db:  # what the user said is on disk at once
            kinds = [k for (k,) in db.execute("SELECT kind FROM events ORDER BY seq")]
        assert "MessageEvent" in kinds
        conversation.run()
        observations = [e for e in conversation.state.events if isinstance(e, ObservationEvent)]
        assert "ON-DISK" in observations[-1].observation.text
        ids = [e.id for e in conversation.state.events]
        with sqlite3.connect(database) as db:  # everything, once run() returns
            saved = [i for (i,) in db.execute("SELECT id FROM events ORDER BY seq")]
        assert saved == ids
        assert any(
            isinstance(e, ActionEvent) and e.tool_name == "think" for e in conversation.state.events
        )
    finally:
        conversation.close()


def test_stored_event_rows_append_in_one_transaction(persistence_dir: Path) -> None:
    store = ConversationStore(persistence_dir)
    key = store.create(uuid.uuid4().hex, "{}", {})
    rows = [StoredEvent(f"e{i}", "MessageEvent", "{}") for i in range(3)]
    assert store.append_many(key, rows) == [0, 1, 2]
    with pytest.raises(ValueError, match="already in the log"):
        store.append_many(key, [StoredEvent("e3", "MessageEvent", "{}"), rows[0]])
    assert store.event_count(key) == 3  # none of the failed group
    store.close()


EXITING_WRITER = """\
import sys, time, uuid
from ohtui.sdk import Message, MessageEvent, TextContent
from ohtui.sdk.conversation import EventLog
from ohtui.sdk.conversation.store import ConversationStore
class SlowStore(ConversationStore):  # the writer lags behind when the program ends
    def append_many(self, *args, **kwargs):
        time.sleep(0.05)
        return super().append_many(*args, **kwargs)
store = SlowStore(sys.argv[1])
key = store.create(uuid.uuid4().hex, "{}", {})
log = EventLog(store, key)
for i in range(300):
    time.sleep(0.0005)
    said = Message(role="assistant", content=[TextContent(text=f"event {i}")])
    log.append(MessageEvent(source="agent", llm_message=said), durable=False)
print(key)
"""


def test_a_program_that_ends_without_closing_still_has_every_event_saved(
    persistence_dir: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", EXITING_WRITER, str(persistence_dir)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    key = int(done.stdout.strip())
    assert len(on_disk(persistence_dir, key)) == 300
