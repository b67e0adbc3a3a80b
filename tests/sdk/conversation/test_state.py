"""Tests for ConversationState: creation, resume, autosave, change events, lock, derived views."""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    AgentErrorEvent,
    ConversationStateUpdateEvent,
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
from ohtui.sdk.conversation import (
    BaseConversation,
    ConversationExecutionStatus,
    ConversationState,
    list_conversations,
)
from ohtui.sdk.conversation.store import ConversationStore
from ohtui.sdk.llm.metrics import Metrics
from ohtui.sdk.tool.builtins.think import ThinkAction
from ohtui.sdk.workspace import LocalWorkspace

Status = ConversationExecutionStatus


@pytest.fixture
def opened() -> Iterator[list[ConversationState]]:
    """Every state a test creates, closed at the end."""
    states: list[ConversationState] = []
    yield states
    for state in states:
        state.close()


@pytest.fixture
def make_state(
    llm: LLM, workspace: Path, persistence_dir: Path, opened: list[ConversationState]
) -> Callable[..., ConversationState]:
    """Create (or resume) a persisted state; each call uses a fresh Agent. Resuming closes
    the earlier state of the same conversation first: one open at a time may hold it."""

    def make(
        conversation_id: uuid.UUID | None = None,
        *,
        persisted: bool = True,
        agent: Agent | None = None,
        **kwargs: Any,
    ) -> ConversationState:
        cid = conversation_id or uuid.uuid4()
        for earlier in opened:
            if earlier.id == cid:
                earlier.close()
        state = ConversationState.create(
            id=cid,
            agent=agent or Agent(llm=llm),
            workspace=LocalWorkspace(working_dir=str(workspace)),
            persistence_dir=str(persistence_dir / cid.hex) if persisted else None,
            **kwargs,
        )
        opened.append(state)
        return state

    return make


def user(text: str) -> MessageEvent:
    return MessageEvent(
        source="user", llm_message=Message(role="user", content=[TextContent(text=text)])
    )


def agent_message(text: str) -> MessageEvent:
    return MessageEvent(
        source="agent", llm_message=Message(role="assistant", content=[TextContent(text=text)])
    )


def action(call_id: str, response_id: str, runnable: bool = True) -> ActionEvent:
    call = MessageToolCall(id=call_id, name="think", arguments='{"thought": "x"}')
    return ActionEvent(
        action=ThinkAction(thought="x") if runnable else None,
        tool_name="think",
        tool_call_id=call_id,
        tool_call=call,
        llm_response_id=response_id,
    )


def observation(act: ActionEvent) -> ObservationEvent:
    return ObservationEvent(
        observation=Observation.from_text("done"),
        action_id=act.id,
        tool_name=act.tool_name,
        tool_call_id=act.tool_call_id,
    )


def rejection(act: ActionEvent) -> UserRejectObservation:
    return UserRejectObservation(
        action_id=act.id, tool_name=act.tool_name, tool_call_id=act.tool_call_id
    )


def agent_error(act: ActionEvent) -> AgentErrorEvent:
    return AgentErrorEvent(error="bad", tool_name=act.tool_name, tool_call_id=act.tool_call_id)


def saved_state(persistence_dir: Path, cid: uuid.UUID) -> dict[str, Any]:
    """The state JSON as stored, read through a separate connection."""
    store = ConversationStore(persistence_dir)
    try:
        stored = store.load(cid.hex)
        assert stored is not None
        return json.loads(stored.state_json)
    finally:
        store.close()


# --- creation -------------------------------------------------------------------------------


def test_create_new_persisted_state(
    make_state: Callable[..., ConversationState], workspace: Path, persistence_dir: Path
) -> None:
    cid = uuid.uuid4()
    state = make_state(cid, max_iterations=42, stuck_detection=False)
    assert state.id == cid
    assert state.execution_status is Status.IDLE
    assert state.workspace.working_dir == str(workspace)
    assert state.persistence_dir == str(persistence_dir / cid.hex)
    assert state.max_iterations == 42
    assert state.stuck_detection is False
    assert state.title is None
    assert state.agent_state == {}
    assert state.blocked_actions == {}
    assert state.blocked_messages == {}
    assert state.stats.usage_to_metrics == {}
    assert len(state.events) == 0
    assert (persistence_dir / "conversations.db").is_file()
    assert (persistence_dir / cid.hex).is_dir()  # the conversation's own directory is made
    saved = saved_state(persistence_dir, cid)
    assert saved["id"] == str(cid)
    assert saved["execution_status"] == "idle"
    assert saved["max_iterations"] == 42


