"""One process per conversation: the lease a LocalConversation holds while it is open.

Holders are real: this process, its threads, or another Python process (tests/holder.py)
that is released normally or killed with SIGKILL.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from holder import held_elsewhere
from llm_server import ScriptedLLMServer

from ohtui.sdk import (
    LLM,
    Agent,
    AgentErrorEvent,
    AlwaysConfirm,
    Conversation,
    LocalConversation,
    Tool,
)
from ohtui.sdk.conversation import (
    ConversationExecutionStatus,
    ConversationLockedError,
    ConversationNotFoundError,
    ConversationReadOnlyError,
    ConversationState,
    EventLog,
    PersistenceError,
    delete_conversation,
    find_conversation,
    list_conversations,
    rename_conversation,
    search_conversations,
)
from ohtui.sdk.conversation.store import ConversationStore
from ohtui.sdk.event import PauseEvent
from ohtui.sdk.llm import RegistryEvent
from ohtui.sdk.security import LLMSecurityAnalyzer
from ohtui.sdk.tools.terminal import TerminalAction
from ohtui.sdk.workspace import LocalWorkspace

Status = ConversationExecutionStatus


def open_conversation(
    llm: LLM,
    workspace: Path,
    persistence_dir: Path,
    conversation_id: uuid.UUID | str | None = None,
    *,
    read_only: bool = False,
    tools: tuple[str, ...] = ("terminal",),
) -> LocalConversation:
    if isinstance(conversation_id, str):
        conversation_id = uuid.UUID(conversation_id)
    return Conversation(
        agent=Agent(llm=llm, tools=[Tool(name=name) for name in tools]),
        workspace=workspace,
        persistence_dir=persistence_dir,
        conversation_id=conversation_id,
        visualizer=None,
        read_only=read_only,
    )


@pytest.fixture
def saved(
    llm_server: ScriptedLLMServer, llm: LLM, workspace: Path, persistence_dir: Path
) -> Iterator[str]:
    """A saved, closed conversation with one exchange and a command that ran; its id (hex)."""
    conversation = open_conversation(llm, workspace, persistence_dir)
    llm_server.reply_tool_call("terminal", {"command": "echo 9 >> shared.txt"})
    llm_server.reply_text("Appended 9.")
    conversation.send_message("append 9 to shared.txt")
    conversation.run()
    conversation.state.title = "Appending"
    conversation.close()
    assert (workspace / "shared.txt").read_text() == "9\n"
    yield conversation.id.hex


def database_rows(persistence_dir: Path) -> tuple[list[tuple[object, ...]], ...]:
    """Everything stored about every conversation, to compare before and after."""
    with sqlite3.connect(persistence_dir / "conversations.db") as conn:
        tables = tuple(
            conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in ("conversations", "states", "events")
        )
    conn.close()
    return tables


# --- one holder at a time ----------------------------------------------------------------


def test_a_second_open_in_this_process_is_refused_until_the_first_closes(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    first = open_conversation(llm, workspace, persistence_dir, saved)
    try:
        before = database_rows(persistence_dir)
        with pytest.raises(ConversationLockedError) as refused:
            open_conversation(llm, workspace, persistence_dir, saved)
        error = refused.value
        assert error.holder.pid == os.getpid()
        assert f"pid {os.getpid()}" in str(error)
        assert saved in str(error)
        assert "read-only" in str(error)  # says what can be done
        assert database_rows(persistence_dir) == before
    finally:
        first.close()
    second = open_conversation(llm, workspace, persistence_dir, saved)
    second.close()


def test_another_process_is_named_with_its_pid_and_start_time(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    with held_elsewhere(persistence_dir, workspace, saved, ("terminal",)) as holder:
        with pytest.raises(ConversationLockedError) as refused:
            open_conversation(llm, workspace, persistence_dir, saved)
        found = refused.value.holder
        assert found.pid == holder.pid
        assert found.host == socket.gethostname()
        assert found.started is not None
        assert holder.started - 2 <= found.started.timestamp() <= time.time()
        message = str(refused.value)
        assert f"pid {holder.pid}" in message
        assert found.started.astimezone().strftime("%H:%M:%S") in message
        holder.release()
    open_conversation(llm, workspace, persistence_dir, saved).close()


def test_kill_9_of_the_holder_hands_the_conversation_over(
    saved: str, llm_server: ScriptedLLMServer, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    with held_elsewhere(persistence_dir, workspace, saved, ("terminal",)) as holder:
        with pytest.raises(ConversationLockedError):
            open_conversation(llm, workspace, persistence_dir, saved)
        holder.kill9()
        leases = list((persistence_dir / "leases").iterdir())
        assert leases, "a killed holder cannot clean up: its lease file stays"
        conversation = open_conversation(llm, workspace, persistence_dir, saved)
        try:
            llm_server.reply_text("Still 9.")
            conversation.send_message("and now?")
            conversation.run()
            assert conversation.state.execution_status is Status.FINISHED
        finally:
            conversation.close()
    assert not (persistence_dir / "leases").exists() or not list(
        (persistence_dir / "leases").iterdir()
    )


def test_a_stale_lease_file_naming_a_live_pid_does_not_block(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    # What the file says is only for messages: a lock nobody holds is free, whatever pid
    # (here a live one, this very process) it names. No pid-reuse guessing.
    (persistence_dir / "leases").mkdir(exist_ok=True)
    stale = persistence_dir / "leases" / f"{saved}.lock"
    stale.write_text(json.dumps({"pid": os.getpid(), "host": "x", "started": 1.0}))
    conversation = open_conversation(llm, workspace, persistence_dir, saved)
    conversation.close()
    assert not stale.exists()


def test_closing_releases_and_leaves_no_lease_file(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    for _ in range(3):
        conversation = open_conversation(llm, workspace, persistence_dir, saved)
        assert list((persistence_dir / "leases").iterdir())
        conversation.close()
        assert not list((persistence_dir / "leases").iterdir())


def test_a_lease_that_cannot_be_made_says_where_and_what_to_do(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    shutil.rmtree(persistence_dir / "leases", ignore_errors=True)
    (persistence_dir / "leases").write_text("in the way")
    with pytest.raises(PersistenceError, match="choose another persistence directory") as failed:
        open_conversation(llm, workspace, persistence_dir, saved)
    assert str(persistence_dir / "leases") in str(failed.value)


def test_a_conversation_dropped_without_close_lets_go_once_collected(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    """Nothing can write through an unreachable conversation, so its lease need not outlive it.

    Its objects refer to each other, so only the cycle collector frees them: an opener
    refused by this very process collects once before giving up.
    """
    dropped = open_conversation(llm, workspace, persistence_dir, saved)
    dropped.send_message("left open")
    del dropped
    again = open_conversation(llm, workspace, persistence_dir, saved)
    try:
        assert again.state.events[-1].llm_message.text == "left open"  # type: ignore[attr-defined]
    finally:
        again.close()


def test_a_failed_open_does_not_keep_the_lease(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    with pytest.raises(ValueError, match="terminal"):
        open_conversation(llm, workspace, persistence_dir, saved, tools=())  # tool missing
    open_conversation(llm, workspace, persistence_dir, saved).close()


def race_to_open(
    llm: LLM, workspace: Path, persistence_dir: Path, saved: str, racers: int
) -> tuple[list[LocalConversation], list[ConversationLockedError], list[BaseException]]:
    """Open the conversation from `racers` threads at once: (opened, refused, failed)."""
    barrier = threading.Barrier(racers)
    opened: list[LocalConversation] = []
    refused: list[ConversationLockedError] = []
    failures: list[BaseException] = []

    def race() -> None:
        barrier.wait()
        try:
            opened.append(open_conversation(llm, workspace, persistence_dir, saved))
        except ConversationLockedError as exc:
            refused.append(exc)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=race) for _ in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return opened, refused, failures


def test_threads_racing_to_open_it_get_exactly_one_holder(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    for _ in range(3):  # ~1 s each: the refused collect garbage once before giving up
        opened, refused, failures = race_to_open(llm, workspace, persistence_dir, saved, 4)
        assert failures == []
        assert len(opened) == 1 and len(refused) == 3
        opened[0].close()


def test_watching_who_holds_what_never_refuses_an_opener(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    stop = threading.Event()
    watched: list[int] = []

    def watch() -> None:
        while not stop.is_set():
            list_conversations(persistence_dir)
            watched.append(1)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for _ in range(100):
            open_conversation(llm, workspace, persistence_dir, saved, tools=("terminal",)).close()
    finally:
        stop.set()
        watcher.join(30)
    assert len(watched) > 10


# --- read-only ---------------------------------------------------------------------------


def test_read_only_shows_the_history_and_refuses_every_change(
    saved: str, llm_server: ScriptedLLMServer, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    with held_elsewhere(persistence_dir, workspace, saved, ("terminal",)):
        before = database_rows(persistence_dir)
        requests = len(llm_server.requests)
        reader = open_conversation(llm, workspace, persistence_dir, saved, read_only=True)
        try:
            assert reader.read_only
            state = reader.state
            assert state.title == "Appending"
            assert state.execution_status is Status.FINISHED
            texts = [str(e.visualize.plain) for e in state.events]
            assert any("append 9 to shared.txt" in t for t in texts)
            assert any("Appended 9." in t for t in texts)

            attempts = {
                "send_message": lambda: reader.send_message("again"),
                "run": reader.run,
                "pause": reader.pause,
                "reject": reader.reject_pending_actions,
                "policy": lambda: reader.set_confirmation_policy(AlwaysConfirm()),
                "analyzer": lambda: reader.set_security_analyzer(LLMSecurityAnalyzer()),
                "secrets": lambda: reader.update_secrets({"TOKEN": "s3cret"}),
                "tool": lambda: reader.execute_tool(
                    "terminal", TerminalAction(command="echo 9 >> shared.txt")
                ),
                "ask": lambda: reader.ask_agent("what happened?"),
                "title": reader.generate_title,
                "state field": lambda: setattr(state, "title", "Changed"),
                "event": lambda: state.events.append(
                    state.events[0].model_copy(update={"id": "fresh"})
                ),
            }
            for name, attempt in attempts.items():
                with pytest.raises(ConversationReadOnlyError, match="read-only"):
                    attempt()
                assert name and state.title == "Appending"
            reader.delete_on_close = True  # a read-only open never deletes anything
        finally:
            reader.close()
        assert database_rows(persistence_dir) == before
        assert len(llm_server.requests) == requests
        assert (workspace / "shared.txt").read_text() == "9\n"


def test_read_only_leaves_a_live_run_alone(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    # A saved RUNNING status is a crash only when nobody holds the conversation.
    holder = open_conversation(llm, workspace, persistence_dir, saved)
    try:
        holder.state.execution_status = Status.RUNNING
        reader = open_conversation(llm, workspace, persistence_dir, saved, read_only=True)
        try:
            assert reader.state.execution_status is Status.RUNNING
            assert not any(isinstance(e, AgentErrorEvent) for e in reader.state.events)
        finally:
            reader.close()
        assert holder.state.execution_status is Status.RUNNING
    finally:
        holder.close()


def test_read_only_needs_a_saved_conversation(
    llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    with pytest.raises(ConversationNotFoundError):
        open_conversation(llm, workspace, persistence_dir, uuid.uuid4(), read_only=True)
    assert list_conversations(persistence_dir) == []


def test_a_state_opened_read_only_takes_no_lease(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    reader = ConversationState.create(
        id=uuid.UUID(saved),
        agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=LocalWorkspace(working_dir=str(workspace)),
        persistence_dir=str(persistence_dir / saved),
        read_only=True,
    )
    try:
        writer = open_conversation(llm, workspace, persistence_dir, saved)
        writer.close()
    finally:
        reader.close()


# --- the rest of the store respects the holder -------------------------------------------


def test_delete_and_rename_wait_for_the_holder(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    with held_elsewhere(persistence_dir, workspace, saved, ("terminal",)) as holder:
        with pytest.raises(ConversationLockedError, match=f"pid {holder.pid}"):
            delete_conversation(persistence_dir, saved)
        with pytest.raises(ConversationLockedError, match=f"pid {holder.pid}"):
            rename_conversation(persistence_dir, saved, "Renamed behind its back")
        (summary,) = list_conversations(persistence_dir)
        assert summary.title == "Appending"
        holder.release()
    rename_conversation(persistence_dir, saved, "Renamed")
    assert find_conversation(persistence_dir, saved[:8]).title == "Renamed"
    delete_conversation(persistence_dir, saved)
    assert list_conversations(persistence_dir) == []


def test_path_like_ids_never_reach_the_lease_directory(persistence_dir: Path) -> None:
    store = ConversationStore(persistence_dir)
    try:
        for bad in ("../escape", "a/b", "", "0123"):
            with pytest.raises(ValueError, match="not a conversation id"):
                store.lease(bad)
    finally:
        store.close()
    assert not (persistence_dir.parent / "escape.lock").exists()


# --- listings mark what is open elsewhere ------------------------------------------------


def test_listings_mark_conversations_held_by_a_live_process(
    saved: str, llm_server: ScriptedLLMServer, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    llm_server.reply_text("Other.")
    other = open_conversation(llm, workspace, persistence_dir)
    other.send_message("another appending conversation")
    other.run()
    other.close()
    with held_elsewhere(persistence_dir, workspace, saved, ("terminal",)) as holder:
        held = {s.id: s.held_by for s in list_conversations(persistence_dir)}
        assert held[other.id.hex] is None
        assert held[saved] is not None and held[saved].pid == holder.pid
        (hit,) = [h for h in search_conversations(persistence_dir, "append") if h.summary.held_by]
        assert hit.summary.id == saved
        assert find_conversation(persistence_dir, saved[:10]).held_by is not None
        holder.kill9()
        assert all(s.held_by is None for s in list_conversations(persistence_dir))


def test_a_thousand_conversations_list_quickly_with_some_held(persistence_dir: Path) -> None:
    store = ConversationStore(persistence_dir)
    store._conn.execute("PRAGMA synchronous=OFF")  # setup speed; not what is measured
    ids = [uuid.uuid4().hex for _ in range(1000)]
    for i, cid in enumerate(ids):
        store.create(cid, "{}", {"title": f"Conversation {i}", "workspace": "/ws"})
    leases = [store.lease(cid) for cid in ids[::100]]
    try:
        list_conversations(persistence_dir)  # warm the page cache
        started = time.perf_counter()
        summaries = list_conversations(persistence_dir)
        listed = time.perf_counter() - started
        print(f"1000 conversations, 10 held: listed in {listed * 1e3:.1f} ms")
        assert {s.id for s in summaries if s.held_by} == set(ids[::100])
        assert listed < 0.5
    finally:
        for lease in leases:
            lease.release()
        store.close()


def test_an_event_log_read_through_a_read_only_store_refuses_appends(
    saved: str, persistence_dir: Path
) -> None:
    store = ConversationStore(persistence_dir, read_only=True)
    try:
        stored = store.load(saved)
        assert stored is not None
        log = EventLog(store, stored.key)
        with pytest.raises(ConversationReadOnlyError):
            log.append(log[0].model_copy(update={"id": "new-id"}))
        assert len(EventLog(store, stored.key)) == len(log)
    finally:
        store.close()


def test_a_forked_child_exiting_leaves_the_parents_lease_alone(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    held = open_conversation(llm, workspace, persistence_dir, saved)
    try:
        lease_file = persistence_dir / "leases" / f"{saved}.lock"
        pid = os.fork()
        if pid == 0:  # the child ends as a Python program does, running its finalizers
            try:
                held.state._lease.release()  # type: ignore[union-attr]
            finally:
                os._exit(0 if not lease_file.exists() else 3)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 3  # the child left the file in place
        assert lease_file.exists()
        with pytest.raises(ConversationLockedError):
            open_conversation(llm, workspace, persistence_dir, saved)
    finally:
        held.close()


# --- in this process: a later open takes over from an idle state ---------------------------


def open_state(llm: LLM, workspace: Path, persistence_dir: Path, saved: str) -> ConversationState:
    """The saved conversation's state opened on its own (as the SDK's own code does)."""
    return ConversationState.create(
        id=uuid.UUID(saved),
        agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=LocalWorkspace(working_dir=str(workspace)),
        persistence_dir=str(persistence_dir / saved),
    )


def no_lease_files(persistence_dir: Path) -> bool:
    return not list((persistence_dir / "leases").iterdir())


def at_once(*calls: Callable[[], object]) -> None:
    """Run each call on its own thread, all released at the same instant."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], object]) -> None:
        barrier.wait()
        call()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)


