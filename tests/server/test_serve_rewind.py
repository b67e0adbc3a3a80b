"""Rewinding a conversation that runs on `ohtui serve`, through our RemoteConversation: the
plan from the server's events (the user's messages, the checkpoint after one), the code
restored on the server's disk, HEAD moved there, and the next message a sibling branch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer
from serve_helpers import attach
from server_process import ServerProcess

from ohtui.sdk import (
    MessageEvent,
    RemoteConversation,
)
from ohtui.sdk.conversation.rewind import RewindScope, plan_rewind, rewind, user_turns


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("serve")).start()
    try:
        yield process
    finally:
        process.stop()


def turn(conversation: RemoteConversation, llm: ScriptedLLMServer, text: str, command: str) -> None:
    llm.reply_tool_call("terminal", {"command": command, "security_risk": "LOW"})
    llm.reply_text(f"did {text}")
    conversation.send_message(text)
    conversation.run()


def texts(conversation: RemoteConversation) -> list[str]:
    return [
        e.llm_message.text
        for e in conversation.state.active_branch()
        if isinstance(e, MessageEvent)
    ]


def test_rewind_both_on_a_server(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    with attach(served, llm_server, tmp_path) as conversation:
        turn(conversation, llm_server, "first", "echo one > a.txt")
        turn(conversation, llm_server, "second", "echo two > a.txt && echo new > b.txt")

        turns = user_turns(conversation.state.active_branch())
        assert [t.text for t in turns] == ["second", "first"]
        plan = plan_rewind(conversation, turns[0].event_id)
        assert plan.checkpoint is not None
        assert {c.path: c.status for c in plan.changes} == {"a.txt": "modified", "b.txt": "deleted"}

        rewind(conversation, plan, RewindScope.BOTH)
        assert (tmp_path / "a.txt").read_text() == "one\n"
        assert not (tmp_path / "b.txt").exists()
        assert texts(conversation) == ["first", "did first"]

        llm_server.reply_text("again, differently")
        conversation.send_message("second, edited")
        conversation.run()
        assert texts(conversation) == ["first", "did first", "second, edited", "again, differently"]
        sent = str(llm_server.requests[-1]["messages"])
        assert "second, edited" in sent and "did second" not in sent
        assert turns[0].event_id in conversation.state.events  # the old branch is kept
