"""Tests for LocalConversation: running tasks end to end, messages, statuses, callbacks,
visualizers, closing, direct tool use, side questions, titles and stats.

The agent talks to the scripted OpenAI-compatible server (tests/llm_server.py) over real
HTTP through litellm, and the tools touch the real file system and a real bash.
"""

from __future__ import annotations

import io
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from llm_server import Reply
from rich.console import Console

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    AgentErrorEvent,
    BaseConversation,
    Conversation,
    ConversationErrorEvent,
    ConversationExecutionStatus,
    ConversationRunError,
    ConversationStateUpdateEvent,
    ConversationVisualizerBase,
    DefaultConversationVisualizer,
    LLMStreamChunk,
    LocalConversation,
    Message,
    MessageEvent,
    ObservationEvent,
    PauseEvent,
    SystemPromptEvent,
    TextContent,
    Tool,
    get_agent_final_response,
)
from ohtui.sdk.conversation import list_conversations
from ohtui.sdk.conversation.callbacks import logging_failures
from ohtui.sdk.conversation.impl.local_conversation import ASK_AGENT_LLM_USAGE_ID
from ohtui.sdk.conversation.title_utils import generate_title_with_llm, truncate_title
from ohtui.sdk.event.base import Event
from ohtui.sdk.llm import LLMNoResponseError
from ohtui.sdk.llm import llm as llm_module
from ohtui.sdk.llm._litellm import litellm
from ohtui.sdk.tools.terminal import TerminalAction, TerminalExecutor, TerminalObservation
from ohtui.sdk.workspace import LocalWorkspace

Status = ConversationExecutionStatus
T = TypeVar("T")
Factory = Callable[..., LocalConversation]
TOOLS = ("terminal", "file_editor", "task_tracker")


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    """Build conversations (a fresh Agent each) and close them all at the end."""
    made: list[LocalConversation] = []

    def make(agent_llm: LLM | None = None, **kwargs: Any) -> LocalConversation:
        kwargs.setdefault("visualizer", None)
        kwargs.setdefault("workspace", workspace)
        agent = Agent(llm=agent_llm or llm, tools=[Tool(name=name) for name in TOOLS])
        conv = Conversation(agent=agent, persistence_dir=persistence_dir, **kwargs)
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def of_type(events: Sequence[Event], cls: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, cls)]


def agent_messages(events: Sequence[Event]) -> list[MessageEvent]:
    return [e for e in of_type(events, MessageEvent) if e.source == "agent"]