def test_a_later_open_in_this_process_takes_an_idle_state_over(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    first = open_state(llm, workspace, persistence_dir, saved)
    first.title = "set by the first"
    first.block_action("action-1", "blocked by a hook")
    second = open_state(llm, workspace, persistence_dir, saved)
    try:
        assert second.title == "set by the first"
        assert second.blocked_actions == {"action-1": "blocked by a hook"}
        assert first.read_only and not second.read_only
        before = database_rows(persistence_dir)
        with pytest.raises(ConversationReadOnlyError, match="opened again in this process"):
            first.title = "a late write"
        with pytest.raises(ConversationReadOnlyError, match="opened again in this process"):
            first.append_event(PauseEvent())
        assert database_rows(persistence_dir) == before
        first.close()  # lets go of nothing: the conversation is the second's now
        held_by = find_conversation(persistence_dir, saved).held_by
        assert held_by is not None and held_by.pid == os.getpid()
        second.title = "set by the second"
    finally:
        second.close()
    found = find_conversation(persistence_dir, saved)
    assert (found.title, found.held_by) == ("set by the second", None)
    assert no_lease_files(persistence_dir)


def test_what_the_idle_state_had_not_saved_yet_reaches_the_new_one(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    first = open_state(llm, workspace, persistence_dir, saved)
    spent = first.stats.get_combined_metrics().accumulated_cost
    extra = LLM(model="openai/test-model", usage_id="lease-extra")
    first.stats.register_llm(RegistryEvent(llm=extra))
    assert extra.metrics is not None
    extra.metrics.add_cost(0.25)
    first.notify_stats_changed()  # saved with the next event, which never comes
    second = open_state(llm, workspace, persistence_dir, saved)
    try:
        cost = second.stats.get_combined_metrics().accumulated_cost
        assert cost == pytest.approx(spent + 0.25)
    finally:
        second.close()
        first.close()


def test_a_state_closing_while_it_is_reopened_loses_nothing_it_had_pending(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    rounds = 15
    where = (llm, workspace, persistence_dir, saved)
    probe = open_state(*where)
    spent = probe.stats.get_combined_metrics().accumulated_cost
    probe.close()
    for round_ in range(rounds):
        first = open_state(*where)
        extra = LLM(model="openai/test-model", usage_id=f"lease-extra-{round_}")
        first.stats.register_llm(RegistryEvent(llm=extra))
        assert extra.metrics is not None
        extra.metrics.add_cost(0.25)
        first.notify_stats_changed()
        reopened: list[ConversationState] = []
        at_once(first.close, lambda into=reopened: into.append(open_state(*where)))
        [second] = reopened
        cost = second.stats.get_combined_metrics().accumulated_cost
        second.close()
        assert cost == pytest.approx(spent + 0.25 * (round_ + 1))
    assert no_lease_files(persistence_dir)


def test_a_state_in_use_on_another_thread_is_not_taken_over(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    first = open_state(llm, workspace, persistence_dir, saved)
    inside, leave = threading.Event(), threading.Event()

    def use() -> None:
        with first:
            inside.set()
            leave.wait(10)

    user = threading.Thread(target=use)
    user.start()
    try:
        assert inside.wait(10)
        with pytest.raises(ConversationLockedError) as refused:
            open_state(llm, workspace, persistence_dir, saved)
        assert refused.value.holder.pid == os.getpid()
        assert not first.read_only
        first.title = "still the first's"
    finally:
        leave.set()
        user.join(10)
    second = open_state(llm, workspace, persistence_dir, saved)
    assert second.title == "still the first's" and first.read_only
    second.close()
    first.close()
    assert no_lease_files(persistence_dir)


def test_a_conversation_is_never_taken_over_but_takes_an_idle_state_over(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    state = open_state(llm, workspace, persistence_dir, saved)
    conversation = open_conversation(llm, workspace, persistence_dir, saved)
    try:
        assert state.read_only and not conversation.read_only
        with pytest.raises(ConversationLockedError):
            open_state(llm, workspace, persistence_dir, saved)
        with pytest.raises(ConversationLockedError):
            open_conversation(llm, workspace, persistence_dir, saved)
        conversation.send_message("still this conversation's")
    finally:
        conversation.close()
        state.close()
    assert no_lease_files(persistence_dir)


def test_a_state_held_by_another_process_is_never_taken_over(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    with (
        held_elsewhere(persistence_dir, workspace, saved, ("terminal",)) as holder,
        pytest.raises(ConversationLockedError, match=f"pid {holder.pid}"),
    ):
        open_state(llm, workspace, persistence_dir, saved)


def race_to_reopen(
    llm: LLM, workspace: Path, persistence_dir: Path, saved: str, racers: int
) -> tuple[list[ConversationState], list[ConversationLockedError], list[BaseException]]:
    """Open the state from `racers` threads at once: (opened, refused, failed)."""
    barrier = threading.Barrier(racers)
    opened: list[ConversationState] = []
    refused: list[ConversationLockedError] = []
    failures: list[BaseException] = []

    def race() -> None:
        barrier.wait()
        try:
            opened.append(open_state(llm, workspace, persistence_dir, saved))
        except ConversationLockedError as exc:  # another was mid-open at that very instant
            refused.append(exc)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=race) for _ in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return opened, refused, failures


def test_threads_reopening_an_idle_state_leave_exactly_one_writer(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    for _ in range(10):
        first = open_state(llm, workspace, persistence_dir, saved)
        opened, refused, failures = race_to_reopen(llm, workspace, persistence_dir, saved, 4)
        assert failures == []
        assert len(opened) + len(refused) == 4 and opened
        states = [first, *opened]
        [writer] = [state for state in states if not state.read_only]
        writer.title = "the last opener's"
        for state in states:
            state.close()
        assert find_conversation(persistence_dir, saved).title == "the last opener's"
        assert no_lease_files(persistence_dir)


def test_a_write_racing_a_reopen_lands_before_it_or_is_refused(
    saved: str, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    first = open_state(llm, workspace, persistence_dir, saved)
    stopped: list[int] = []

    def write() -> None:
        count = 0
        try:
            while count < 100_000:
                count += 1
                first.title = f"write {count}"
        except ConversationReadOnlyError:
            stopped.append(count)

    writer = threading.Thread(target=write)
    writer.start()
    time.sleep(0.05)
    second = open_state(llm, workspace, persistence_dir, saved)
    writer.join(30)
    try:
        assert stopped, "the reopen stopped the writer"
        assert second.title is not None and second.title.startswith("write ")
        assert find_conversation(persistence_dir, saved).title == second.title
    finally:
        second.close()
        first.close()
