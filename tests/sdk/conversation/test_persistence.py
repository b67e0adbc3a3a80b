"""Persistence through Conversation: resume, crash recovery, kill -9, and bad input on disk."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    AgentErrorEvent,
    Conversation,
    Event,
    LocalConversation,
    Message,
    MessageEvent,
    MessageToolCall,
    ObservationEvent,
    TextContent,
    Tool,
    WorkspaceError,
)
from ohtui.sdk.conversation import (
    ConversationExecutionStatus,
    ConversationState,
    EventLog,
    PersistenceError,
    find_conversation,
    list_conversations,
)
from ohtui.sdk.conversation.event_store import PAGE_SIZE
from ohtui.sdk.conversation.store import ConversationStore
from ohtui.sdk.tools.terminal import TerminalAction, TerminalObservation
from ohtui.sdk.workspace import LocalWorkspace

Status = ConversationExecutionStatus
USAGE = {"prompt_tokens": 100, "completion_tokens": 7}
PLAN = [
    {"title": "Write out.txt", "notes": "", "status": "done"},
    {"title": "Check it", "notes": "cat it", "status": "in_progress"},
]
needs_non_root = pytest.mark.skipif(
    os.geteuid() == 0, reason="root ignores file permissions, so nothing is unwritable"
)


def tools(*names: str) -> list[Tool]:
    return [Tool(name=name) for name in names]


def user(text: str) -> MessageEvent:
    return MessageEvent(
        source="user", llm_message=Message(role="user", content=[TextContent(text=text)])
    )


def open_conversation(
    llm: LLM,
    workspace: Path,
    persistence_dir: Path,
    tool_names: tuple[str, ...] = ("terminal", "task_tracker"),
    conversation_id: uuid.UUID | None = None,
) -> LocalConversation:
    return Conversation(
        agent=Agent(llm=llm, tools=tools(*tool_names)),
        workspace=workspace,
        persistence_dir=persistence_dir,
        conversation_id=conversation_id,
        visualizer=None,
    )


def other_llm(server: ScriptedLLMServer) -> LLM:
    return LLM(
        model="openai/other-model",
        base_url=server.base_url,
        api_key="sk-other",
        num_retries=0,
        timeout=10,
    )


@dataclass(frozen=True)
class Session:
    """What a finished first session left behind."""

    id: uuid.UUID
    event_json: list[str]
    last_request: list[dict[str, Any]]


@pytest.fixture
def session(
    llm_server: ScriptedLLMServer, llm: LLM, workspace: Path, persistence_dir: Path
) -> Session:
    """A saved conversation: a terminal call, a task plan, finish; then a title and blocks."""
    conv = open_conversation(llm, workspace, persistence_dir)
    llm_server.reply_tool_call("terminal", {"command": "echo hello > out.txt"}, usage=USAGE)
    llm_server.reply_tool_call("task_tracker", {"command": "plan", "task_list": PLAN}, usage=USAGE)
    llm_server.reply_tool_call("finish", {"message": "Wrote out.txt"}, usage=USAGE)
    conv.send_message("Please write out.txt")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert (workspace / "out.txt").read_text() == "hello\n"
    conv.state.title = "Writing out.txt"
    conv.state.block_action("act-9", "blocked by a hook")
    conv.state.block_message("msg-9", "blocked message")
    result = Session(
        conv.id,
        [e.model_dump_json() for e in conv.state.events],
        llm_server.requests[-1]["messages"],
    )
    conv.close()
    return result


# --- resume -------------------------------------------------------------------------------


def test_resume_with_a_new_agent_restores_everything(
    session: Session, llm_server: ScriptedLLMServer, workspace: Path, persistence_dir: Path
) -> None:
    with ScriptedLLMServer() as other:
        conv = open_conversation(
            other_llm(other), workspace, persistence_dir, conversation_id=session.id
        )
        try:
            state = conv.state
            assert state.id == session.id
            assert [e.model_dump_json() for e in state.events] == session.event_json
            assert [type(e).__name__ for e in state.events] == [
                "SystemPromptEvent",
                "MessageEvent",
                "ActionEvent",
                "ObservationEvent",
                "ActionEvent",
                "ObservationEvent",
                "ActionEvent",
                "ObservationEvent",
            ]
            assert state.execution_status is Status.FINISHED
            assert state.title == "Writing out.txt"
            assert state.agent_state == {"task_list": PLAN}
            assert state.blocked_actions == {"act-9": "blocked by a hook"}
            assert state.blocked_messages == {"msg-9": "blocked message"}
            usage = state.stats.get_combined_metrics().accumulated_token_usage
            assert (usage.prompt_tokens, usage.completion_tokens) == (300, 21)
            assert state.agent.llm.model == "openai/other-model"
        finally:
            conv.close()
    assert len(llm_server.requests) == 3


def test_continue_after_resume_sends_the_whole_history(
    session: Session, llm_server: ScriptedLLMServer, workspace: Path, persistence_dir: Path
) -> None:
    with ScriptedLLMServer() as other:
        conv = open_conversation(
            other_llm(other), workspace, persistence_dir, conversation_id=session.id
        )
        try:
            other.reply_tool_call("task_tracker", {"command": "view"}, usage=USAGE)
            other.reply_text("Both tasks are listed.", usage=USAGE)
            conv.send_message("What is left?")
            conv.run()
            assert conv.state.execution_status is Status.FINISHED

            first = other.requests[0]
            assert first["model"] == "other-model"
            messages = first["messages"]
            earlier = session.last_request
            assert messages[: len(earlier)] == earlier
            finish_call, finish_result, new_user = messages[len(earlier) :]
            assert finish_call["tool_calls"][0]["function"]["name"] == "finish"
            assert finish_result["role"] == "tool"
            assert finish_result["tool_call_id"] == finish_call["tool_calls"][0]["id"]
            assert new_user["role"] == "user"
            assert "What is left?" in json.dumps(new_user["content"])
            # The plan saved by the first session is what the resumed tool sees.
            view = [e for e in conv.state.events if isinstance(e, ObservationEvent)][-1]
            assert "1. [done] Write out.txt" in view.observation.text
            assert "2. [in_progress] Check it" in view.observation.text
            usage = conv.state.stats.get_combined_metrics().accumulated_token_usage
            assert (usage.prompt_tokens, usage.completion_tokens) == (500, 35)
            count = len(conv.state.events)
        finally:
            conv.close()
    assert len(llm_server.requests) == 3  # the old endpoint is not used any more

    with ScriptedLLMServer() as third:
        again = open_conversation(
            other_llm(third), workspace, persistence_dir, conversation_id=session.id
        )
        try:
            assert len(again.state.events) == count
            usage = again.state.stats.get_combined_metrics().accumulated_token_usage
            assert usage.prompt_tokens == 500
        finally:
            again.close()


def test_resume_without_a_used_tool_names_it(
    session: Session, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    with pytest.raises(ValueError, match="task_tracker") as info:
        open_conversation(
            llm, workspace, persistence_dir, ("terminal",), conversation_id=session.id
        )
    assert "terminal" not in str(info.value)  # only the missing tool is named
    # The failed attempt changed nothing: the right tools still resume it.
    conv = open_conversation(llm, workspace, persistence_dir, conversation_id=session.id)
    try:
        assert [e.model_dump_json() for e in conv.state.events] == session.event_json
        assert conv.state.agent_state == {"task_list": PLAN}
    finally:
        conv.close()


def test_resume_with_an_added_tool_is_fine(
    session: Session,
    llm_server: ScriptedLLMServer,
    llm: LLM,
    workspace: Path,
    persistence_dir: Path,
) -> None:
    conv = open_conversation(
        llm,
        workspace,
        persistence_dir,
        ("terminal", "task_tracker", "file_editor"),
        conversation_id=session.id,
    )
    try:
        assert len(conv.state.events) == len(session.event_json)
        llm_server.reply_tool_call("file_editor", {"command": "view", "path": str(workspace)})
        llm_server.reply_text("I looked.")
        conv.send_message("Look around")
        conv.run()
        tool_names = [t["function"]["name"] for t in llm_server.requests[-1]["tools"]]
        assert "file_editor" in tool_names
        observation = [e for e in conv.state.events if isinstance(e, ObservationEvent)][-1]
        assert observation.tool_name == "file_editor"
        assert "out.txt" in observation.observation.text
    finally:
        conv.close()


def test_resume_parses_no_event_up_front(
    llm: LLM, workspace: Path, persistence_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conv = open_conversation(llm, workspace, persistence_dir)
    conv.send_message("start")  # records the system prompt and this message
    for i in range(298):
        conv.state.events.append(user(f"note {i}"))
    conversation_id = conv.id
    conv.close()

    parsed: list[str] = []
    original = Event.model_validate_json

    def counting(cls: type[Event], data: Any, *args: Any, **kwargs: Any) -> Event:
        parsed.append("x")
        return original(data, *args, **kwargs)

    monkeypatch.setattr(Event, "model_validate_json", classmethod(counting))
    resumed = open_conversation(llm, workspace, persistence_dir, conversation_id=conversation_id)
    try:
        events = resumed.state.events
        assert len(events) == 300
        assert parsed == []
        assert events.cached == 0
        last = events[-1]
        assert isinstance(last, MessageEvent)
        assert last.llm_message.text == "note 297"
        assert 1 <= len(parsed) <= PAGE_SIZE
        assert not events.in_memory(0)
        assert events.cached == len(parsed)
    finally:
        resumed.close()


# --- a run cut short by a crash ---------------------------------------------------------------


def crash_mid_action(
    llm: LLM, workspace: Path, persistence_dir: Path, runnable: bool = True
) -> uuid.UUID:
    """Leave a conversation RUNNING with an action that never reported back, as a crash would
    (`runnable=False`: a call that could not run, before its error was recorded)."""
    conv = open_conversation(llm, workspace, persistence_dir, ("terminal",))
    conv.send_message("Append to marker.txt")
    command = "echo ran >> marker.txt"
    call = MessageToolCall(
        id="call_crash", name="terminal", arguments=json.dumps({"command": command})
    )
    conv.state.append_event(
        ActionEvent(
            action=TerminalAction(command=command) if runnable else None,
            tool_name="terminal",
            tool_call_id="call_crash",
            tool_call=call,
            llm_response_id="resp-crash",
        )
    )
    conv.state.execution_status = Status.RUNNING
    conv.state.close()  # the process "dies": no close(), only the file handle goes away
    return conv.id


def interruption_errors(events: EventLog) -> list[AgentErrorEvent]:
    return [e for e in events if isinstance(e, AgentErrorEvent) and e.tool_call_id == "call_crash"]


def test_crashed_run_resumes_paused_with_the_action_reported_interrupted(
    llm_server: ScriptedLLMServer, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    cid = crash_mid_action(llm, workspace, persistence_dir)
    [summary] = list_conversations(persistence_dir)
    assert summary.status == "running"

    conv = open_conversation(llm, workspace, persistence_dir, ("terminal",), conversation_id=cid)
    try:
        conv.send_message("What happened?")
        assert conv.state.execution_status is Status.PAUSED
        [error] = interruption_errors(conv.state.events)
        assert "interrupted" in error.error
        assert conv.state.get_unmatched_actions(conv.state.events) == []

        llm_server.reply_text("The command was interrupted; I will check marker.txt.")
        conv.run()
        assert conv.state.execution_status is Status.FINISHED
        assert not (workspace / "marker.txt").exists()  # the interrupted action was not rerun
        tool_messages = [m for m in llm_server.requests[-1]["messages"] if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in tool_messages] == ["call_crash"]
        assert "interrupted" in json.dumps(tool_messages[0]["content"])
    finally:
        conv.close()
    [summary] = list_conversations(persistence_dir)
    assert summary.status == "finished"


def test_a_crash_before_a_bad_calls_error_still_answers_the_call(
    llm_server: ScriptedLLMServer, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    cid = crash_mid_action(llm, workspace, persistence_dir, runnable=False)
    conv = open_conversation(llm, workspace, persistence_dir, ("terminal",), conversation_id=cid)
    try:
        assert len(interruption_errors(conv.state.events)) == 1
        llm_server.reply_text("Noted.")
        conv.run()
        tool_messages = [m for m in llm_server.requests[-1]["messages"] if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in tool_messages] == ["call_crash"]
    finally:
        conv.close()


def test_crashed_run_is_not_running_right_after_reopen(
    llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    cid = crash_mid_action(llm, workspace, persistence_dir)
    conv = open_conversation(llm, workspace, persistence_dir, ("terminal",), conversation_id=cid)
    try:
        assert conv.state.execution_status is Status.PAUSED
        assert len(interruption_errors(conv.state.events)) == 1
    finally:
        conv.close()


def test_pause_after_reopen_does_not_rerun_the_interrupted_action(
    llm_server: ScriptedLLMServer, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    cid = crash_mid_action(llm, workspace, persistence_dir)
    conv = open_conversation(llm, workspace, persistence_dir, ("terminal",), conversation_id=cid)
    try:
        conv.pause()
        llm_server.reply_text("Stopping here.")
        conv.run()
        assert not (workspace / "marker.txt").exists()
        assert len(interruption_errors(conv.state.events)) == 1
    finally:
        conv.close()


# --- kill -9 ----------------------------------------------------------------------------------

KILLED_WRITER = """
import sys, uuid
from ohtui.sdk import LLM, Agent, Message, MessageEvent, TextContent
from ohtui.sdk.conversation import ConversationState
from ohtui.sdk.workspace import LocalWorkspace