def roles(request: dict[str, Any]) -> list[str]:
    return [m["role"] for m in request["messages"]]


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return content or ""


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    if Path("/proc/self/stat").exists():
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        return state != "Z"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_dead(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


# --- end to end --------------------------------------------------------------------------


def test_write_and_run_hello_py(make_conversation, llm_server, workspace) -> None:
    llm_server.reply_tool_call(
        "file_editor",
        {"command": "create", "path": "hello.py", "file_text": "print('hi')\n"},
    )
    llm_server.reply_tool_call("terminal", {"command": "python3 hello.py"})
    llm_server.reply_tool_call("finish", {"message": "Created hello.py; it prints hi."})
    conv = make_conversation()
    conv.send_message("Write hello.py that prints hi, and run it.")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    assert (workspace / "hello.py").read_text() == "print('hi')\n"
    observations = of_type(conv.state.events, ObservationEvent)
    assert [o.tool_name for o in observations] == ["file_editor", "terminal", "finish"]
    run = observations[1].observation
    assert isinstance(run, TerminalObservation)
    assert run.exit_code == 0
    assert run.text.splitlines()[0] == "hi"
    assert get_agent_final_response(conv.state.events) == "Created hello.py; it prints hi."
    assert len(llm_server.requests) == 3
    assert llm_server.pending() == 0


def test_plain_text_answer_finishes(make_conversation, llm_server) -> None:
    llm_server.reply_text("Paris is the capital of France.")
    conv = make_conversation()
    conv.send_message("What is the capital of France?")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    [answer] = agent_messages(conv.state.events)
    assert answer.llm_message.role == "assistant"
    assert answer.text == "Paris is the capital of France."
    assert answer.llm_response_id == "chatcmpl-1"
    assert get_agent_final_response(conv.state.events) == "Paris is the capital of France."
    assert not of_type(conv.state.events, ActionEvent)


def test_events_are_saved_and_listed(make_conversation, llm_server, persistence_dir) -> None:
    llm_server.reply_text("Hi there.")
    conv = make_conversation()
    conv.send_message("Say hi")
    conv.run()
    [summary] = list_conversations(persistence_dir)
    assert summary.id == conv.id.hex
    assert summary.status == "finished"
    assert summary.event_count == len(conv.state.events)
    assert summary.first_user_message == "Say hi"


# --- send_message ------------------------------------------------------------------------


def test_send_message_records_sender(make_conversation) -> None:
    conv = make_conversation()
    conv.send_message("from a string", sender="alice")
    conv.send_message(Message(role="user", content=[TextContent(text="from a Message")]))
    messages = of_type(conv.state.events, MessageEvent)
    assert [(m.source, m.sender, m.text) for m in messages] == [
        ("user", "alice", "from a string"),
        ("user", None, "from a Message"),
    ]


@pytest.mark.parametrize("role", ["assistant", "system"])
def test_send_message_rejects_non_user_messages(make_conversation, role: str) -> None:
    conv = make_conversation()
    with pytest.raises(ValueError, match=role):
        conv.send_message(Message(role=role, content=[TextContent(text="sneaky")]))  # type: ignore[arg-type]
    assert not of_type(conv.state.events, MessageEvent)


def test_message_after_finished_runs_again_with_the_whole_history(
    make_conversation, llm_server
) -> None:
    llm_server.reply_text("First answer.")
    llm_server.reply_text("Second answer.")
    conv = make_conversation()
    conv.send_message("first question")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED

    conv.send_message("second question")
    assert conv.state.execution_status is Status.IDLE
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert [m.text for m in agent_messages(conv.state.events)] == [
        "First answer.",
        "Second answer.",
    ]
    second = llm_server.requests[1]
    assert roles(second) == ["system", "user", "assistant", "user"]
    assert [text_of(m) for m in second["messages"][1:]] == [
        "first question",
        "First answer.",
        "second question",
    ]


# --- statuses and callbacks --------------------------------------------------------------


def test_statuses_over_a_run(make_conversation, llm_server) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo working"})
    llm_server.reply_tool_call("finish", {"message": "done"})
    seen: list[Event] = []
    status_during_action: list[Status] = []
    holder: list[LocalConversation] = []

    def callback(event: Event) -> None:
        seen.append(event)
        if isinstance(event, ActionEvent):
            status_during_action.append(holder[0].state.execution_status)

    conv = make_conversation(callbacks=[callback])
    holder.append(conv)
    assert conv.state.execution_status is Status.IDLE
    conv.send_message("work")
    assert conv.state.execution_status is Status.IDLE
    conv.run()
    assert conv.state.execution_status is Status.FINISHED

    updates = [
        e.value
        for e in seen
        if isinstance(e, ConversationStateUpdateEvent) and e.key == "execution_status"
    ]
    assert updates == [Status.RUNNING, Status.FINISHED]
    assert status_during_action == [Status.RUNNING, Status.RUNNING]


def test_callbacks_receive_every_event_in_order(make_conversation, llm_server) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo hello"})
    llm_server.reply_text("All done.")
    received: list[Event] = []
    holder: list[LocalConversation] = []
    stored_before_callback: list[bool] = []

    def callback(event: Event) -> None:
        received.append(event)
        if not isinstance(event, ConversationStateUpdateEvent):
            stored_before_callback.append(holder[0].state.events[-1].id == event.id)

    conv = make_conversation(callbacks=[callback])
    holder.append(conv)
    conv.send_message("say hello")
    conv.run()

    logged = [e for e in received if not isinstance(e, ConversationStateUpdateEvent)]
    assert [e.id for e in logged] == [e.id for e in conv.state.events]
    assert [type(e) for e in logged] == [
        SystemPromptEvent,
        MessageEvent,
        ActionEvent,
        ObservationEvent,
        MessageEvent,
    ]
    assert all(stored_before_callback)
    keys = {e.key for e in received if isinstance(e, ConversationStateUpdateEvent)}
    assert {"execution_status", "stats"} <= keys


def test_token_callbacks_stream_the_text(make_conversation, llm_server, llm) -> None:
    chunks = ["Hel", "lo, ", "stream", "ing world"]
    llm_server.reply_text("".join(chunks), chunks=chunks)
    received: list[LLMStreamChunk] = []
    conv = make_conversation(
        agent_llm=llm.model_copy(update={"stream": True}), token_callbacks=[received.append]
    )
    conv.send_message("stream something")
    conv.run()

    assert llm_server.requests[0]["stream"] is True
    contents = [c.content for c in received if c.content]
    assert contents == chunks
    assert all(isinstance(c, LLMStreamChunk) for c in received)
    assert conv.state.execution_status is Status.FINISHED
    [answer] = agent_messages(conv.state.events)
    assert answer.text == "Hello, streaming world"


def test_streamed_tool_calls_are_assembled(make_conversation, llm_server, llm) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo streamed-call"})
    llm_server.reply_text("Done streaming.")
    received: list[LLMStreamChunk] = []
    conv = make_conversation(
        agent_llm=llm.model_copy(update={"stream": True}), token_callbacks=[received.append]
    )
    conv.send_message("run something")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    deltas = [d for c in received for d in c.tool_calls]
    assert [d.name for d in deltas if d.name] == ["terminal"]
    arguments = "".join(d.arguments for d in deltas)
    assert json.loads(arguments) == {"command": "echo streamed-call"}
    [action] = of_type(conv.state.events, ActionEvent)
    assert isinstance(action.action, TerminalAction)
    assert action.action.command == "echo streamed-call"
    [observation] = of_type(conv.state.events, ObservationEvent)
    assert "streamed-call" in observation.observation.text


def test_a_failing_token_callback_does_not_stop_streaming(
    make_conversation, llm_server, llm
) -> None:
    llm_server.reply_text("one two three")

    def broken(chunk: LLMStreamChunk) -> None:
        raise RuntimeError("token callback broke")

    received: list[str] = []
    conv = make_conversation(
        agent_llm=llm.model_copy(update={"stream": True}),
        token_callbacks=[broken, lambda c: received.append(c.content)],
    )
    conv.send_message("count")
    conv.run()
    assert "".join(received) == "one two three"
    assert conv.state.execution_status is Status.FINISHED


def test_compose_callbacks_stops_at_a_failing_callback_and_raises() -> None:
    calls: list[str] = []

    def first(event: Event) -> None:
        calls.append("first")

    def broken(event: Event) -> None:
        calls.append("broken")
        raise RuntimeError("callback exploded")

    def last(event: Event) -> None:
        calls.append("last")

    composed = BaseConversation.compose_callbacks([first, broken, last])
    with pytest.raises(RuntimeError, match="callback exploded"):
        composed(PauseEvent())
    assert calls == ["first", "broken"]


def test_logging_failures_logs_and_lets_the_others_run(caplog) -> None:
    calls: list[str] = []

    def broken(event: Event) -> None:
        raise RuntimeError("callback exploded")

    composed = BaseConversation.compose_callbacks(
        [logging_failures(broken), lambda e: calls.append("last")]
    )
    with caplog.at_level(logging.ERROR):
        composed(PauseEvent())
    assert calls == ["last"]
    [failure] = [r for r in caplog.records if "callback" in r.getMessage()]
    assert failure.exc_info is not None and "callback exploded" in str(failure.exc_info[1])


def test_a_failing_callback_stops_the_run_with_its_error(make_conversation, llm_server) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo still"})
    llm_server.reply_text("Finished anyway.")
    received: list[Event] = []
    armed = threading.Event()

    def broken(event: Event) -> None:
        if armed.is_set() and isinstance(event, ActionEvent):
            raise RuntimeError("the script's callback broke")

    conv = make_conversation(callbacks=[broken, received.append])
    conv.send_message("go")
    armed.set()
    with pytest.raises(ConversationRunError) as raised:
        conv.run()
    assert isinstance(raised.value.__cause__, RuntimeError)
    assert "the script's callback broke" in str(raised.value)
    assert conv.state.execution_status is Status.ERROR
    # Saved before the listeners heard of it; the action never ran.
    [action] = of_type(conv.state.events, ActionEvent)
    assert action.id not in {e.id for e in received}
    assert not of_type(conv.state.events, ObservationEvent)


def test_a_failing_callback_surfaces_from_send_message(make_conversation) -> None:
    def broken(event: Event) -> None:
        if isinstance(event, MessageEvent):
            raise ValueError("no messages please")

    conv = make_conversation(callbacks=[broken])
    with pytest.raises(ValueError, match="no messages please"):
        conv.send_message("hello")
    assert [m.llm_message.text for m in of_type(conv.state.events, MessageEvent)] == ["hello"]


# --- visualizers -------------------------------------------------------------------------


class RecordingVisualizer(ConversationVisualizerBase):
    """Remembers every event it is shown; the class keeps its instances."""

    instances: list[RecordingVisualizer] = []

    def __init__(self) -> None:
        super().__init__()
        self.events: list[Event] = []
        RecordingVisualizer.instances.append(self)

    def on_event(self, event: Event) -> None:
        self.events.append(event)


def test_the_visualizer_sees_each_event_before_the_callbacks(make_conversation, llm_server) -> None:
    llm_server.reply_text("In order.")
    order: list[str] = []

    class Recorder(ConversationVisualizerBase):
        def on_event(self, event: Event) -> None:
            order.append("visualizer")

    conv = make_conversation(
        visualizer=Recorder(),
        callbacks=[lambda e: order.append("first"), lambda e: order.append("second")],
    )
    conv.send_message("go")
    conv.run()
    assert len(order) >= 9
    assert order == ["visualizer", "first", "second"] * (len(order) // 3)


def test_visualizer_instance(make_conversation, llm_server) -> None:
    llm_server.reply_text("Visible.")
    visualizer = RecordingVisualizer()
    assert visualizer.conversation_stats is None
    conv = make_conversation(visualizer=visualizer)
    assert visualizer.conversation_stats is conv.conversation_stats
    conv.send_message("show me")
    conv.run()
    logged = [e for e in visualizer.events if not isinstance(e, ConversationStateUpdateEvent)]
    assert [e.id for e in logged] == [e.id for e in conv.state.events]
    stats = visualizer.conversation_stats
    assert stats is not None
    assert stats.get_combined_metrics().accumulated_token_usage.prompt_tokens > 0


def test_visualizer_class_is_instantiated(make_conversation, llm_server) -> None:
    llm_server.reply_text("Visible.")
    before = len(RecordingVisualizer.instances)
    conv = make_conversation(visualizer=RecordingVisualizer)
    assert len(RecordingVisualizer.instances) == before + 1
    visualizer = RecordingVisualizer.instances[-1]
    assert visualizer.conversation_stats is conv.conversation_stats
    conv.send_message("show me")
    conv.run()
    assert [e.id for e in visualizer.events if isinstance(e, MessageEvent)] == [
        e.id for e in of_type(conv.state.events, MessageEvent)
    ]


def test_no_visualizer_prints_nothing(make_conversation, llm_server, capsys) -> None:
    llm_server.reply_text("Quiet answer.")
    conv = make_conversation(visualizer=None)
    conv.send_message("be quiet")
    conv.run()
    out, err = capsys.readouterr()
    assert "Quiet answer." not in out + err
    assert out == ""


def test_default_visualizer_is_used_when_not_given(
    llm, llm_server, workspace, persistence_dir, capsys
) -> None:
    llm_server.reply_text("Loud answer.")
    conv = Conversation(
        agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=workspace,
        persistence_dir=persistence_dir,
    )
    try:
        conv.send_message("be loud")
        conv.run()
    finally:
        conv.close()
    out = capsys.readouterr().out
    assert "Message from Agent" in out
    assert "Loud answer." in out


def make_console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=100), buffer


def test_default_visualizer_prints_each_event_type(make_conversation, llm_server) -> None:
    llm_server.reply_tool_calls(
        [("terminal", {"command": "echo printed-output"}), ("no_such_tool", {})],
        text="Trying things.",
    )
    llm_server.reply_text("Visible final answer.")
    llm_server.reply_error(401)
    console, buffer = make_console()
    conv = make_conversation(visualizer=DefaultConversationVisualizer(console=console))
    conv.send_message("Please print something")
    conv.run()
    conv.send_message("Again")
    conv.pause()
    with pytest.raises(ConversationRunError):
        conv.run()

    out = buffer.getvalue()
    for title in (
        "System Prompt",
        "Message from User",
        "Agent Action",
        "Observation",
        "Agent Error",
        "Message from Agent",
        "Conversation Error",
        "User Paused",
    ):
        assert title in out, title
    for text in (
        "Please print something",
        "Trying things.",
        "echo printed-output",
        "no_such_tool",
        "Visible final answer.",
        "LLMAuthenticationError",
    ):
        assert text in out, text
    assert "execution_status" not in out  # state updates are not printed


class LegacyCodePageStream(io.StringIO):
    """A terminal stream that, like a cp1252 Windows console, cannot encode emoji."""

    encoding = "cp1252"

    def write(self, text: str) -> int:
        text.encode(self.encoding)  # raises UnicodeEncodeError as such a console does
        return super().write(text)


def test_default_visualizer_degrades_on_a_console_that_cannot_encode(
    make_conversation, llm_server
) -> None:
    llm_server.reply_text("\U0001f510 Security Policy — résumé")
    stream = LegacyCodePageStream()
    visualizer = DefaultConversationVisualizer(console=Console(file=stream, width=80))
    conv = make_conversation(visualizer=visualizer)
    conv.send_message("go")
    conv.run()  # does not raise
    out = stream.getvalue()
    assert "? Security Policy — résumé" in out  # only what cp1252 lacks is replaced
    assert conv.state.execution_status is Status.FINISHED


def test_default_visualizer_can_skip_user_messages(make_conversation, llm_server) -> None:
    llm_server.reply_text("The reply is shown.")
    console, buffer = make_console()
    conv = make_conversation(
        visualizer=DefaultConversationVisualizer(skip_user_messages=True, console=console)
    )
    conv.send_message("The secret question")
    conv.run()
    out = buffer.getvalue()
    assert "The reply is shown." in out
    assert "The secret question" not in out
    assert "Message from User" not in out


def test_default_visualizer_highlights_matches(make_conversation, llm_server) -> None:
    llm_server.reply_text("say MAGICWORD now")
    llm_server.reply_text("say MAGICWORD again")
    outputs = []
    for highlight in (None, {r"MAGIC\w+": "bold red"}):
        buffer = io.StringIO()
        console = Console(file=buffer, width=100, force_terminal=True, color_system="standard")
        conv = make_conversation(
            visualizer=DefaultConversationVisualizer(highlight_regex=highlight, console=console)
        )
        conv.send_message("say it")
        conv.run()
        outputs.append(buffer.getvalue())
    plain, highlighted = outputs
    assert "MAGICWORD" in plain
    assert "\x1b[1;31mMAGICWORD" not in plain
    assert "\x1b[1;31mMAGICWORD" in highlighted


# --- close -------------------------------------------------------------------------------


def test_close_kills_the_shell_and_is_idempotent(make_conversation, llm_server) -> None:
    llm_server.reply_tool_call("terminal", {"command": "sleep 60 > /dev/null 2>&1 &\necho $! $$"})
    llm_server.reply_tool_call("finish", {"message": "ok"})
    conv = make_conversation()
    conv.send_message("start a background job and tell me the pids")
    conv.run()
    terminal = of_type(conv.state.events, ObservationEvent)[0].observation
    job_pid, bash_pid = (int(p) for p in terminal.text.splitlines()[0].split())
    executor = conv.agent.tools_map["terminal"].executor
    assert isinstance(executor, TerminalExecutor)
    assert executor.session.pid == bash_pid
    assert alive(bash_pid)
    assert alive(job_pid)

    conv.close()
    assert wait_dead(bash_pid)
    assert wait_dead(job_pid)  # what the shell started goes too
    assert executor.session.closed
    conv.close()  # again: no error
    conv.close()


def test_close_reports_the_whole_cost_to_the_workspace(make_conversation, llm_server, llm) -> None:
    llm_server.reply_text("one")
    llm_server.reply_text("two")
    conv = make_conversation(agent_llm=llm.model_copy(update={"input_cost_per_token": 0.01}))
    assert conv.workspace.accumulated_cost is None
    for text in ("first", "second"):
        conv.send_message(text)
        conv.run()
    spent = conv.conversation_stats.get_combined_metrics().accumulated_cost
    assert spent > 0
    conv.close()
    assert conv.workspace.accumulated_cost == spent


def test_close_without_any_llm_call_reports_zero_cost(make_conversation) -> None:
    conv = make_conversation()
    conv.close()
    assert conv.workspace.accumulated_cost == 0.0


class BrokenCloseAgent(Agent):
    """An agent whose own close() fails, as a custom agent's might."""

    def close(self) -> None:
        raise RuntimeError("agent close exploded")


def test_a_failing_agent_close_is_logged_and_the_conversation_still_closes(
    llm, llm_server, workspace, persistence_dir, caplog
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo $$"})
    llm_server.reply_tool_call("finish", {"message": "ok"})
    conv = Conversation(
        agent=BrokenCloseAgent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=workspace,
        persistence_dir=persistence_dir,
        visualizer=None,
    )
    conv.send_message("say your pid")
    conv.run()
    executor = conv.agent.tools_map["terminal"].executor
    assert isinstance(executor, TerminalExecutor)
    with caplog.at_level(logging.WARNING):
        conv.close()
        conv.close()
    failures = [r for r in caplog.records if "agent close exploded" in r.getMessage()]
    assert len(failures) == 1
    assert executor.session.closed  # the tools were closed all the same
    again = Conversation(  # and the conversation was let go
        agent=BrokenCloseAgent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=workspace,
        persistence_dir=persistence_dir,
        conversation_id=conv.id,
        visualizer=None,
    )
    with caplog.at_level(logging.CRITICAL):
        again.close()


def test_delete_on_close_removes_the_saved_conversation(
    make_conversation, llm_server, persistence_dir
) -> None:
    llm_server.reply_text("one")
    llm_server.reply_text("two")
    kept = make_conversation()
    kept.send_message("keep me")
    kept.run()
    doomed = make_conversation(delete_on_close=True)
    doomed.send_message("delete me")
    doomed.run()
    doomed_dir = doomed.state.persistence_dir
    assert doomed_dir is not None
    ids = {s.id for s in list_conversations(persistence_dir)}
    assert ids == {kept.id.hex, doomed.id.hex}

    doomed.close()
    kept.close()
    assert {s.id for s in list_conversations(persistence_dir)} == {kept.id.hex}
    assert not Path(doomed_dir).exists()


# --- execute_tool ------------------------------------------------------------------------


def test_execute_tool_before_the_first_run(make_conversation, llm_server) -> None:
    conv = make_conversation()
    observation = conv.execute_tool("terminal", TerminalAction(command="echo hi"))
    assert isinstance(observation, TerminalObservation)
    assert observation.exit_code == 0
    assert observation.text.splitlines()[0] == "hi"
    # Only the agent's setup is recorded; the tool call itself is not.
    assert all(isinstance(e, SystemPromptEvent) for e in conv.state.events)
    count = len(conv.state.events)
    conv.execute_tool("terminal", TerminalAction(command="echo again"))
    assert len(conv.state.events) == count
    assert conv.state.execution_status is Status.IDLE
    assert llm_server.requests == []


def test_execute_tool_shares_the_agents_shell(make_conversation, llm_server) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo $OHTUI_TEST_VAR"})
    llm_server.reply_tool_call("finish", {"message": "ok"})
    conv = make_conversation()
    conv.execute_tool("terminal", TerminalAction(command="export OHTUI_TEST_VAR=shared-value"))
    conv.send_message("print it")
    conv.run()
    observation = of_type(conv.state.events, ObservationEvent)[0]
    assert "shared-value" in observation.observation.text


def test_execute_tool_unknown_tool(make_conversation) -> None:
    conv = make_conversation()
    with pytest.raises(KeyError, match="'no_such_tool' not found: this agent's tools are "):
        conv.execute_tool("no_such_tool", TerminalAction(command="echo hi"))


# --- ask_agent ---------------------------------------------------------------------------


def test_ask_agent_answers_from_the_history(make_conversation, llm_server) -> None:
    llm_server.reply_text("It is 4.")
    llm_server.reply_text("Because 2 and 2 make 4.")
    conv = make_conversation()
    conv.send_message("What is 2+2?")
    conv.run()
    count = len(conv.state.events)

    answer = conv.ask_agent("Why?")
    assert answer == "Because 2 and 2 make 4."
    assert len(conv.state.events) == count
    assert conv.state.execution_status is Status.FINISHED
    side = llm_server.requests[1]
    assert roles(side) == ["system", "user", "assistant", "user"]
    assert [text_of(m) for m in side["messages"][1:3]] == ["What is 2+2?", "It is 4."]
    question = text_of(side["messages"][3])
    assert "<QUESTION>\nWhy?\n</QUESTION>" in question
    assert "do not make any tool call" in question


def test_ask_agent_uses_its_own_llm_without_streaming(
    make_conversation, llm_server, llm: LLM
) -> None:
    streaming = llm.model_copy(update={"stream": True})
    llm_server.reply_text("Main answer.", usage={"prompt_tokens": 100, "completion_tokens": 10})
    llm_server.reply_text("Side answer.", usage={"prompt_tokens": 7, "completion_tokens": 3})
    conv = make_conversation(agent_llm=streaming, token_callbacks=[lambda chunk: None])
    conv.send_message("Go")
    conv.run()

    assert conv.ask_agent("How did it go?") == "Side answer."

    main, side = llm_server.requests
    assert main.get("stream") is True
    assert "stream" not in side  # nobody reads its tokens: one whole answer
    ask_llm = conv.llm_registry.get(ASK_AGENT_LLM_USAGE_ID)
    assert ask_llm is not streaming
    assert ask_llm.stream is False
    assert streaming.stream is True
    stats = conv.conversation_stats.usage_to_metrics
    assert stats[ASK_AGENT_LLM_USAGE_ID].accumulated_token_usage.prompt_tokens == 7
    # The agent's own usage (the context it fills) is not disturbed by side questions.
    assert stats[streaming.usage_id].latest_token_usage is not None
    assert stats[streaming.usage_id].latest_token_usage.prompt_tokens == 100
    llm_server.reply_text("Again.")
    assert conv.ask_agent("And now?") == "Again."
    assert conv.llm_registry.get(ASK_AGENT_LLM_USAGE_ID) is ask_llm


def test_a_conversation_pins_its_llms_prompt_cache_key_to_its_id(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    sent: list[dict[str, Any]] = []
    lib = litellm()

    def provider(**request: Any) -> Any:
        sent.append(request)
        message = {"content": f"answer {len(sent)}"}
        return lib.ModelResponse(choices=[{"index": 0, "message": message}])

    monkeypatch.setattr(llm_module, "litellm_completion", provider)
    agent = Agent(llm=LLM(model="gpt-4o-mini", api_key="sk-never-sent"), tools=[])
    with Conversation(agent=agent, workspace=workspace, visualizer=None) as conv:
        conv.send_message("hi")
        conv.run()
        conv.ask_agent("and?")
    # The provider routes requests with one key to the same cache: a conversation's
    # requests share a long prefix, so they belong together.
    assert [r["prompt_cache_key"] for r in sent] == [str(conv.id)] * 2


def test_ask_agent_offers_the_agents_tools(make_conversation, llm_server) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo hi"}, call_id="c1")
    llm_server.reply_tool_call("finish", {"message": "done"})
    llm_server.reply_text("It ran echo.")
    conv = make_conversation()
    conv.send_message("Say hi")
    conv.run()

    assert conv.ask_agent("What ran?") == "It ran echo."

    main, side = llm_server.requests[1], llm_server.requests[2]
    # Some providers refuse a history with tool calls but no tools; the same tools also
    # keep the prompt prefix the provider may have cached.
    assert side["tools"] == main["tools"]
    assert roles(side)[:4] == ["system", "user", "assistant", "tool"]


def test_ask_agent_answered_with_a_tool_call_says_so(make_conversation, llm_server) -> None:
    llm_server.reply_tool_call("terminal", {"command": "ls"})
    conv = make_conversation()
    with pytest.raises(LLMNoResponseError, match="tool call instead of text"):
        conv.ask_agent("What is here?")
    assert len(conv.state.events) == 1  # the system prompt only: nothing recorded


def test_ask_agent_before_any_message(make_conversation, llm_server) -> None:
    llm_server.reply_text("Nothing happened yet.")
    conv = make_conversation()
    assert conv.ask_agent("Anything so far?") == "Nothing happened yet."
    assert conv.state.execution_status is Status.IDLE
    assert all(isinstance(e, SystemPromptEvent) for e in conv.state.events)
    assert roles(llm_server.requests[0]) == ["system", "user"]


def test_ask_agent_while_running(make_conversation, llm_server) -> None:
    side_answered = threading.Event()

    def slow_main(body: dict[str, Any]) -> Reply:
        side_answered.wait(30)
        return Reply(text="Main answer.")

    llm_server.reply_with(slow_main)
    llm_server.reply_text("Side answer.")
    conv = make_conversation()
    conv.send_message("Do the main thing")
    errors: list[BaseException] = []

    def run() -> None:
        try:
            conv.run()
        except BaseException as exc:
            errors.append(exc)

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    deadline = time.monotonic() + 30
    while not llm_server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(llm_server.requests) == 1
    assert conv.state.execution_status is Status.RUNNING

    answer = conv.ask_agent("How is it going?")
    assert answer == "Side answer."
    assert runner.is_alive()  # the main call is still waiting
    side_answered.set()
    runner.join(10)
    assert not runner.is_alive()
    assert errors == []

    assert conv.state.execution_status is Status.FINISHED
    assert [m.text for m in agent_messages(conv.state.events)] == ["Main answer."]
    side = llm_server.requests[1]
    assert text_of(side["messages"][1]) == "Do the main thing"
    assert "\nHow is it going?\n" in text_of(side["messages"][2])
    assert len(side["messages"]) == 3


def test_ask_agent_while_a_tool_runs_leaves_out_unanswered_calls(
    make_conversation, llm_server, workspace
) -> None:
    # The command runs until the test creates the file `go`.
    gated = "while [ ! -e go ]; do sleep 0.02; done; echo woke"
    llm_server.reply_tool_call(
        "terminal", {"command": gated, "timeout": 30}, text="Running it.", call_id="slow"
    )
    llm_server.reply_text("It is running a command.")
    llm_server.reply_tool_call("finish", {"message": "woke up"})
    action_recorded = threading.Event()

    def on_event(event: Event) -> None:
        if isinstance(event, ActionEvent):
            action_recorded.set()

    conv = make_conversation(callbacks=[on_event])
    conv.send_message("Sleep, then wake")
    runner = threading.Thread(target=conv.run, daemon=True)
    runner.start()
    assert action_recorded.wait(30)

    assert conv.ask_agent("What are you doing?") == "It is running a command."
    assert runner.is_alive()
    (workspace / "go").touch()
    runner.join(10)
    assert not runner.is_alive()
    assert conv.state.execution_status is Status.FINISHED

    side = llm_server.requests[1]
    assert roles(side) == ["system", "user", "assistant", "user"]
    assistant = side["messages"][2]
    assert text_of(assistant) == "Running it."
    assert not assistant.get("tool_calls")  # its call has no result yet
    assert "\nWhat are you doing?\n" in text_of(side["messages"][3])
    # The main loop's next request still has the call and its result.
    main = llm_server.requests[2]
    assert roles(main) == ["system", "user", "assistant", "tool"]
    assert main["messages"][2]["tool_calls"][0]["id"] == "slow"


# --- generate_title ----------------------------------------------------------------------


def test_generate_title_needs_a_user_message_and_says_so(make_conversation, llm_server) -> None:
    conv = make_conversation()
    with pytest.raises(ValueError, match="No user messages found in conversation events"):
        conv.generate_title()
    assert llm_server.requests == []


def test_generate_title_uses_the_llm(make_conversation, llm_server) -> None:
    llm_server.reply_text('  "Fix the login bug"\n')
    conv = make_conversation()
    conv.send_message("The login page crashes when the password is empty; please fix it.")
    title = conv.generate_title()
    assert title == "Fix the login bug"
    [request] = llm_server.requests
    assert "The login page crashes" in text_of(request["messages"][-1])
    assert "tools" not in request


def test_a_title_in_markdown_is_shown_plain(make_conversation, llm_server) -> None:
    conv = make_conversation()
    conv.send_message("The login page crashes when the password is empty; please fix it.")
    for answer in (
        "## **Fix** the `login` bug",
        "Title: __Fix the login bug__",
        "**Fix the login bug**\n\nMore",
    ):
        llm_server.reply_text(answer)
        assert conv.generate_title() == "Fix the login bug", answer


def test_generate_title_with_a_streaming_llm_asks_for_one_whole_answer(
    make_conversation, llm_server, llm: LLM
) -> None:
    streaming = llm.model_copy(update={"stream": True})
    llm_server.reply_text("Streamed or not")
    conv = make_conversation(agent_llm=streaming)
    conv.send_message("Title me")
    assert conv.generate_title() == "Streamed or not"
    assert "stream" not in llm_server.requests[0]
    assert streaming.stream is True


def test_a_title_from_the_llm_alone_reports_a_failure(llm: LLM, llm_server) -> None:
    llm_server.reply_text('"Fix the parser"')
    assert generate_title_with_llm("The parser fails on empty input", llm) == "Fix the parser"
    assert "The parser fails on empty input" in text_of(llm_server.requests[0]["messages"][0])

    llm_server.reply_error(404)
    failures: list[Exception] = []
    assert generate_title_with_llm("Anything", llm, on_error=failures.append) is None
    assert len(failures) == 1 and "openai/test-model" in str(failures[0])
    llm_server.reply_text("   ")
    assert generate_title_with_llm("Anything", llm, on_error=failures.append) is None
    assert len(failures) == 1  # an empty answer is no failure: there is just no title


def test_generate_title_is_cut_to_max_length(make_conversation, llm_server) -> None:
    llm_server.reply_text("A very long title that goes on and on about many different things")
    conv = make_conversation()
    conv.send_message("Do many different things")
    title = conv.generate_title(max_length=20)
    assert 0 < len(title) <= 20
    assert title.startswith("A very")


def test_generate_title_with_another_llm(make_conversation, llm_server, llm) -> None:
    llm_server.reply_text("Side model title")
    conv = make_conversation()
    conv.send_message("Something")
    other = llm.model_copy(update={"usage_id": "titles", "temperature": 0.5})
    assert conv.generate_title(llm=other) == "Side model title"
    assert llm_server.requests[0]["temperature"] == 0.5


def test_generate_title_falls_back_to_the_first_message(make_conversation, llm_server) -> None:
    llm_server.reply_error(500)
    conv = make_conversation()
    message = "Refactor the database layer to use connection pooling and retries"
    conv.send_message(message)
    conv.send_message("a later message")
    title = conv.generate_title(max_length=30)
    assert len(llm_server.requests) == 1
    assert len(title) <= 30
    assert title.endswith("...")
    assert message.startswith(title.removesuffix("..."))


# --- persistence dir, stats, ids ---------------------------------------------------------


def test_get_persistence_dir_is_normalised(tmp_path: Path) -> None:
    conversation_id = uuid.uuid4()
    expected = str((tmp_path / "base").resolve() / conversation_id.hex)
    messy = tmp_path / "base" / "sub" / ".."
    for base in (messy, str(messy), tmp_path / "base", str(tmp_path / "base") + "/"):
        result = BaseConversation.get_persistence_dir(base, conversation_id)
        assert isinstance(result, str)
        assert result == expected


def test_get_persistence_dir_expands_home(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    conversation_id = uuid.uuid4()
    result = BaseConversation.get_persistence_dir("~/convs", conversation_id)
    assert result == str(tmp_path.resolve() / "convs" / conversation_id.hex)


def test_conversation_uses_its_persistence_dir(make_conversation, persistence_dir) -> None:
    conv = make_conversation()
    assert conv.state.persistence_dir == BaseConversation.get_persistence_dir(
        persistence_dir, conv.id
    )


def test_unknown_keyword_arguments_are_refused(make_conversation) -> None:
    with pytest.raises(TypeError, match="max_iterations_per_run"):
        make_conversation(max_iterations_per_run=5)  # a typo must not be silently ignored


def test_the_given_workspace_is_the_conversations_own(make_conversation, workspace) -> None:
    given = LocalWorkspace(working_dir=workspace)
    assert given.working_dir == str(workspace)
    conv = make_conversation(workspace=given)
    assert conv.workspace is given
    assert conv.state.workspace is given


def test_a_relative_workspace_is_made_absolute(make_conversation, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    conv = make_conversation(workspace=Path("rel") / "work")
    assert conv.workspace.working_dir == str(tmp_path.resolve() / "rel" / "work")
    assert (tmp_path / "rel" / "work").is_dir()


def test_the_default_workspace_is_workspace_project(llm, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    conv = Conversation(agent=Agent(llm=llm), visualizer=None)
    try:
        assert conv.workspace.working_dir == str(tmp_path.resolve() / "workspace" / "project")
        assert (tmp_path / "workspace" / "project").is_dir()
    finally:
        conv.close()


def test_ids(make_conversation) -> None:
    conv = make_conversation()
    assert conv.id == conv.state.id
    assert isinstance(conv.id, uuid.UUID)
    chosen = uuid.uuid4()
    conv2 = make_conversation(conversation_id=chosen)
    assert conv2.id == chosen == conv2.state.id
    assert conv.id != conv2.id


def test_conversation_stats_accumulate_across_runs(make_conversation, llm_server) -> None:
    llm_server.reply_text("one", usage={"prompt_tokens": 100, "completion_tokens": 7})
    llm_server.reply_text("two", usage={"prompt_tokens": 150, "completion_tokens": 5})
    conv = make_conversation()
    conv.send_message("first")
    conv.run()
    usage = conv.conversation_stats.get_combined_metrics().accumulated_token_usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (100, 7)

    conv.send_message("second")
    conv.run()
    usage = conv.conversation_stats.get_combined_metrics().accumulated_token_usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (250, 12)
    assert conv.conversation_stats is conv.state.stats
    metrics = conv.conversation_stats.get_metrics_for_usage("default")
    assert metrics.call_count == 2
    with pytest.raises(KeyError, match=r"LLM usage does not exist: 'condenser'.*default"):
        conv.conversation_stats.get_metrics_for_usage("condenser")


def test_errors_are_not_agent_errors(make_conversation, llm_server) -> None:
    llm_server.reply_error(401)
    conv = make_conversation()
    conv.send_message("hi")
    with pytest.raises(ConversationRunError):
        conv.run()
    assert of_type(conv.state.events, ConversationErrorEvent)
    assert not of_type(conv.state.events, AgentErrorEvent)


@pytest.mark.parametrize("max_length", [1, 3, 4, 10, 30])
def test_a_cut_title_never_exceeds_max_length(max_length: int) -> None:
    title = truncate_title("Refactor the database layer to use pooling", max_length)
    assert 0 < len(title) <= max_length
    if max_length > 3:
        assert title.endswith("...")
