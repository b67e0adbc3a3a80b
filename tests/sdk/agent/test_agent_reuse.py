"""One Agent for several conversations, as SDK scripts use it: after `close()`, after the
caller dropped the conversation (`del conversation`), for the same saved conversation
reopened, and beside a conversation still open (which keeps its own tools)."""

from __future__ import annotations

import weakref
from pathlib import Path

from llm_server import ScriptedLLMServer
from mcp_servers import time_server

from ohtui.sdk import LLM, Agent, Conversation, ConversationExecutionStatus, Tool


def _echo_then_finish(llm_server: ScriptedLLMServer, word: str) -> None:
    llm_server.reply_tool_call("terminal", {"command": f"echo {word}"})
    llm_server.reply_tool_call("finish", {"message": word})


def _outputs(conversation: object) -> str:
    return " ".join(str(e) for e in conversation.state.events)  # type: ignore[attr-defined]


def test_an_agent_serves_a_second_conversation_after_close(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    agent = Agent(llm=llm, tools=[Tool(name="terminal")])
    with Conversation(agent=agent, workspace=workspace, visualizer=None) as first:
        _echo_then_finish(llm_server, "one")
        first.send_message("go")
        first.run()
    _echo_then_finish(llm_server, "two")
    with Conversation(agent=agent, workspace=workspace, visualizer=None) as second:
        assert second.agent is agent
        second.send_message("go")
        second.run()
        assert second.state.execution_status is ConversationExecutionStatus.FINISHED
        assert "two" in _outputs(second)
        # The history of the first is not the second's: one user message was sent to it.
        users = [m for m in llm_server.requests[-1]["messages"] if m["role"] == "user"]
        assert len(users) == 1


def test_a_dropped_conversation_gives_its_agent_and_saved_state_back(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path, persistence_dir: Path
) -> None:
    agent = Agent(llm=llm, tools=[Tool(name="terminal")])
    first = Conversation(
        agent=agent, workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )
    conversation_id = first.id
    _echo_then_finish(llm_server, "one")
    first.send_message("go")
    first.run()
    old_shell = weakref.ref(agent.tools_map["terminal"])  # holding it would hold the state
    del first  # never closed: the next conversation collects it and takes its agent

    _echo_then_finish(llm_server, "two")
    again = Conversation(
        agent=agent,
        workspace=workspace,
        persistence_dir=persistence_dir,
        conversation_id=conversation_id,
        visualizer=None,
    )
    try:
        assert again.agent is agent
        again.send_message("again")
        again.run()
        assert again.state.execution_status is ConversationExecutionStatus.FINISHED
        assert agent.tools_map["terminal"] is not old_shell()  # a shell of its own
        # The resumed history reached the model: both user messages.
        users = [m for m in llm_server.requests[-1]["messages"] if m["role"] == "user"]
        assert len(users) == 2
    finally:
        again.close()


def test_an_agent_in_use_gives_the_next_conversation_a_copy(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    agent = Agent(llm=llm, tools=[Tool(name="terminal")])
    first = Conversation(agent=agent, workspace=workspace, visualizer=None)
    second = Conversation(agent=agent, workspace=workspace, visualizer=None)
    try:
        assert first.agent is agent
        assert second.agent is not agent
        assert second.agent.llm is llm  # one LLM: its metrics count both conversations
        assert second.agent.tools == agent.tools
        _echo_then_finish(llm_server, "one")
        first.send_message("go")
        first.run()
        _echo_then_finish(llm_server, "two")
        second.send_message("go")
        second.run()
        assert "two" in _outputs(second)
        assert second.agent.tools_map["terminal"] is not first.agent.tools_map["terminal"]
        # The first still runs on its own shell.
        _echo_then_finish(llm_server, "three")
        first.send_message("more")
        first.run()
        assert "three" in _outputs(first)
    finally:
        first.close()
        second.close()


def test_a_dropped_conversation_with_mcp_servers_can_be_reopened(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path, persistence_dir: Path
) -> None:
    # The agent holds its MCP servers' manager: it must not hold the conversation itself.
    agent = Agent(llm=llm, mcp_config={"time": time_server()})
    first = Conversation(
        agent=agent, workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )
    conversation_id = first.id
    llm_server.reply_text("one")
    first.send_message("go")
    first.run()
    del first

    llm_server.reply_text("two")
    again = Conversation(
        agent=agent,
        workspace=workspace,
        persistence_dir=persistence_dir,
        conversation_id=conversation_id,
        visualizer=None,
    )
    try:
        assert again.agent is agent
        again.send_message("again")
        again.run()
        assert again.state.execution_status is ConversationExecutionStatus.FINISHED
        offered = {t["function"]["name"] for t in llm_server.requests[-1]["tools"]}
        assert "time_convert_time" in offered  # its servers started again
    finally:
        again.close()