conversation_dir, workspace, conversation_id, tag = sys.argv[1:5]
state = ConversationState.create(
    id=uuid.UUID(conversation_id),
    agent=Agent(llm=LLM(model="openai/test-model")),
    workspace=LocalWorkspace(working_dir=workspace),
    persistence_dir=conversation_dir,
)
i = 0
while True:
    text = f"{tag} {i} " + "x" * (i * 131 % 5000)
    event = MessageEvent(
        id=f"{tag}-{i}",
        source="user",
        llm_message=Message(role="user", content=[TextContent(text=text)]),
    )
    state.events.append(event)
    state.agent_state = {"last": event.id}
    print(state.events.get_index(event.id), event.id, flush=True)
    i += 1
"""


def run_until_killed(argv: list[str], stop_after: int, delay: float) -> list[tuple[int, str]]:
    """Read the writer's '<index> <id>' lines; SIGKILL it after `stop_after` (+ delay)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    printed: list[tuple[int, str]] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            index, event_id = line.split()
            printed.append((int(index), event_id))
            if len(printed) == stop_after:
                break
        if delay:
            time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    assert len(printed) == stop_after, proc.stderr.read()
    assert proc.returncode == -signal.SIGKILL
    return printed


def test_kill_9_loses_no_appended_event(
    tmp_path: Path, workspace: Path, persistence_dir: Path
) -> None:
    cid = uuid.uuid4()
    conversation_dir = persistence_dir / cid.hex
    script = tmp_path / "writer.py"
    script.write_text(KILLED_WRITER)
    printed: list[tuple[int, str]] = []
    for round_no, (stop_after, delay) in enumerate([(200, 0.0), (57, 0.003), (131, 0.0008)]):
        tag = f"r{round_no}"
        argv = [sys.executable, str(script), str(conversation_dir), str(workspace), str(cid), tag]
        mine = run_until_killed(argv, stop_after, delay)
        assert [i for i, _ in mine] == list(range(mine[0][0], mine[0][0] + stop_after))
        printed += mine

        state = ConversationState.create(
            id=cid,
            agent=Agent(llm=LLM(model="openai/test-model")),
            workspace=LocalWorkspace(working_dir=str(workspace)),
            persistence_dir=str(conversation_dir),
        )
        try:
            events = state.events
            assert len(events) >= len(printed)
            for index, event_id in printed:
                assert events.get_index(event_id) == index
            everything = list(events)  # every stored event parses
            assert all(isinstance(e, MessageEvent) for e in everything)
            assert [everything[i].id for i, _ in printed] == [e for _, e in printed]
            assert len({e.id for e in everything}) == len(everything)
            assert events.get_index(state.agent_state["last"]) >= printed[-1][0]

            with sqlite3.connect(persistence_dir / "conversations.db") as conn:
                assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
                seqs = [r[0] for r in conn.execute("SELECT seq FROM events ORDER BY seq")]
                assert seqs == list(range(len(everything)))
                [(count,)] = conn.execute("SELECT event_count FROM conversations").fetchall()
                assert count == len(everything)
            conn.close()

            after = user(f"after kill {round_no}")
            events.append(after)
            assert events.get_index(after.id) == len(everything)
            printed.append((len(everything), after.id))
        finally:
            state.close()