def test_create_without_persistence(
    make_state: Callable[..., ConversationState], persistence_dir: Path, caplog
) -> None:
    with caplog.at_level(logging.WARNING):
        state = make_state(persisted=False)
    [warning] = [r.getMessage() for r in caplog.records if "persistence_dir" in r.getMessage()]
    assert "in memory only" in warning  # a script author learns nothing will be saved
    assert state.persistence_dir is None
    assert state.env_observation_persistence_dir is None
    changes: list[Event] = []
    state.set_on_state_change(changes.append)
    state.title = "in memory"
    state.events.append(user("hi"))
    assert [getattr(c, "key", None) for c in changes] == ["title"]
    assert len(state.events) == 1
    assert not persistence_dir.exists()


def test_env_observation_dir_is_inside_the_conversation_dir(
    make_state: Callable[..., ConversationState], persistence_dir: Path
) -> None:
    cid = uuid.uuid4()
    state = make_state(cid)
    conversation_dir = Path(BaseConversation.get_persistence_dir(persistence_dir, cid))
    assert conversation_dir == persistence_dir.resolve() / cid.hex
    obs_dir = state.env_observation_persistence_dir
    assert obs_dir is not None
    assert Path(obs_dir).parent == persistence_dir / cid.hex


# --- autosave and change notification ------------------------------------------------------


def test_assigning_a_field_saves_it(
    make_state: Callable[..., ConversationState], persistence_dir: Path
) -> None:
    cid = uuid.uuid4()
    state = make_state(cid)
    state.title = "Fix the parser"
    state.execution_status = Status.PAUSED
    saved = saved_state(persistence_dir, cid)
    assert saved["title"] == "Fix the parser"
    assert saved["execution_status"] == "paused"
    [summary] = list_conversations(persistence_dir)
    assert summary.title == "Fix the parser"
    assert summary.status == "paused"
    resumed = make_state(cid)
    assert resumed.title == "Fix the parser"
    assert resumed.execution_status is Status.PAUSED


def test_state_update_events_only_on_change(
    make_state: Callable[..., ConversationState],
) -> None:
    state = make_state()
    changes: list[Event] = []
    state.set_on_state_change(changes.append)

    state.title = "one"
    state.title = "one"  # unchanged: no event
    state.execution_status = Status.RUNNING
    state.execution_status = Status.RUNNING
    state.agent_state = {}  # equal to the current value
    state.agent_state = {"k": [1, 2]}
    assert all(isinstance(c, ConversationStateUpdateEvent) for c in changes)
    updates = [(c.key, c.value) for c in changes if isinstance(c, ConversationStateUpdateEvent)]
    assert updates == [
        ("title", "one"),
        ("execution_status", Status.RUNNING),
        ("agent_state", {"k": [1, 2]}),
    ]

    state.set_on_state_change(None)
    state.title = "two"
    assert len(changes) == 3
    assert state.title == "two"


