"""Tests for controlling a run: max iterations, pause, interrupt, and errors during run().

The agent talks to the scripted OpenAI-compatible server (tests/llm_server.py) over real
HTTP through litellm, and the terminal tool runs a real bash.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from llm_server import Reply, ToolCall

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    Conversation,
    ConversationErrorEvent,
    ConversationExecutionStatus,
    ConversationRunError,
    ConversationStateUpdateEvent,
    LocalConversation,
    MessageEvent,
    ObservationEvent,
    PauseEvent,
    SystemPromptEvent,
    Tool,
    UserRejectObservation,
    get_agent_final_response,
)
from ohtui.sdk.event.base import Event
from ohtui.sdk.llm.exceptions import LLMAuthenticationError
from ohtui.sdk.tools.terminal import TerminalExecutor, TerminalObservation
from ohtui.sdk.tools.terminal.processes import children_of, descendants, is_running

Status = ConversationExecutionStatus
T = TypeVar("T")
Factory = Callable[..., LocalConversation]


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    """Build conversations (a fresh Agent each) and close them all at the end."""
    made: list[LocalConversation] = []

    def make(agent_llm: LLM | None = None, **kwargs: Any) -> LocalConversation:
        kwargs.setdefault("visualizer", None)
        agent = Agent(llm=agent_llm or llm, tools=[Tool(name="terminal"), Tool(name="file_editor")])
        conv = Conversation(
            agent=agent, workspace=workspace, persistence_dir=persistence_dir, **kwargs
        )
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def of_type(events: Sequence[Event], cls: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, cls)]


class RunThread(threading.Thread):
    """Runs `conv.run()` in the background, keeping any exception and the time it took."""

    def __init__(self, conv: LocalConversation) -> None:
        super().__init__(daemon=True)
        self.conv = conv
        self.error: BaseException | None = None
        self.ended_at: float | None = None

    def run(self) -> None:
        try:
            self.conv.run()
        except BaseException as exc:
            self.error = exc
        finally:
            self.ended_at = time.monotonic()

    def finish(self, timeout: float) -> None:
        self.join(timeout)
        assert not self.is_alive(), f"run() still going after {timeout} s"
        assert self.error is None, f"run() raised {self.error!r}"


def wait_for(condition: Callable[[], bool], timeout: float = 30.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        time.sleep(0.01)


def terminal_executor(conv: LocalConversation) -> TerminalExecutor:
    executor = conv.agent.tools_map["terminal"].executor
    assert isinstance(executor, TerminalExecutor)
    return executor


GATED_COMMAND = "while [ ! -e go ]; do sleep 0.02; done; echo slept"
"""A command that runs until a file named `go` appears in the workspace."""


def think_reply() -> Reply:
    return Reply(tool_calls=(ToolCall("think", json.dumps({"thought": "still thinking"})),))


# --- statuses ----------------------------------------------------------------------------


def test_is_terminal_only_for_finished_error_stuck() -> None:
    terminal = {s for s in Status if s.is_terminal()}
    assert terminal == {Status.FINISHED, Status.ERROR, Status.STUCK}


# --- max iterations ----------------------------------------------------------------------


def test_max_iterations_ends_in_error_without_raising(make_conversation, llm_server) -> None:
    llm_server.set_default(think_reply())
    conv = make_conversation(max_iteration_per_run=3)
    conv.send_message("think forever")
    conv.run()  # does not raise

    assert conv.state.execution_status is Status.ERROR
    assert len(llm_server.requests) == 3
    [error] = of_type(conv.state.events, ConversationErrorEvent)
    assert error.code == "MaxIterationsReached"
    assert "maximum iterations limit (3)" in error.detail
    assert "max_iteration_per_run=3" in error.detail
    assert len(of_type(conv.state.events, ActionEvent)) == 3
    assert len(of_type(conv.state.events, ObservationEvent)) == 3


def test_after_max_iterations_a_new_message_runs_again(make_conversation, llm_server) -> None:
    llm_server.set_default(think_reply())
    conv = make_conversation(max_iteration_per_run=2)
    conv.send_message("think forever")
    conv.run()
    assert conv.state.execution_status is Status.ERROR

    llm_server.reply_text("Finally done.")
    conv.send_message("stop thinking")
    assert conv.state.execution_status is Status.IDLE
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert len(llm_server.requests) == 3
    assert get_agent_final_response(conv.state.events) == "Finally done."


def test_finishing_on_the_last_allowed_step_is_not_an_error(make_conversation, llm_server) -> None:
    llm_server.reply_tool_call("finish", {"message": "just in time"})
    conv = make_conversation(max_iteration_per_run=1)
    conv.send_message("one step only")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert not of_type(conv.state.events, ConversationErrorEvent)


def test_iteration_limit_counts_per_run(make_conversation, llm_server) -> None:
    llm_server.set_default(think_reply())
    conv = make_conversation(max_iteration_per_run=2)
    conv.send_message("think")
    conv.run()
    conv.run()  # ERROR is restartable: another two steps
    assert len(llm_server.requests) == 4
    assert len(of_type(conv.state.events, ConversationErrorEvent)) == 2


def test_run_on_a_finished_conversation_returns_at_once(make_conversation, llm_server) -> None:
    llm_server.reply_text("Done.")
    conv = make_conversation()
    conv.send_message("do it")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    events = len(conv.state.events)

    conv.run()  # nothing new to answer: no LLM call, no event, still FINISHED
    assert len(llm_server.requests) == 1
    assert len(conv.state.events) == events
    assert conv.state.execution_status is Status.FINISHED

    llm_server.reply_text("Again.")
    conv.send_message("once more")
    conv.run()
    assert len(llm_server.requests) == 2
    assert get_agent_final_response(conv.state.events) == "Again."


# --- budget ------------------------------------------------------------------------------


def test_max_budget_per_run_stops_the_run_once_spent(make_conversation, llm_server, llm) -> None:
    llm_server.set_default(think_reply())
    priced = llm.model_copy(update={"input_cost_per_token": 1.0, "output_cost_per_token": 0.0})
    conv = make_conversation(agent_llm=priced, max_budget_per_run=1.0, max_iteration_per_run=50)
    conv.send_message("think forever")
    conv.run()  # does not raise

    assert conv.state.execution_status is Status.ERROR
    assert len(llm_server.requests) == 1  # one call costs far more than $1
    [error] = of_type(conv.state.events, ConversationErrorEvent)
    assert error.code == "MaxBudgetReached"
    assert "maximum budget limit ($1.0000)" in error.detail
    spent = conv.conversation_stats.get_combined_metrics().accumulated_cost
    assert f"${spent:.4f}" in error.detail

    conv.send_message("go on")
    conv.run()  # the budget covers the conversation's whole spend: still over it
    assert len(llm_server.requests) == 2
    assert conv.state.execution_status is Status.ERROR


def test_finishing_over_budget_is_still_finished(make_conversation, llm_server, llm) -> None:
    llm_server.reply_text("Done, at a price.")
    priced = llm.model_copy(update={"input_cost_per_token": 1.0})
    conv = make_conversation(agent_llm=priced, max_budget_per_run=0.5)
    conv.send_message("finish")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert not of_type(conv.state.events, ConversationErrorEvent)


# --- pause -------------------------------------------------------------------------------


def test_pause_during_a_terminal_action(make_conversation, llm_server, workspace) -> None:
    # The command runs until the test creates the file `go`: the pauses surely land mid-action.
    llm_server.reply_tool_call("terminal", {"command": GATED_COMMAND, "timeout": 30})
    llm_server.reply_tool_call("finish", {"message": "resumed and done"})
    action_started = threading.Event()

    def on_event(event: Event) -> None:
        if isinstance(event, ActionEvent) and event.tool_name == "terminal":
            action_started.set()

    conv = make_conversation(callbacks=[on_event])
    conv.send_message("sleep a bit")
    runner = RunThread(conv)
    runner.start()
    assert action_started.wait(30)
    for _ in range(3):
        conv.pause()
    (workspace / "go").touch()
    runner.finish(10)

    assert conv.state.execution_status is Status.PAUSED
    assert len(of_type(conv.state.events, PauseEvent)) == 1
    [observation] = of_type(conv.state.events, ObservationEvent)
    assert "slept" in observation.observation.text  # the running action was not cut short
    assert len(llm_server.requests) == 1  # paused before asking the model again

    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert len(of_type(conv.state.events, PauseEvent)) == 1
    assert get_agent_final_response(conv.state.events) == "resumed and done"


def test_pause_during_a_slow_llm_call_takes_effect_after_it(make_conversation, llm_server) -> None:
    paused = threading.Event()

    def answer_after_pause(body: dict[str, Any]) -> Reply:
        paused.wait(30)  # the model answers only once pause() was called
        return think_reply()

    llm_server.reply_with(answer_after_pause)
    llm_server.reply_tool_call("finish", {"message": "done"})
    conv = make_conversation()
    conv.send_message("go")
    runner = RunThread(conv)
    runner.start()
    wait_for(lambda: len(llm_server.requests) == 1, what="the first LLM request")
    conv.pause()
    paused.set()
    runner.finish(10)

    assert conv.state.execution_status is Status.PAUSED
    assert len(of_type(conv.state.events, PauseEvent)) == 1
    # The call in flight completed and its action ran; the next step did not start.
    assert len(of_type(conv.state.events, ObservationEvent)) == 1
    assert len(llm_server.requests) == 1

    conv.run()
    assert conv.state.execution_status is Status.FINISHED


def test_pause_while_idle(make_conversation, llm_server) -> None:
    llm_server.reply_text("ok")
    conv = make_conversation()
    conv.send_message("hello")
    conv.pause()
    assert conv.state.execution_status is Status.PAUSED
    conv.pause()
    assert len(of_type(conv.state.events, PauseEvent)) == 1

    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert len(llm_server.requests) == 1


def test_pause_after_the_run_ended_changes_nothing(make_conversation, llm_server) -> None:
    llm_server.reply_text("ok")
    conv = make_conversation()
    conv.send_message("hello")
    conv.run()
    conv.pause()
    assert conv.state.execution_status is Status.FINISHED
    assert of_type(conv.state.events, PauseEvent) == []


def test_pause_before_anything_else_keeps_the_system_prompt_event(
    make_conversation, llm_server
) -> None:
    llm_server.reply_text("ok")
    conv = make_conversation()
    conv.pause()
    assert conv.state.execution_status is Status.PAUSED
    conv.send_message("hello")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert len(of_type(conv.state.events, SystemPromptEvent)) == 1


# --- interrupt ---------------------------------------------------------------------------


def test_interrupt_abandons_a_slow_llm_call(make_conversation, llm_server) -> None:
    llm_server.reply_text("too late", delay=10)
    conv = make_conversation()
    conv.send_message("answer slowly")
    runner = RunThread(conv)
    runner.start()
    wait_for(lambda: len(llm_server.requests) == 1, what="the LLM request")
    time.sleep(0.1)
    interrupted_at = time.monotonic()
    conv.interrupt()
    runner.finish(5)
    assert runner.ended_at is not None
    assert runner.ended_at - interrupted_at < 1.5

    assert conv.state.execution_status is Status.PAUSED
    assert not of_type(conv.state.events, ConversationErrorEvent)
    assert len(of_type(conv.state.events, PauseEvent)) == 1
    assert not [m for m in of_type(conv.state.events, MessageEvent) if m.source == "agent"]

    llm_server.reply_text("Back again.")
    conv.send_message("try again")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert get_agent_final_response(conv.state.events) == "Back again."
    users = [m for m in llm_server.requests[1]["messages"] if m["role"] == "user"]
    assert [m["content"] for m in users] == ["answer slowly", "try again"]


def test_interrupt_kills_a_running_command(make_conversation, llm_server) -> None:
    llm_server.reply_tool_calls(
        [("terminal", {"command": "sleep 30", "timeout": 60}), ("terminal", {"command": "echo x"})]
    )
    conv = make_conversation()
    conv.send_message("sleep long")
    runner = RunThread(conv)
    runner.start()
    wait_for(
        lambda: (
            conv.state.execution_status is Status.RUNNING
            and (pid := terminal_executor(conv).session.pid) is not None
            and bool(children_of(pid))
        ),
        what="sleep to start",
    )
    interrupted_at = time.monotonic()
    conv.interrupt()
    runner.finish(10)
    assert runner.ended_at is not None
    assert runner.ended_at - interrupted_at < 3.0

    assert conv.state.execution_status is Status.PAUSED
    assert not of_type(conv.state.events, ConversationErrorEvent)
    [observation] = of_type(conv.state.events, ObservationEvent)
    assert isinstance(observation.observation, TerminalObservation)
    assert observation.observation.interrupted
    assert "interrupted" in observation.observation.text
    # The second call of the batch never ran.
    [rejected] = of_type(conv.state.events, UserRejectObservation)
    assert rejected.tool_call_id == "call_1_1"

    llm_server.reply_tool_call("finish", {"message": "stopped sleeping"})
    conv.send_message("never mind")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    results = [m for m in llm_server.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == ["call_1_0", "call_1_1"]
    assert "interrupted" in json.dumps(results[0]["content"])


def test_interrupt_stops_the_whole_command_line_before_the_agent_is_told(
    make_conversation, llm_server, workspace: Path
) -> None:
    command = (
        "sleep 300 > /dev/null 2>&1 & (setsid sleep 301 > /dev/null 2>&1 &); "
        "sleep 15; touch SIDE_EFFECT"
    )
    llm_server.reply_tool_call("terminal", {"command": command, "timeout": 60})
    left_when_told: list[set[int]] = []

    def on_event(event: Event) -> None:
        if isinstance(event, ObservationEvent):
            bash = terminal_executor(conv).session.pid
            assert bash is not None
            left_when_told.append({p for p in descendants([bash]) - {bash} if is_running(p)})

    conv = make_conversation(callbacks=[on_event])
    conv.send_message("sleep, then touch")
    runner = RunThread(conv)
    runner.start()
    wait_for(
        lambda: (
            (bash := terminal_executor(conv).session.pid) is not None
            and len(descendants([bash])) >= 3  # bash and two sleeps at least
        ),
        what="the command to start",
    )
    conv.interrupt()
    runner.finish(10)

    assert conv.state.execution_status is Status.PAUSED
    [observation] = of_type(conv.state.events, ObservationEvent)
    assert isinstance(observation.observation, TerminalObservation)
    assert observation.observation.interrupted
    time.sleep(1.5)
    assert not (workspace / "SIDE_EFFECT").exists()
    assert left_when_told == [set()]
    assert "stopped" in observation.observation.text


def test_interrupt_while_idle_does_not_break_the_next_run(make_conversation, llm_server) -> None:
    llm_server.reply_text("fine")
    conv = make_conversation()
    conv.send_message("hi")
    conv.interrupt()
    conv.run()
    assert conv.state.execution_status is Status.FINISHED


def test_interrupt_as_soon_as_running_is_announced(make_conversation, llm_server) -> None:
    llm_server.reply_text("should not be reached")
    conv_holder: list[LocalConversation] = []

    def on_event(event: Event) -> None:
        if (
            isinstance(event, ConversationStateUpdateEvent)
            and event.key == "execution_status"
            and event.value == Status.RUNNING
        ):
            conv_holder[0].interrupt()  # e.g. the user hits Esc as the run starts

    conv = make_conversation(callbacks=[on_event])
    conv_holder.append(conv)
    conv.send_message("hi")
    conv.run()
    assert conv.state.execution_status is Status.PAUSED
    assert not [m for m in of_type(conv.state.events, MessageEvent) if m.source == "agent"]


def test_close_while_running_stops_the_run(make_conversation, llm_server) -> None:
    llm_server.reply_text("never delivered", delay=10)
    conv = make_conversation()
    conv.send_message("wait")
    runner = RunThread(conv)
    runner.start()
    wait_for(lambda: len(llm_server.requests) == 1, what="the LLM request")
    started = time.monotonic()
    conv.close()
    assert time.monotonic() - started < 3.0
    runner.finish(3)
    assert conv.state.execution_status is Status.PAUSED
    assert not of_type(conv.state.events, ConversationErrorEvent)


# --- errors ------------------------------------------------------------------------------


def test_llm_authentication_error_raises_conversation_run_error(
    make_conversation, llm_server, persistence_dir
) -> None:
    llm_server.reply_error(401, "Incorrect API key provided")
    conv = make_conversation()
    conv.send_message("hi")
    with pytest.raises(ConversationRunError) as caught:
        conv.run()

    err = caught.value
    assert err.conversation_id == conv.id
    assert isinstance(err.original_exception, LLMAuthenticationError)
    assert conv.state.persistence_dir is not None
    assert conv.state.persistence_dir in str(err)
    assert str(persistence_dir.resolve()) in str(err)
    assert conv.state.execution_status is Status.ERROR
    [event] = of_type(conv.state.events, ConversationErrorEvent)
    assert event.code == "LLMAuthenticationError"
    assert event.detail

    llm_server.reply_text("Working now.")
    conv.send_message("retry")
    assert conv.state.execution_status is Status.IDLE
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert get_agent_final_response(conv.state.events) == "Working now."


def test_run_error_then_plain_run_recovers(make_conversation, llm_server) -> None:
    llm_server.reply_error(500)
    llm_server.reply_text("second time lucky")
    conv = make_conversation()
    conv.send_message("hi")
    with pytest.raises(ConversationRunError):
        conv.run()
    assert conv.state.execution_status is Status.ERROR
    [event] = of_type(conv.state.events, ConversationErrorEvent)
    assert event.code == "LLMServiceUnavailableError"
    conv.run()
    assert conv.state.execution_status is Status.FINISHED


def test_run_after_close_raises(make_conversation) -> None:
    conv = make_conversation()
    conv.close()
    with pytest.raises(RuntimeError, match="closed"):
        conv.run()


def test_a_message_sent_during_a_run_is_delivered_between_steps(make_conversation, llm_server):
    """send_message from another thread waits for the current step only, not the whole run."""
    release = threading.Event()
    step_two_seen = threading.Event()

    def first(_request: dict) -> Reply:
        release.wait(5)  # keep the first step busy until the message is on its way
        return Reply(tool_calls=(ToolCall("think", '{"thought": "one"}'),))

    def second(request: dict) -> Reply:
        step_two_seen.set()
        texts = [m.get("content") for m in request["messages"] if m["role"] == "user"]
        assert "also do this" in texts  # the message arrived before the second LLM call
        return Reply(tool_calls=(ToolCall("finish", '{"message": "done"}'),))

    llm_server.reply_with(first)
    llm_server.reply_with(second)
    conv = make_conversation()
    conv.send_message("start")
    runner = threading.Thread(target=conv.run)
    runner.start()
    time.sleep(0.2)
    sender = threading.Thread(target=conv.send_message, args=("also do this",))
    sender.start()
    release.set()
    sender.join(5)
    runner.join(10)
    assert not sender.is_alive() and not runner.is_alive()
    assert step_two_seen.is_set()
    assert conv.state.execution_status is ConversationExecutionStatus.FINISHED