# --- another process initialising the same new database -----------------------------------


def test_database_initialised_by_another_opener_meanwhile_is_accepted(
    persistence_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_connect = sqlite3.connect
    interleaved: list[str] = []

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)
        if not interleaved:

            def trace(sql: str) -> None:
                # Just before this opener's check-and-create transaction, another opener
                # wins the race and makes the schema (inside the transaction, it would wait).
                if sql.startswith("BEGIN IMMEDIATE") and not interleaved:
                    interleaved.append(sql)
                    started = time.monotonic()
                    ConversationStore(persistence_dir).close()
                    interleaved.append(f"{time.monotonic() - started:.1f} s")

            conn.set_trace_callback(trace)
        return conn

    monkeypatch.setattr(sqlite3, "connect", connect)
    store = ConversationStore(persistence_dir)
    monkeypatch.undo()
    assert len(interleaved) == 2 and float(interleaved[1].split()[0]) < 5  # it did not wait
    try:
        store.create(uuid.uuid4().hex, "{}", {})
        assert len(store.list_summaries()) == 1
    finally:
        store.close()


FRESH_DB_LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("CREATE TABLE IF NOT EXISTS conversations (key INTEGER)")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
time.sleep(30)
"""


def test_opening_a_new_database_waits_for_a_brief_lock(
    persistence_dir: Path, tmp_path: Path
) -> None:
    persistence_dir.mkdir()
    script = tmp_path / "locker.py"
    script.write_text(FRESH_DB_LOCKER)
    locker = subprocess.Popen(
        [sys.executable, str(script), str(persistence_dir / "conversations.db"), "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert locker.stdout is not None
        assert locker.stdout.readline().strip() == "locked"
        started = time.monotonic()
        store = ConversationStore(persistence_dir)  # the lock goes away after 3 s
        try:
            assert time.monotonic() - started < 20
            store.create(uuid.uuid4().hex, "{}", {})
            assert len(store.list_summaries()) == 1
        finally:
            store.close()
    finally:
        locker.kill()
        locker.wait()


def test_opening_a_whole_database_does_not_wait_for_a_writer(
    persistence_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader (the picker's preview, while the search index is filled) opens the store
    while another connection holds a write transaction, and reads what was committed."""
    store = ConversationStore(persistence_dir)
    conversation_id = uuid.uuid4().hex
    store.create(conversation_id, "{}", {})
    writer = sqlite3.connect(store.path, isolation_level=None)
    store.close()
    monkeypatch.setattr("ohtui.sdk.conversation.store.LOCK_TIMEOUT_SECONDS", 2.0)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE conversations SET title = 'not committed'")
    try:
        started = time.monotonic()
        reader = ConversationStore(persistence_dir)  # waited 2 s, then TimeoutError, before
        try:
            assert time.monotonic() - started < 1.0
            [summary] = reader.list_summaries()
            assert summary.id == conversation_id and summary.title is None
        finally:
            reader.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_opening_makes_a_missing_index(persistence_dir: Path) -> None:
    """Only a whole schema is opened without a write: an index an older version did not make
    is made on open."""
    ConversationStore(persistence_dir).close()
    db = persistence_dir / "conversations.db"
    with sqlite3.connect(db) as conn:
        conn.execute("DROP INDEX conversations_by_workspace")
    conn.close()
    ConversationStore(persistence_dir).close()
    with sqlite3.connect(db) as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert "conversations_by_workspace" in names