def test_a_failing_state_listener_neither_undoes_nor_fails_the_change(
    make_state: Callable[..., ConversationState],
    persistence_dir: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cid = uuid.uuid4()
    state = make_state(cid)

    def broken(event: Event) -> None:
        raise ValueError("listener bug")

    state.set_on_state_change(broken)
    state.title = "kept"
    assert state.title == "kept"
    assert saved_state(persistence_dir, cid)["title"] == "kept"
    assert "listener bug" in caplog.text


def test_unchanged_assignment_still_leaves_the_saved_value(
    make_state: Callable[..., ConversationState], persistence_dir: Path
) -> None:
    cid = uuid.uuid4()
    state = make_state(cid)
    state.title = "same"
    state.title = "same"
    assert saved_state(persistence_dir, cid)["title"] == "same"


def test_notify_stats_changed_announces_and_saves_with_the_next_event(
    make_state: Callable[..., ConversationState], persistence_dir: Path
) -> None:
    cid = uuid.uuid4()
    state = make_state(cid)
    changes: list[Event] = []
    state.set_on_state_change(changes.append)
    metrics = Metrics(model_name="openai/test-model")
    metrics.add_token_usage(prompt_tokens=120, completion_tokens=8)
    state.stats.usage_to_metrics["default"] = metrics  # in place: no event, no save yet
    assert changes == []
    assert saved_state(persistence_dir, cid)["stats"]["usage_to_metrics"] == {}

    state.notify_stats_changed()
    [change] = changes
    assert isinstance(change, ConversationStateUpdateEvent)
    assert change.key == "stats"
    usage = change.value["usage_to_metrics"]["default"]["accumulated_token_usage"]
    assert usage["prompt_tokens"] == 120
    # The save rides along with the next event, in the same transaction.
    assert saved_state(persistence_dir, cid)["stats"]["usage_to_metrics"] == {}
    state.events.append(PauseEvent())
    saved = saved_state(persistence_dir, cid)["stats"]["usage_to_metrics"]["default"]
    assert saved["accumulated_token_usage"]["completion_tokens"] == 8
    state.close()
    resumed = make_state(cid)
    restored = resumed.stats.get_metrics_for_usage("default")
    assert restored.accumulated_token_usage.prompt_tokens == 120


def test_stats_pending_at_close_are_saved(
    make_state: Callable[..., ConversationState], persistence_dir: Path
) -> None:
    cid = uuid.uuid4()
    state = make_state(cid)
    metrics = Metrics(model_name="openai/test-model")
    metrics.add_cost(0.25)
    state.stats.usage_to_metrics["default"] = metrics
    state.notify_stats_changed()
    state.close()
    saved = saved_state(persistence_dir, cid)["stats"]["usage_to_metrics"]["default"]
    assert saved["accumulated_cost"] == 0.25


def test_agent_state_is_persisted(make_state: Callable[..., ConversationState]) -> None:
    cid = uuid.uuid4()
    state = make_state(cid)
    plan = {"task_list": [{"title": "Read", "notes": "", "status": "done"}], "n": 3}
    state.agent_state = plan
    assert make_state(cid).agent_state == plan


def test_resume_keeps_events_and_uses_the_new_agent(
    make_state: Callable[..., ConversationState], llm: LLM, persistence_dir: Path
) -> None:
    cid = uuid.uuid4()
    state = make_state(cid)
    events = [user("one"), agent_message("two"), user("three")]
    for event in events:
        state.events.append(event)
    other = Agent(llm=llm.model_copy(update={"model": "openai/another-model"}))
    resumed = make_state(cid, agent=other, max_iterations=7)
    assert resumed.agent is other
    assert resumed.max_iterations == 7
    assert [e.id for e in resumed.events] == [e.id for e in events]
    [summary] = list_conversations(persistence_dir)
    assert summary.model == "openai/another-model"
    assert summary.event_count == 3
    assert summary.first_user_message == "one"


def test_resume_keeps_the_saved_stuck_detection_and_status(
    make_state: Callable[..., ConversationState],
) -> None:
    cid = uuid.uuid4()
    state = make_state(cid, stuck_detection=False)
    state.execution_status = Status.PAUSED
    resumed = make_state(cid, stuck_detection=True)
    assert resumed.stuck_detection is False
    assert resumed.execution_status is Status.PAUSED


def test_a_directory_made_for_another_conversation_is_refused(
    make_state: Callable[..., ConversationState], llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    owner = uuid.uuid4()
    make_state(owner).close()
    stranger = uuid.uuid4()
    with pytest.raises(ValueError, match="Conversation ID mismatch") as info:
        ConversationState.create(
            id=stranger,
            agent=Agent(llm=llm),
            workspace=LocalWorkspace(working_dir=str(workspace)),
            persistence_dir=str(persistence_dir / owner.hex),
        )
    assert owner.hex in str(info.value)
    assert stranger.hex in str(info.value)
    assert [s.id for s in list_conversations(persistence_dir)] == [owner.hex]


# --- the lock ------------------------------------------------------------------------------


def in_thread(fn: Callable[[], Any]) -> Any:
    """Run fn in another thread and return its result (or raise its exception)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive()
    if "error" in box:
        raise box["error"]
    return box["result"]


def test_lock_acquire_release_locked_owned(make_state: Callable[..., ConversationState]) -> None:
    state = make_state(persisted=False)
    assert not state.locked()
    assert not state.owned()
    assert state.acquire() is True
    assert state.locked()
    assert state.owned()
    assert in_thread(state.owned) is False
    assert in_thread(state.locked) is True
    state.release()
    assert not state.locked()
    assert not state.owned()


def test_lock_is_reentrant(make_state: Callable[..., ConversationState]) -> None:
    state = make_state(persisted=False)
    assert state.acquire()
    assert state.acquire()
    state.release()
    assert state.locked()
    assert state.owned()
    state.release()
    assert not state.locked()
    with pytest.raises(RuntimeError):
        state.release()


def test_release_from_a_thread_that_does_not_own_it(
    make_state: Callable[..., ConversationState],
) -> None:
    state = make_state(persisted=False)
    with pytest.raises(RuntimeError):
        state.release()  # nobody holds it
    state.acquire()
    try:
        with pytest.raises(RuntimeError):
            in_thread(state.release)
        assert state.locked()
        assert state.owned()
    finally:
        state.release()


def test_other_threads_cannot_take_a_held_lock(
    make_state: Callable[..., ConversationState],
) -> None:
    state = make_state(persisted=False)
    with state:
        assert in_thread(lambda: state.acquire(blocking=False)) is False
        started = time.monotonic()
        assert in_thread(lambda: state.acquire(timeout=0.2)) is False
        assert time.monotonic() - started >= 0.15
    assert not state.locked()

    def take_and_give_back() -> bool:
        got = state.acquire(blocking=False)
        if got:
            state.release()
        return got

    assert in_thread(take_and_give_back) is True


def test_blocked_acquire_succeeds_once_released(
    make_state: Callable[..., ConversationState],
) -> None:
    state = make_state(persisted=False)
    state.acquire()
    result: list[bool] = []

    def waiter() -> None:
        got = state.acquire(timeout=5)
        result.append(got)
        if got:
            state.release()

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.05)
    assert result == []
    state.release()
    thread.join(timeout=5)
    assert result == [True]


def test_with_statement_releases_on_error(make_state: Callable[..., ConversationState]) -> None:
    state = make_state(persisted=False)
    with pytest.raises(KeyError), state as entered:
        assert entered is state
        assert state.owned()
        raise KeyError("boom")
    assert not state.locked()


# --- unmatched actions ---------------------------------------------------------------------


def test_no_actions_means_nothing_unmatched() -> None:
    events = [SystemPromptEvent(system_prompt=TextContent(text="s")), user("hi")]
    assert ConversationState.get_unmatched_actions(events) == []
    assert ConversationState.get_unmatched_actions([]) == []


def test_pending_actions_of_the_latest_batch() -> None:
    a1, a2, a3, a4 = (action(f"c{i}", "resp-2") for i in range(1, 5))
    events: list[Event] = [user("go"), a1, a2, a3, a4, observation(a1), rejection(a3)]
    assert ConversationState.get_unmatched_actions(events) == [a2, a4]
    events.append(agent_error(a4))
    assert ConversationState.get_unmatched_actions(events) == [a2]
    events.append(observation(a2))
    assert ConversationState.get_unmatched_actions(events) == []


def test_a_call_that_cannot_run_is_never_pending() -> None:
    # A call naming no tool, or with bad arguments, is answered by an error, never run.
    good, bad = action("c1", "resp-1"), action("c2", "resp-1", runnable=False)
    events: list[Event] = [user("go"), good, bad]
    assert ConversationState.get_unmatched_actions(events) == [good]


def test_a_user_message_does_not_hide_pending_actions() -> None:
    a1 = action("c1", "resp-1")
    events = [user("go"), a1, user("hurry up")]
    assert ConversationState.get_unmatched_actions(events) == [a1]


def test_older_batches_are_ignored() -> None:
    old = action("old", "resp-1")
    new1, new2 = action("n1", "resp-2"), action("n2", "resp-2")
    events: list[Event] = [user("go"), old, new1, new2, observation(new1)]
    assert ConversationState.get_unmatched_actions(events) == [new2]
    events.append(observation(new2))
    assert ConversationState.get_unmatched_actions(events) == []  # `old` is not pending


def test_an_agent_message_ends_the_search() -> None:
    a1 = action("c1", "resp-1")
    events = [user("go"), a1, agent_message("I gave up on that")]
    assert ConversationState.get_unmatched_actions(events) == []


def test_unmatched_actions_on_a_reopened_log(
    make_state: Callable[..., ConversationState],
) -> None:
    cid = uuid.uuid4()
    state = make_state(cid)
    a1, a2 = action("c1", "r"), action("c2", "r")
    for event in (user("go"), a1, a2, observation(a1)):
        state.events.append(event)
    resumed = make_state(cid)
    assert [a.id for a in resumed.get_unmatched_actions(resumed.events)] == [a2.id]


# --- blocked actions and messages ----------------------------------------------------------


def test_blocked_actions_and_messages_survive_reopen(
    make_state: Callable[..., ConversationState],
) -> None:
    cid = uuid.uuid4()
    state = make_state(cid)
    changes: list[Event] = []
    state.set_on_state_change(changes.append)
    state.block_action("act-1", "rm -rf is not allowed")
    state.block_action("act-2", "network is off")
    state.block_message("msg-1", "contains a secret")
    assert [getattr(c, "key", None) for c in changes] == [
        "blocked_actions",
        "blocked_actions",
        "blocked_messages",
    ]

    state = make_state(cid)
    assert state.blocked_actions == {
        "act-1": "rm -rf is not allowed",
        "act-2": "network is off",
    }
    assert state.blocked_messages == {"msg-1": "contains a secret"}
    assert state.pop_blocked_action("act-1") == "rm -rf is not allowed"
    assert state.pop_blocked_action("act-1") is None
    assert state.pop_blocked_action("unknown") is None
    assert state.pop_blocked_message("nope") is None

    state = make_state(cid)
    assert state.blocked_actions == {"act-2": "network is off"}
    assert state.pop_blocked_message("msg-1") == "contains a secret"

    state = make_state(cid)
    assert state.blocked_messages == {}
    assert state.blocked_actions == {"act-2": "network is off"}
