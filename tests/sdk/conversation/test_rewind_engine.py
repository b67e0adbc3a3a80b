"""Rewinding through the real engine: the conversation, the code, or both, back to one of the
user's messages; and a fork that keeps the checkpoints, so its code can go back too.

The agent talks to the scripted LLM server over HTTP; its terminal is a real bash.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer
from terminal_turns import Factory, conversations, turn

from ohtui.sdk import LLM, Conversation, LocalConversation, MessageEvent
from ohtui.sdk.conversation.rewind import (
    RewindScope,
    plan_rewind,
    reply_preview,
    rewind,
    turn_end,
    user_turns,
)


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    yield from conversations(llm, workspace, persistence_dir)


def texts(conv: LocalConversation) -> list[str]:
    return [e.llm_message.text for e in conv.state.active_branch() if isinstance(e, MessageEvent)]


def test_rewind_both_brings_back_the_code_and_the_conversation(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation(checkpoints=True)
    turn(conv, llm_server, "first", "echo one > a.txt")
    second = turn(conv, llm_server, "second", "echo two > a.txt && echo new > b.txt")
    turn(conv, llm_server, "third", "rm a.txt")

    turns = user_turns(conv.state.active_branch())
    assert [t.text for t in turns] == ["third", "second", "first"]
    assert [t.number for t in turns] == [3, 2, 1]
    assert reply_preview(conv.state.active_branch(), turns[1]) == "[terminal] did second"

    plan = plan_rewind(conv, second)
    assert plan.checkpoint is not None
    assert {c.path: c.status for c in plan.changes} == {"a.txt": "added", "b.txt": "deleted"}
    rewind(conv, plan, RewindScope.BOTH)

    assert (workspace / "a.txt").read_text() == "one\n"
    assert not (workspace / "b.txt").exists()
    assert texts(conv) == ["first", "did first"]
    log_size = len(conv.state.events)

    llm_server.reply_text("fresh answer")
    conv.send_message("second, edited")
    conv.run()
    assert texts(conv) == ["first", "did first", "second, edited", "fresh answer"]
    sent = str(llm_server.requests[-1]["messages"])
    assert "second, edited" in sent and "did second" not in sent and "third" not in sent
    assert len(conv.state.events) > log_size  # the old branch is still in the log
    assert second in conv.state.events


def test_rewind_conversation_only_leaves_the_files(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation(checkpoints=True)
    first = turn(conv, llm_server, "first", "echo one > a.txt")
    turn(conv, llm_server, "second", "echo two > a.txt")
    rewind(conv, plan_rewind(conv, first), RewindScope.CONVERSATION)
    assert (workspace / "a.txt").read_text() == "two\n"
    assert texts(conv) == []


def test_rewind_code_only_keeps_the_conversation(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation(checkpoints=True)
    turn(conv, llm_server, "first", "echo one > a.txt")
    second = turn(conv, llm_server, "second", "echo two > a.txt")
    before = texts(conv)
    rewind(conv, plan_rewind(conv, second), RewindScope.CODE)
    assert (workspace / "a.txt").read_text() == "one\n"
    assert texts(conv)[: len(before)] == before


def test_without_checkpoints_the_plan_says_the_code_cannot_go_back(
    make_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = make_conversation()
    first = turn(conv, llm_server, "first", "echo one > a.txt")
    plan = plan_rewind(conv, first)
    assert plan.checkpoint is None and plan.changes == []
    assert "keeps no checkpoints" in plan.code_note


def test_only_the_users_messages_on_the_branch_are_rewind_points(
    make_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = make_conversation()
    first = turn(conv, llm_server, "first", "true")
    agent_answer = conv.state.active_branch()[-1].id
    with pytest.raises(ValueError, match="not one of the user's messages"):
        plan_rewind(conv, agent_answer)
    with pytest.raises(ValueError, match="not one of the user's messages"):
        plan_rewind(conv, "no-such-event")
    second = turn(conv, llm_server, "second", "true")
    rewind(conv, plan_rewind(conv, first), RewindScope.CONVERSATION)
    with pytest.raises(ValueError, match="not one of the user's messages"):
        plan_rewind(conv, second)  # on the branch left behind


def test_a_fork_keeps_the_checkpoints_of_its_source(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation(checkpoints=True)
    first = turn(conv, llm_server, "first", "echo one > a.txt")
    turn(conv, llm_server, "second", "echo two > a.txt")
    branch = conv.state.active_branch()
    [first_turn] = [t for t in user_turns(branch) if t.event_id == first]
    fork = conv.fork(title="try again", from_event_id=turn_end(branch, first_turn))
    try:
        assert texts(fork) == ["first", "did first"]
        assert fork.state.title == "try again"
        fork.close()
        with Conversation(
            agent=conv.agent,
            workspace=workspace,
            persistence_dir=Path(conv.state.persistence_dir or "").parent,
            conversation_id=fork.id,
            visualizer=None,
            checkpoints=True,
        ) as reopened:
            assert isinstance(reopened, LocalConversation)
            # Taken in the source, before the first turn's command: the fork can use it.
            plan = plan_rewind(reopened, first)
            assert plan.checkpoint is not None
            assert [(c.path, c.status) for c in plan.changes] == [("a.txt", "deleted")]
            rewind(reopened, plan, RewindScope.CODE)
            assert not (workspace / "a.txt").exists()
    finally:
        fork.close()