# --- bad input ------------------------------------------------------------------------------


def test_workspace_that_is_a_file(llm: LLM, tmp_path: Path, persistence_dir: Path) -> None:
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    with pytest.raises(WorkspaceError, match=str(path)) as info:
        open_conversation(llm, path, persistence_dir)
    assert "is a file" in str(info.value)
    assert not persistence_dir.exists()
    assert path.read_text() == "x"


def test_workspace_inside_a_file(llm: LLM, tmp_path: Path, persistence_dir: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(WorkspaceError, match=str(blocker / "ws")):
        open_conversation(llm, blocker / "ws", persistence_dir)


@needs_non_root
def test_workspace_under_an_unwritable_parent(
    llm: LLM, tmp_path: Path, persistence_dir: Path
) -> None:
    parent = tmp_path / "locked"
    parent.mkdir()
    parent.chmod(0o500)
    try:
        with pytest.raises(WorkspaceError, match=str(parent / "ws")):
            open_conversation(llm, parent / "ws", persistence_dir)
    finally:
        parent.chmod(0o700)


@needs_non_root
def test_persistence_dir_under_an_unwritable_parent(
    llm: LLM, tmp_path: Path, workspace: Path
) -> None:
    parent = tmp_path / "locked"
    parent.mkdir()
    parent.chmod(0o500)
    try:
        with pytest.raises(PersistenceError, match=str(parent / "conversations")):
            open_conversation(llm, workspace, parent / "conversations")
    finally:
        parent.chmod(0o700)


@needs_non_root
def test_unwritable_persistence_dir(llm: LLM, workspace: Path, persistence_dir: Path) -> None:
    persistence_dir.mkdir()
    persistence_dir.chmod(0o500)
    try:
        with pytest.raises(PersistenceError, match=str(persistence_dir)):
            open_conversation(llm, workspace, persistence_dir)
    finally:
        persistence_dir.chmod(0o700)


def test_persistence_dir_that_is_a_file(llm: LLM, tmp_path: Path, workspace: Path) -> None:
    path = tmp_path / "conversations"
    path.write_text("not a directory")
    with pytest.raises(PersistenceError, match=str(path)):
        open_conversation(llm, workspace, path)
    assert path.read_text() == "not a directory"


def test_persistence_dir_inside_a_file(llm: LLM, tmp_path: Path, workspace: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(PersistenceError, match=str(blocker)):
        open_conversation(llm, workspace, blocker / "conversations")


@pytest.fixture
def db_path(persistence_dir: Path) -> Path:
    persistence_dir.mkdir()
    return persistence_dir / "conversations.db"


def assert_refused_untouched(
    llm: LLM, workspace: Path, persistence_dir: Path, db: Path, message: str
) -> None:
    """Opening the directory in every way fails with `message`; no file changes."""
    before = {p.name: p.read_bytes() for p in persistence_dir.iterdir()}
    with pytest.raises(PersistenceError, match=message) as info:
        open_conversation(llm, workspace, persistence_dir)
    assert str(db) in str(info.value)
    with pytest.raises(PersistenceError, match=message):
        list_conversations(persistence_dir)
    with pytest.raises(PersistenceError, match=message):
        find_conversation(persistence_dir, "ab")
    after = {p.name: p.read_bytes() for p in persistence_dir.iterdir()}
    assert after == before


@pytest.mark.parametrize(
    "garbage",
    [
        os.urandom(8192),
        b"hello, this is a text file and not a database\n" * 3,
        b"SQLite format 3\x00" + b"\xff" * 200,
    ],
    ids=["random", "text", "bad-header"],
)
def test_garbage_database_is_refused_and_left_alone(
    llm: LLM, workspace: Path, persistence_dir: Path, db_path: Path, garbage: bytes
) -> None:
    db_path.write_bytes(garbage)
    assert_refused_untouched(llm, workspace, persistence_dir, db_path, "not an ohtui")


def test_foreign_sqlite_database_is_refused_and_left_alone(
    llm: LLM, workspace: Path, persistence_dir: Path, db_path: Path
) -> None:
    with sqlite3.connect(db_path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
        conn.execute("INSERT INTO invoices (amount) VALUES (12.5)")
    conn.close()
    assert_refused_untouched(llm, workspace, persistence_dir, db_path, "another program")
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT amount FROM invoices").fetchall() == [(12.5,)]
    conn.close()


def test_database_from_a_newer_version_is_refused(
    llm: LLM, workspace: Path, persistence_dir: Path, db_path: Path
) -> None:
    ConversationStore(persistence_dir).close()
    with sqlite3.connect(db_path) as conn:
        conn.execute("PRAGMA user_version = 99")
    conn.close()
    assert_refused_untouched(llm, workspace, persistence_dir, db_path, "newer")


def test_empty_database_file_is_initialised(
    llm: LLM, workspace: Path, persistence_dir: Path, db_path: Path
) -> None:
    db_path.write_bytes(b"")
    conv = open_conversation(llm, workspace, persistence_dir)
    try:
        conv.state.events.append(user("hello"))
    finally:
        conv.close()
    [summary] = list_conversations(persistence_dir)
    assert summary.first_user_message == "hello"


@pytest.mark.parametrize("damage", ["truncated", "garbage-tail"])
def test_damaged_wal_keeps_every_whole_transaction(
    persistence_dir: Path, tmp_path: Path, damage: str
) -> None:
    store = ConversationStore(persistence_dir)
    key = store.create(uuid.uuid4().hex, "{}", {})
    log = EventLog(store, key)
    for i in range(40):
        log.append(user(f"m{i} " + "y" * 300))
    wal = persistence_dir / "conversations.db-wal"
    data = wal.read_bytes()
    assert len(data) > 10_000  # the events are still in the WAL, not checkpointed
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copyfile(store.path, copy / "conversations.db")
    store.close()
    if damage == "truncated":
        (copy / "conversations.db-wal").write_bytes(data[: len(data) - 1500])
    else:
        (copy / "conversations.db-wal").write_bytes(data + os.urandom(5000))

    reopened = ConversationStore(copy)
    try:
        events = EventLog(reopened, key)
        kept = len(events)
        assert (kept < 40) if damage == "truncated" else (kept == 40)
        assert kept >= 30
        texts = [e.llm_message.text.split()[0] for e in events if isinstance(e, MessageEvent)]
        assert texts == [f"m{i}" for i in range(kept)]
        with sqlite3.connect(copy / "conversations.db") as conn:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            rows = conn.execute("SELECT count(*) FROM events").fetchall()
            assert rows == [(kept,)]
        conn.close()
        more = user("after the damage")
        events.append(more)
        assert events.get_index(more.id) == kept
    finally:
        reopened.close()


def test_huge_and_binary_command_output(
    llm_server: ScriptedLLMServer, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    conv = open_conversation(llm, workspace, persistence_dir, ("terminal",))
    try:
        llm_server.reply_tool_call("terminal", {"command": "seq 1 300000"})
        llm_server.reply_tool_call("terminal", {"command": "head -c 5000 /dev/urandom"})
        llm_server.reply_tool_call("finish", {"message": "Printed a lot."})
        conv.send_message("Print a lot")
        conv.run()
        assert conv.state.execution_status is Status.FINISHED
        observations = [
            e.observation
            for e in conv.state.events
            if isinstance(e, ObservationEvent) and e.tool_name == "terminal"
        ]
        big, binary = observations
        assert isinstance(big, TerminalObservation)
        assert isinstance(binary, TerminalObservation)
        obs_dir = conv.state.env_observation_persistence_dir
        assert obs_dir is not None

        assert big.truncated
        assert len(big.text) < 40_000
        assert big.text.startswith("1\n2\n3\n")
        assert "\n300000\n" in big.text
        assert big.full_output_path is not None
        assert Path(big.full_output_path).parent == Path(obs_dir)
        expected = "".join(f"{i}\n" for i in range(1, 300_001)).encode()
        assert Path(big.full_output_path).read_bytes() == expected

        assert "binary output" in binary.text
        assert "\ufffd" not in binary.text
        assert len(binary.text) < 1000
        assert binary.full_output_path is not None
        assert binary.full_output_path.endswith(".bin")
        assert Path(binary.full_output_path).stat().st_size == 5000

        # What the model got next was the cut output, not 300,000 lines.
        after_seq = llm_server.requests[1]["messages"]
        assert len(json.dumps(after_seq)) < 100_000
        assert "300000" in json.dumps(after_seq[-1])
        saved = [e.model_dump_json() for e in conv.state.events]
        cid = conv.id
    finally:
        conv.close()

    assert all(len(s) < 100_000 for s in saved)
    again = open_conversation(llm, workspace, persistence_dir, ("terminal",), conversation_id=cid)
    try:
        assert [e.model_dump_json() for e in again.state.events] == saved
    finally:
        again.close()


def test_a_fresh_process_reads_built_in_tool_observations_before_any_tool_exists(
    tmp_path: Path,
) -> None:
    """A resumed conversation's events name tool observation classes; reading them must not
    depend on the tool having been created first in this process."""
    setup = textwrap.dedent(
        f"""
        from ohtui.sdk import LLM, Agent, Conversation, ObservationEvent, Tool
        from ohtui.sdk.tools.terminal import TerminalAction
        conv = Conversation(agent=Agent(llm=LLM(model="openai/x"), tools=[Tool(name="terminal")]),
                            workspace="{tmp_path}/ws", persistence_dir="{tmp_path}/c",
                            visualizer=None)
        obs = conv.execute_tool("terminal", TerminalAction(command="echo hi"))
        conv.state.events.append(ObservationEvent(observation=obs, action_id="a",
                                                  tool_name="terminal", tool_call_id="t"))
        print(conv.id.hex)
        conv.close()
        """
    )
    cid = subprocess.run(
        [sys.executable, "-c", setup], capture_output=True, text=True, check=True
    ).stdout.strip()
    reader = textwrap.dedent(
        f"""
        import uuid
        from ohtui.sdk import LLM, Agent, Conversation, Tool
        conv = Conversation(agent=Agent(llm=LLM(model="openai/x"), tools=[Tool(name="terminal")]),
                            workspace="{tmp_path}/ws", persistence_dir="{tmp_path}/c",
                            conversation_id=uuid.UUID("{cid}"), visualizer=None)
        observation = conv.state.events[-1].observation
        print(type(observation).__name__, observation.exit_code)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", reader], check=False, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["TerminalObservation", "0"]


# --- text that cannot be encoded ------------------------------------------------------------


def test_what_holds_a_lone_surrogate_is_saved_with_the_replacement_character(
    llm_server: ScriptedLLMServer, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    """A title, a user message (a client's "\\ud800"), a hook's reason, a tool's saved data,
    a title made by the model: each is saved, listed and resumed, never refused."""
    conv = open_conversation(llm, workspace, persistence_dir)
    llm_server.reply_text("Answered.", usage=USAGE)
    conv.send_message("hello \ud800 there")
    conv.run()
    conv.set_title("Title \udcff")
    conv.state.block_message("m-1", "reason \ud800")
    conv.state.agent_state = {"notes\ud800": ["\udfff"]}
    assert conv.state.title == "Title \ufffd"
    [listed] = list_conversations(persistence_dir)
    assert listed.title == "Title \ufffd"
    llm_server.reply_text("Title \ud800 made by the model")
    conv.set_title(conv.generate_title())
    assert conv.state.title == "Title \ufffd made by the model"
    conv_id = conv.id
    conv.close()

    again = open_conversation(llm, workspace, persistence_dir, conversation_id=conv_id)
    try:
        state = again.state
        assert state.title == "Title \ufffd made by the model"
        assert state.blocked_messages == {"m-1": "reason \ufffd"}
        assert state.agent_state == {"notes\ufffd": ["\ufffd"]}
        said = [e for e in state.events if isinstance(e, MessageEvent) and e.source == "user"]
        assert said[0].llm_message.text == "hello \ufffd there"
    finally:
        again.close()
