"""The conversation tree in a LocalConversation: parents stamped, HEAD moved, navigate_to,
sibling branches, and what the agent sends the model afterwards.

Real runs: the agent talks to the scripted LLM server over HTTP, the store is SQLite, the
terminal tool runs a real bash. What the model received is read from the server.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest
from llm_server import Reply, ScriptedLLMServer, ToolCall
from pydantic import ValidationError
from tree_support import (
    Factory,
    RunThread,
    assert_is_tree,
    ids,
    open_conversation,
    sent,
    texts,
    walk_to_root,
)

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    AlwaysConfirm,
    ConversationExecutionStatus,
    Message,
    MessageEvent,
    ObservationEvent,
    SystemPromptEvent,
    TextContent,
)
from ohtui.sdk.context import LLMSummarizingCondenser
from ohtui.sdk.context.condenser.summary_prompt import SUMMARY_INSTRUCTIONS
from ohtui.sdk.event.condenser import Condensation
from ohtui.sdk.event.types import ROOT_PARENT_ID

__all__ = ["open_conversation"]  # the fixture, used by name

Status = ConversationExecutionStatus


def user(text: str, parent_id: str | None = None) -> MessageEvent:
    return MessageEvent(
        source="user",
        llm_message=Message(role="user", content=[TextContent(text=text)]),
        parent_id=parent_id,
    )


def user_message(events: list, text: str) -> MessageEvent:
    return next(
        e
        for e in events
        if isinstance(e, MessageEvent) and e.source == "user" and e.llm_message.text == text
    )


def agent_message(events: list, text: str) -> MessageEvent:
    return next(
        e
        for e in events
        if isinstance(e, MessageEvent) and e.source == "agent" and e.llm_message.text == text
    )


def two_turns(conv, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("answer one")
    conv.send_message("question one")
    conv.run()
    llm_server.reply_text("answer two")
    conv.send_message("question two")
    conv.run()


# --- stamping and HEAD --------------------------------------------------------------------


def test_each_event_names_the_one_before_it_and_becomes_head(
    open_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = open_conversation()
    llm_server.reply_tool_call("terminal", {"command": "echo hi"})
    llm_server.reply_text("done")
    conv.send_message("run echo")
    conv.run()
    events = list(conv.state.events)
    kinds = [type(e) for e in events]
    assert kinds[:3] == [SystemPromptEvent, MessageEvent, ActionEvent]
    assert ObservationEvent in kinds
    assert events[0].parent_id is None  # the first root
    for before, event in itertools.pairwise(events):
        assert event.parent_id == before.id
    assert conv.state.leaf_event_id == events[-1].id
    assert conv.state.head_is_empty is False
    assert ids(conv.state.active_branch()) == ids(events)


# --- navigate_to ---------------------------------------------------------------------------


def test_navigate_back_then_a_message_makes_a_sibling_branch_the_model_alone_sees(
    open_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = open_conversation()
    two_turns(conv, llm_server)
    events = list(conv.state.events)
    answer_one = agent_message(events, "answer one")
    abandoned = events[events.index(answer_one) + 1 :]
    assert [e.llm_message.text for e in abandoned] == ["question two", "answer two"]

    conv.navigate_to(answer_one.id)
    assert conv.state.leaf_event_id == answer_one.id
    assert ids(conv.state.active_branch()) == ids(events[: events.index(answer_one) + 1])

    llm_server.reply_text("answer three")
    conv.send_message("question three")
    conv.run()

    request = llm_server.requests[-1]
    assert texts(request)[1:] == ["question one", "answer one", "question three"]
    assert "question two" not in sent(request) and "answer two" not in sent(request)
    three = user_message(list(conv.state.events), "question three")
    assert three.parent_id == answer_one.id  # a sibling of "question two"
    assert abandoned[0].parent_id == answer_one.id
    log = list(conv.state.events)
    assert all(e.id in conv.state.events for e in abandoned)  # the log keeps every branch
    branch = ids(conv.state.active_branch())
    assert not set(ids(abandoned)) & set(branch)
    assert branch == walk_to_root(log, conv.state.leaf_event_id)
    assert ids(conv.state.view.events) == branch  # what the model sees: this branch
    assert_is_tree(log)


def test_navigate_to_none_empties_head_and_the_next_message_is_a_new_root(
    open_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = open_conversation()
    two_turns(conv, llm_server)
    before = len(conv.state.events)
    conv.navigate_to(None)
    assert conv.state.leaf_event_id is None and conv.state.head_is_empty
    assert list(conv.state.active_branch()) == []
    assert conv.state.view.events == []

    llm_server.reply_text("fresh answer")
    conv.send_message("fresh start")
    conv.run()
    fresh = user_message(list(conv.state.events), "fresh start")
    assert fresh.parent_id == ROOT_PARENT_ID
    request = llm_server.requests[-1]
    assert request["messages"][0]["role"] == "system"  # the agent's prompt still goes first
    assert texts(request)[1:] == ["fresh start"]
    assert len(conv.state.events) == before + 2
    assert ids(conv.state.active_branch()) == [fresh.id, conv.state.leaf_event_id]


def test_navigate_to_an_unknown_event_is_refused_and_nothing_moves(
    open_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = open_conversation()
    two_turns(conv, llm_server)
    leaf, count = conv.state.leaf_event_id, len(conv.state.events)
    for bad in ("nope", ROOT_PARENT_ID, ""):
        with pytest.raises(ValueError, match=f"Unknown event_id: {bad}"):
            conv.navigate_to(bad)
    assert conv.state.leaf_event_id == leaf and len(conv.state.events) == count


def test_the_model_never_sees_an_abandoned_condensation(
    open_conversation: Factory, llm: LLM, llm_server: ScriptedLLMServer
) -> None:
    def reply(body: dict) -> Reply:
        first = texts(body)[0]
        if len(body["messages"]) == 1 and first.startswith(SUMMARY_INSTRUCTIONS[:40]):
            return Reply(text="SUMMARY-OF-OLD-BRANCH")
        return Reply(text=f"answer {len(body['messages'])}")

    llm_server.set_default(reply)
    condenser = LLMSummarizingCondenser(
        llm=llm.model_copy(update={"usage_id": "condenser"}), max_size=100, keep_first=1
    )
    conv = open_conversation(Agent(llm=llm, tools=[], condenser=condenser))
    for i in range(4):
        conv.send_message(f"turn {i}")
        conv.run()
    turn_one = user_message(list(conv.state.events), "turn 1")
    conv.condense()
    condensation = next(e for e in conv.state.events if isinstance(e, Condensation))
    assert turn_one.id in condensation.forgotten_event_ids
    conv.send_message("after the summary")
    conv.run()
    assert "SUMMARY-OF-OLD-BRANCH" in sent(llm_server.requests[-1])
    assert "turn 1" not in sent(llm_server.requests[-1])

    conv.navigate_to(turn_one.id)  # back before the condensation, onto what it forgot
    conv.send_message("on the new branch")
    conv.run()
    request = llm_server.requests[-1]
    said = [m for m, text in zip(request["messages"], texts(request), strict=True) if text]
    assert [texts({"messages": [m]})[0] for m in said if m["role"] == "user"] == [
        "turn 0",
        "turn 1",
        "on the new branch",
    ]
    assert "SUMMARY-OF-OLD-BRANCH" not in sent(request)
    assert "after the summary" not in sent(request)
    assert condensation.id in conv.state.events  # still in the log, on its own branch
    assert condensation.id not in ids(conv.state.active_branch())
    assert conv.state.view.most_recent_condensation is None


# --- pending actions ------------------------------------------------------------------------


def test_actions_waiting_on_an_abandoned_branch_are_not_pending(
    open_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = open_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_call("terminal", {"command": "echo ran > marker.txt"})
    conv.send_message("make a marker")
    conv.run()
    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    waiting = conv.state.get_unmatched_actions(conv.state.active_branch())
    assert len(waiting) == 1
    message = user_message(list(conv.state.events), "make a marker")

    conv.navigate_to(message.id)
    assert conv.state.execution_status is Status.IDLE  # nothing waits on this branch
    assert conv.state.get_unmatched_actions(conv.state.active_branch()) == []
    assert conv.state.get_unmatched_actions(list(conv.state.events)) == waiting  # the log
    conv.reject_pending_actions("not on this branch")  # nothing to reject here
    assert not any(e.id == waiting[0].id for e in conv.state.active_branch())

    llm_server.reply_text("no marker then")
    conv.send_message("never mind")
    conv.run()
    assert not (workspace / "marker.txt").exists()
    assert conv.state.execution_status is Status.FINISHED


def test_navigating_onto_an_action_waits_for_the_user_before_it_runs_again(
    open_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = open_conversation()
    llm_server.reply_tool_call("terminal", {"command": "echo ran >> marker.txt"})
    llm_server.reply_text("appended")
    llm_server.reply_text("ran it again")
    conv.send_message("append to the marker")
    conv.run()
    assert (workspace / "marker.txt").read_text() == "ran\n"
    action = next(e for e in conv.state.events if isinstance(e, ActionEvent))
    conv.set_confirmation_policy(AlwaysConfirm())

    conv.navigate_to(action.id)  # its observation is on the branch left behind
    assert [a.id for a in conv.state.get_unmatched_actions(conv.state.active_branch())] == [
        action.id
    ]
    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    requests = len(llm_server.requests)
    conv.run()  # the user confirms
    assert (workspace / "marker.txt").read_text() == "ran\nran\n"
    assert len(llm_server.requests) == requests + 1
    assert conv.state.execution_status is Status.FINISHED


def test_navigating_onto_an_action_the_policy_lets_run_runs_it_on_the_next_run(
    open_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = open_conversation()  # NeverConfirm: nothing waits for the user
    llm_server.reply_tool_call("terminal", {"command": "echo ran >> marker.txt"})
    llm_server.reply_text("appended")
    llm_server.reply_text("ran it again")
    conv.send_message("append to the marker")
    conv.run()
    action = next(e for e in conv.state.events if isinstance(e, ActionEvent))

    conv.navigate_to(action.id)
    assert conv.state.execution_status is not Status.WAITING_FOR_CONFIRMATION
    conv.run()
    assert (workspace / "marker.txt").read_text() == "ran\nran\n"
    assert conv.state.execution_status is Status.FINISHED


# --- HEAD moved while a run goes on ---------------------------------------------------------


def test_navigate_during_a_run_waits_for_the_step_and_the_run_goes_on_from_there(
    open_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = open_conversation()
    thought = json.dumps({"thought": "a slow thought"})
    llm_server.reply(Reply(tool_calls=(ToolCall("think", thought),), delay=0.8))
    llm_server.reply_text("finished on the new branch")
    conv.send_message("think slowly")
    task = user_message(list(conv.state.events), "think slowly")
    runner = RunThread(conv)
    runner.start()
    deadline = time.monotonic() + 10
    while not llm_server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert llm_server.requests, "the run never asked the model"
    conv.navigate_to(task.id)  # waits until the step has recorded its action and result
    step_events = [e for e in conv.state.events if isinstance(e, ActionEvent | ObservationEvent)]
    assert len(step_events) == 2  # the whole step, nothing half done
    runner.join(10)
    assert not runner.is_alive() and runner.error is None
    assert conv.state.execution_status is Status.FINISHED
    second = llm_server.requests[-1]
    assert texts(second)[1:] == ["think slowly"]
    assert "a slow thought" not in sent(second)
    answer = agent_message(list(conv.state.events), "finished on the new branch")
    assert answer.parent_id == task.id
    assert_is_tree(list(conv.state.events))


def test_navigate_from_another_thread_while_many_steps_run_keeps_one_tree(
    open_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    count = {"n": 0}

    def reply(_body: dict) -> Reply:
        count["n"] += 1
        if count["n"] > 30:
            return Reply(text="done")
        return Reply(tool_calls=(ToolCall("think", json.dumps({"thought": f"t{count['n']}"})),))

    llm_server.set_default(reply)
    conv = open_conversation(max_iteration_per_run=100)
    conv.send_message("think a lot")
    runner = RunThread(conv)
    runner.start()
    moves = 0
    while runner.is_alive() and moves < 40:
        branch = conv.state.active_branch()
        if len(branch) > 3:
            conv.navigate_to(branch[len(branch) // 2].id)
            moves += 1
        time.sleep(0.005)
    runner.join(30)
    assert runner.error is None and not runner.is_alive()
    assert moves > 0
    log = list(conv.state.events)
    assert_is_tree(log)
    branch = ids(conv.state.active_branch())
    assert branch == walk_to_root(log, conv.state.leaf_event_id)
    # FINISHED, or IDLE when the last move came after the run finished (its finish is then
    # on the branch left behind), or waiting when HEAD landed on a call.
    assert conv.state.execution_status in (
        Status.FINISHED,
        Status.IDLE,
        Status.WAITING_FOR_CONFIRMATION,
    )
    if conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION:  # HEAD on a call
        assert conv.state.get_unmatched_actions(conv.state.active_branch())


# --- events refused --------------------------------------------------------------------------


def test_the_root_marker_is_no_event_id() -> None:
    with pytest.raises(ValidationError, match="marks a root"):
        MessageEvent.model_validate({**user("x").model_dump(), "id": ROOT_PARENT_ID})
    with pytest.raises(ValidationError, match="marks a root"):
        MessageEvent(
            id=ROOT_PARENT_ID,
            source="user",
            llm_message=Message(role="user", content=[TextContent(text="x")]),
        )


@pytest.mark.parametrize("parent", ["no-such-event", "self", "other-conversation"])
def test_an_event_naming_a_parent_not_in_the_conversation_is_refused_and_not_written(
    open_conversation: Factory, llm_server: ScriptedLLMServer, parent: str
) -> None:
    conv = open_conversation()
    other = open_conversation()
    two_turns(conv, llm_server)
    other.send_message("in another conversation")
    elsewhere = other.state.events[-1].id
    event = user("sneaky")
    parent_id = {"self": event.id, "other-conversation": elsewhere}.get(parent, parent)
    event = event.model_copy(update={"parent_id": parent_id})
    leaf, count = conv.state.leaf_event_id, len(conv.state.events)
    with pytest.raises(ValueError, match="does not exist"), conv.state:
        conv.state.append_event(event)
    assert conv.state.leaf_event_id == leaf and len(conv.state.events) == count
    store, key = conv.state._store, conv.state._key
    assert store is not None and key is not None
    assert store.event_count(key) == count  # nothing reached the disk
    assert store.event_index(key, event.id) is None
