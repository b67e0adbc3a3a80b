"""Tests for EventLog: a conversation's events, persisted in SQLite (lazily paged) or in memory."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import ohtui.sdk.conversation.store as store_module
from ohtui.sdk import (
    ActionEvent,
    AgentErrorEvent,
    Event,
    Message,
    MessageEvent,
    MessageToolCall,
    Observation,
    ObservationEvent,
    PauseEvent,
    SystemPromptEvent,
    TextContent,
    UserRejectObservation,
)
from ohtui.sdk.conversation import EventLog, event_store
from ohtui.sdk.conversation.event_store import PAGE_SIZE
from ohtui.sdk.conversation.store import ConversationStore

BIG = 600  # more than two pages of PAGE_SIZE events


def message(text: str, *, event_id: str | None = None, source: str = "user") -> MessageEvent:
    """A user (or agent) message event."""
    role = "user" if source == "user" else "assistant"
    extra = {"id": event_id} if event_id is not None else {}
    return MessageEvent(
        source=source,  # type: ignore[arg-type]
        llm_message=Message(role=role, content=[TextContent(text=text)]),
        **extra,
    )


def text_of(event: Event) -> str:
    assert isinstance(event, MessageEvent)
    return event.llm_message.text


def ids(events: Iterator[Event] | list[Event]) -> list[str]:
    return [e.id for e in events]


@dataclass
class Subject:
    """An EventLog under test and a way to read the same conversation afresh."""

    log: EventLog
    base_dir: Path | None = None
    key: int | None = None
    stores: list[ConversationStore] = field(default_factory=list)

    @property
    def persisted(self) -> bool:
        return self.base_dir is not None

    def reopen(self) -> EventLog:
        """A new EventLog on a new connection (the same log when in memory)."""
        if self.base_dir is None or self.key is None:
            return self.log
        store = ConversationStore(self.base_dir)
        self.stores.append(store)
        return EventLog(store, self.key)


@pytest.fixture(params=["persisted", "memory"])
def subject(request: pytest.FixtureRequest, persistence_dir: Path) -> Iterator[Subject]:
    if request.param == "memory":
        yield Subject(EventLog())
        return
    store = ConversationStore(persistence_dir)
    key = store.create(uuid.uuid4().hex, "{}", {})
    result = Subject(EventLog(store, key), persistence_dir, key, [store])
    yield result
    for opened in result.stores:
        opened.close()


@dataclass(frozen=True)
class BigLog:
    base_dir: Path
    key: int
    ids: list[str]
    texts: list[str]


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> BigLog:
    """A persisted conversation of BIG message events, written once per module."""
    base = tmp_path_factory.mktemp("big") / "conversations"
    store = ConversationStore(base)
    key = store.create(uuid.uuid4().hex, "{}", {})
    log = EventLog(store, key)
    texts = [f"message number {i}" for i in range(BIG)]
    for text in texts:
        log.append(message(text))
    event_ids = [log.get_id(i) for i in range(BIG)]
    store.close()
    return BigLog(base, key, event_ids, texts)


@pytest.fixture
def reopened_big(big_log: BigLog) -> Iterator[EventLog]:
    """A fresh EventLog over the big conversation: nothing parsed yet."""
    store = ConversationStore(big_log.base_dir)
    yield EventLog(store, big_log.key)
    store.close()


def parsed_count(log: EventLog) -> int:
    return log.cached


# --- basics, both persisted and in memory ---------------------------------------------------


def test_empty_log(subject: Subject) -> None:
    log = subject.log
    assert len(log) == 0
    assert list(log) == []
    assert list(reversed(log)) == []
    assert log[:] == []
    assert log[::-1] == []
    with pytest.raises(IndexError):
        log[0]
    with pytest.raises(IndexError):
        log[-1]
    with pytest.raises(IndexError):
        log.get_id(0)
    with pytest.raises(KeyError):
        log.get_index("no-such-id")


def test_append_then_int_and_negative_indexes(subject: Subject) -> None:
    events = [message(f"m{i}") for i in range(5)]
    for event in events:
        subject.log.append(event)
    for log in (subject.log, subject.reopen()):
        assert len(log) == 5
        assert log[0].id == events[0].id
        assert log[4].id == events[4].id
        assert log[-1].id == events[4].id
        assert log[-5].id == events[0].id
        assert text_of(log[2]) == "m2"
        for bad in (5, 6, -6, 1000, -1000):
            with pytest.raises(IndexError):
                log[bad]
        assert log.get_id(0) == events[0].id
        assert log.get_id(-1) == events[4].id
        assert log.get_id(-5) == events[0].id
        with pytest.raises(IndexError):
            log.get_id(-6)
        for i, event in enumerate(events):
            assert log.get_index(event.id) == i
        with pytest.raises(KeyError):
            log.get_index("missing")


SLICES = [
    slice(2, 5),
    slice(None, 3),
    slice(7, None),
    slice(-3, None),
    slice(None, None, 2),
    slice(1, 8, 3),
    slice(None, None, -1),
    slice(8, 2, -2),
    slice(-1, -4, -1),
    slice(5, 2),
    slice(100, 200),
    slice(-100, 2),
    slice(None, None, 100),
]


@pytest.mark.parametrize("sl", SLICES, ids=str)
def test_slices_match_list_slicing(subject: Subject, sl: slice) -> None:
    events = [message(f"m{i}") for i in range(10)]
    for event in events:
        subject.log.append(event)
    expected = ids(events)[sl]
    assert ids(subject.log[sl]) == expected
    assert ids(subject.reopen()[sl]) == expected


def test_slice_with_zero_step_is_an_error(subject: Subject) -> None:
    subject.log.append(message("only"))
    with pytest.raises(ValueError):
        subject.log[::0]


def test_iteration_and_reversed(subject: Subject) -> None:
    events = [message(f"m{i}") for i in range(7)]
    for event in events:
        subject.log.append(event)
    log = subject.reopen()
    assert ids(log) == ids(events)
    assert ids(reversed(log)) == ids(events)[::-1]
    assert [text_of(e) for e in log] == [f"m{i}" for i in range(7)]


def test_duplicate_id_is_rejected_and_changes_nothing(subject: Subject) -> None:
    first = message("first")
    subject.log.append(first)
    with pytest.raises(ValueError, match=f"Event with ID '{first.id}' already exists at index 0"):
        subject.log.append(first)
    with pytest.raises(ValueError, match=first.id):
        subject.log.append(message("another text, same id", event_id=first.id))
    assert len(subject.log) == 1
    second = message("second")
    subject.log.append(second)
    assert subject.log.get_index(second.id) == 1
    log = subject.reopen()
    assert ids(log) == [first.id, second.id]
    assert text_of(log[0]) == "first"


def test_events_round_trip_with_their_types(subject: Subject) -> None:
    call = MessageToolCall(id="call_1", name="think", arguments='{"thought": "hm"}')
    action = ActionEvent(
        tool_name="think", tool_call_id="call_1", tool_call=call, llm_response_id="r1"
    )
    events: list[Event] = [
        SystemPromptEvent(system_prompt=TextContent(text="be nice"), tools=[{"type": "function"}]),
        message("hello"),
        action,
        ObservationEvent(
            observation=Observation.from_text("ok"),
            action_id=action.id,
            tool_name="think",
            tool_call_id="call_1",
        ),
        UserRejectObservation(action_id=action.id, tool_name="think", tool_call_id="call_2"),
        AgentErrorEvent(error="bad args", tool_name="think", tool_call_id="call_3"),
        message("an answer", source="agent"),
        PauseEvent(),
    ]
    for event in events:
        subject.log.append(event)
    log = subject.reopen()
    assert [type(e) for e in log] == [type(e) for e in events]
    assert [e.model_dump_json() for e in log] == [e.model_dump_json() for e in events]


def test_log_needs_both_store_and_key(persistence_dir: Path) -> None:
    store = ConversationStore(persistence_dir)
    try:
        with pytest.raises(ValueError, match="both"):
            EventLog(store)
        with pytest.raises(ValueError, match="both"):
            EventLog(None, 1)
    finally:
        store.close()


# --- several pages ---------------------------------------------------------------------------


def test_reopened_log_parses_nothing_until_read(reopened_big: EventLog) -> None:
    assert len(reopened_big) == BIG
    assert parsed_count(reopened_big) == 0
    reopened_big[300]
    assert 1 <= parsed_count(reopened_big) <= PAGE_SIZE
    assert not reopened_big.in_memory(0)


def test_iteration_over_several_pages(reopened_big: EventLog, big_log: BigLog) -> None:
    assert ids(reopened_big) == big_log.ids
    assert [text_of(e) for e in reopened_big] == big_log.texts


def test_reversed_over_several_pages(reopened_big: EventLog, big_log: BigLog) -> None:
    assert ids(reversed(reopened_big)) == big_log.ids[::-1]


def test_reversed_reads_lazily_from_the_end(reopened_big: EventLog, big_log: BigLog) -> None:
    newest = next(reversed(reopened_big))
    assert newest.id == big_log.ids[-1]
    assert parsed_count(reopened_big) <= PAGE_SIZE
    assert not reopened_big.in_memory(0)


@pytest.mark.parametrize(
    "sl",
    [
        slice(250, 260),
        slice(PAGE_SIZE - 1, PAGE_SIZE + 1),
        slice(None, None, 100),
        slice(-300, None, 7),
        slice(None, None, -1),
        slice(590, 100, -97),
        slice(-2 * PAGE_SIZE - 10, -PAGE_SIZE + 5),
    ],
    ids=str,
)
def test_slices_across_pages(reopened_big: EventLog, big_log: BigLog, sl: slice) -> None:
    assert ids(reopened_big[sl]) == big_log.ids[sl]


def test_indexes_at_page_boundaries(reopened_big: EventLog, big_log: BigLog) -> None:
    for i in (0, PAGE_SIZE - 1, PAGE_SIZE, 2 * PAGE_SIZE, BIG - 1, -1, -BIG, -PAGE_SIZE - 1):
        assert reopened_big[i].id == big_log.ids[i]
        assert reopened_big.get_id(i) == big_log.ids[i]
    with pytest.raises(IndexError):
        reopened_big[BIG]
    with pytest.raises(IndexError):
        reopened_big[-BIG - 1]


def test_get_index_after_reopen_reads_no_events(reopened_big: EventLog, big_log: BigLog) -> None:
    for i in (0, 1, PAGE_SIZE - 1, PAGE_SIZE, 599):
        assert reopened_big.get_index(big_log.ids[i]) == i
    assert parsed_count(reopened_big) == 0
    with pytest.raises(KeyError, match="nope"):
        reopened_big.get_index("nope")


def test_index_of_finds_an_event_by_id_without_reading_events(
    reopened_big: EventLog, big_log: BigLog
) -> None:
    for i in (0, PAGE_SIZE, BIG - 1):
        assert reopened_big.index_of(big_log.ids[i]) == i
    assert parsed_count(reopened_big) == 0  # the store's index answered, no page was read
    with pytest.raises(KeyError, match="Unknown event_id: nope"):
        reopened_big.index_of("nope")


def test_index_of_in_memory_and_before_the_write(subject: Subject) -> None:
    first, second = message("one"), message("two")
    subject.log.append(first)
    subject.log.append(second)
    assert [subject.log.index_of(first.id), subject.log.index_of(second.id)] == [0, 1]
    with pytest.raises(KeyError, match="Unknown event_id: missing"):
        subject.log.index_of("missing")


def test_index_of_is_declared_by_every_events_list() -> None:
    assert "index_of" in vars(event_store.EventsListBase)
    assert "get_index" in event_store.EventsListBase.__abstractmethods__


# --- duplicates across instances, lock timeouts --------------------------------------------


def test_duplicate_already_on_disk_from_another_instance(persistence_dir: Path) -> None:
    store = ConversationStore(persistence_dir)
    key = store.create(uuid.uuid4().hex, "{}", {})
    first = message("first")
    EventLog(store, key).append(first)
    store.close()

    other_store = ConversationStore(persistence_dir)
    try:
        log = EventLog(other_store, key)
        with pytest.raises(ValueError, match=f"'{first.id}' already exists at index 0"):
            log.append(message("same id", event_id=first.id))
        assert len(log) == 1
        log.append(message("second"))
        assert len(log) == 2
        assert [text_of(e) for e in log] == ["first", "second"]
    finally:
        other_store.close()


LOCK_HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(60)
"""


def test_append_times_out_while_another_process_holds_the_lock(
    persistence_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The sqlite busy timeout is fixed when the store connects: lower it first.
    monkeypatch.setattr(store_module, "LOCK_TIMEOUT_SECONDS", 0.3)
    store = ConversationStore(persistence_dir)
    holder: subprocess.Popen[str] | None = None
    try:
        key = store.create(uuid.uuid4().hex, "{}", {})
        log = EventLog(store, key)
        log.append(message("before"))
        script = tmp_path / "hold_lock.py"
        script.write_text(LOCK_HOLDER)
        holder = subprocess.Popen(
            [sys.executable, str(script), str(store.path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"

        blocked = message("during")
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            log.append(blocked)
        elapsed = time.monotonic() - started
        assert 0.2 <= elapsed < 5, elapsed
        assert len(log) == 1

        holder.kill()
        holder.wait()
        log.append(blocked)  # the failed append left no trace: the same event goes in now
        assert log.get_index(blocked.id) == 1
        assert [text_of(e) for e in EventLog(store, key)] == ["before", "during"]
    finally:
        if holder is not None and holder.poll() is None:
            holder.kill()
            holder.wait()
        store.close()


# --- concurrency --------------------------------------------------------------------------


def test_concurrent_appends_from_four_threads(subject: Subject) -> None:
    threads_count, per_thread = 4, 60
    batches = [[message(f"t{t}-{i}") for i in range(per_thread)] for t in range(threads_count)]
    barrier = threading.Barrier(threads_count)
    errors: list[BaseException] = []

    def worker(batch: list[MessageEvent]) -> None:
        try:
            barrier.wait()
            for event in batch:
                subject.log.append(event)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(b,)) for b in batches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    total = threads_count * per_thread
    for log in (subject.log, subject.reopen()):
        assert len(log) == total
        indexes = [log.get_index(e.id) for b in batches for e in b]
        assert sorted(indexes) == list(range(total))
        for batch in batches:
            mine = [log.get_index(e.id) for e in batch]
            assert mine == sorted(mine)  # each thread's events keep its order
        by_index = {log.get_index(e.id): e.id for b in batches for e in b}
        assert ids(log) == [by_index[i] for i in range(total)]


PROCESS_APPENDER = """
import sys
from ohtui.sdk import Message, MessageEvent, TextContent
from ohtui.sdk.conversation.event_store import EventLog
from ohtui.sdk.conversation.store import ConversationStore

base, key, tag, count = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
store = ConversationStore(base)
log = EventLog(store, key)
print("ready", flush=True)
sys.stdin.readline()  # start together
for i in range(count):
    text = f"{tag} {i}"
    log.append(
        MessageEvent(
            id=f"{tag}-{i}",
            source="user",
            llm_message=Message(role="user", content=[TextContent(text=text)]),
        )
    )
print("done", flush=True)
"""


def test_appends_from_two_processes_both_land(persistence_dir: Path, tmp_path: Path) -> None:
    store = ConversationStore(persistence_dir)
    key = store.create(uuid.uuid4().hex, "{}", {})
    stale = EventLog(store, key)  # opened before the other processes write
    script = tmp_path / "appender.py"
    script.write_text(PROCESS_APPENDER)
    count = 150
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(persistence_dir), str(key), tag, str(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.stderr
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            assert out.strip() == "done"

        fresh = EventLog(store, key)
        assert len(fresh) == 2 * count
        assert sorted(fresh.get_index(i) for i in ids(fresh)) == list(range(2 * count))
        for tag in ("a", "b"):
            mine = [e.id for e in fresh if e.id.startswith(f"{tag}-")]
            assert mine == [f"{tag}-{i}" for i in range(count)]

        # A log opened before the other processes wrote appends after their events.
        last = message("from the parent")
        stale.append(last)
        assert stale.get_index(last.id) == 2 * count
        assert len(stale) == 2 * count + 1
        assert stale[0].id == fresh[0].id
        assert stale[-2].id == fresh[-1].id
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        store.close()


# --- lean memory: only the most recently used events stay in memory ---------------------------


def test_a_stored_log_keeps_a_bounded_number_of_events_in_memory(
    reopened_big: EventLog, big_log: BigLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_store, "CACHED_EVENTS", 100)
    assert ids(reopened_big) == big_log.ids  # paged from the store: the same sequence
    assert reopened_big.cached <= 100
    assert ids(reversed(reopened_big)) == big_log.ids[::-1]
    assert ids(reopened_big[::-1]) == big_log.ids[::-1]
    assert ids(reopened_big[50:550:7]) == big_log.ids[50:550:7]
    assert [reopened_big[i].id for i in (0, 599, 1, 300, -2)] == [
        big_log.ids[i] for i in (0, 599, 1, 300, -2)
    ]
    assert reopened_big.get_index(big_log.ids[5]) == 5  # evicted: asked of the store
    assert reopened_big.cached <= 100
    assert reopened_big.in_memory(598) and not reopened_big.in_memory(10)


def test_appends_beyond_the_memory_bound_stay_readable_and_unique(
    subject: Subject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(event_store, "CACHED_EVENTS", 10)
    events = [message(f"m{i}") for i in range(30)]
    for event in events:
        subject.log.append(event)
    assert ids(subject.log) == [e.id for e in events]
    with pytest.raises(ValueError, match="already exists at index 0"):
        subject.log.append(events[0])  # no longer in memory: the store knows it
    if subject.persisted:
        assert subject.log.cached <= 10
    else:
        assert subject.log.cached == 30  # nowhere else to read them from


class _FileStore:
    """Stands for an SDK FileStore: an object an EventLog must not write to."""

    def __getattr__(self, name: str) -> None:
        raise AssertionError(f"the EventLog used the file store's {name!r}")


def test_a_log_built_on_an_sdk_file_store_keeps_its_events_in_memory(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level("WARNING"):
        log = EventLog(_FileStore(), "custom_events")  # the SDK's (file_store, dir_path)
    assert "does not write events to a FileStore" in caplog.text
    first, second = message("one"), message("two")
    log.append(first)
    log.append(second)
    assert [e.id for e in log] == [first.id, second.id]
    assert log[0] is first and log.get_id(-1) == second.id
    with pytest.raises(IndexError, match="Event index out of range: 2"):
        log[2]
    with pytest.raises(ValueError, match=f"Event with ID '{first.id}' already exists at index 0"):
        log.append(first)
