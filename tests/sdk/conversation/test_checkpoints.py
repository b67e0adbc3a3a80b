"""Checkpoints through the real engine: taken before every action that may change the
workspace, what they make undoable (and so unasked), restore, undo of a restore, resume.

The agent talks to the scripted LLM server over HTTP; the terminal is a real bash, in a real
bubblewrap sandbox where the test says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from sandboxed_bash import require_bwrap

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    CheckpointError,
    CheckpointEvent,
    CheckpointRestoreEvent,
    ConfirmRisky,
    Conversation,
    ConversationExecutionStatus,
    EnsembleSecurityAnalyzer,
    LLMSecurityAnalyzer,
    LocalConversation,
    PatternSecurityAnalyzer,
    SecurityRisk,
    Tool,
)
from ohtui.sdk.sandbox import SandboxConfig, SandboxMode

Status = ConversationExecutionStatus
Factory = Callable[..., LocalConversation]
CONFINED = SandboxConfig(mode=SandboxMode.WORKSPACE_WRITE)


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    """Conversations as ohtui opens them: the model's rating and ohtui's rules, the default
    policy (asks for MEDIUM and up)."""
    made: list[LocalConversation] = []

    def make(**kwargs: Any) -> LocalConversation:
        agent = Agent(llm=llm, tools=[Tool(name="terminal"), Tool(name="file_editor")])
        conv = Conversation(
            agent=agent,
            workspace=workspace,
            persistence_dir=persistence_dir,
            visualizer=None,
            checkpoints=True,
            **kwargs,
        )
        conv.set_security_analyzer(
            EnsembleSecurityAnalyzer(analyzers=[LLMSecurityAnalyzer(), PatternSecurityAnalyzer()])
        )
        conv.set_confirmation_policy(ConfirmRisky(threshold=SecurityRisk.MEDIUM))
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('app')\n")
    (workspace / "src" / "util.py").write_text("X = 1\n")
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.bin").write_bytes(b"\0" * 10)
    return workspace


@pytest.fixture
def bwrap() -> str:
    return require_bwrap()


def command(llm_server: ScriptedLLMServer, text: str, risk: str = "LOW") -> None:
    llm_server.reply_tool_call("terminal", {"command": text, "security_risk": risk})
    llm_server.reply_text("done")


def actions(conv: LocalConversation) -> list[ActionEvent]:
    return [e for e in conv.state.events if isinstance(e, ActionEvent)]


@pytest.mark.usefixtures("bwrap")
def test_a_destructive_command_rated_low_runs_confined_after_a_checkpoint_and_undoes(
    make_conversation: Factory, llm_server: ScriptedLLMServer, project: Path
) -> None:
    conv = make_conversation(sandbox=CONFINED)
    command(llm_server, "rm -f src/*.py && echo new > src/new.py")
    conv.send_message("clean up")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    assert sorted(p.name for p in (project / "src").iterdir()) == ["new.py"]
    [action] = actions(conv)
    assert action.security_risk is SecurityRisk.LOW
    [checkpoint] = conv.list_checkpoints()
    assert checkpoint.action_id == action.id
    assert checkpoint.label == "rm -f src/*.py && echo new > src/new.py"
    events = list(conv.state.events)
    assert events.index(checkpoint) < events.index(action) + 2  # right before it ran

    assert conv.undo_checkpoint() == checkpoint
    changes = {c.path: c.status for c in conv.checkpoint_changes(checkpoint.checkpoint_id or "")}
    assert changes == {"src/app.py": "added", "src/util.py": "added", "src/new.py": "deleted"}
    assert "+print('app')" in conv.checkpoint_diff(checkpoint.checkpoint_id or "")

    restored = conv.restore_checkpoint()
    assert (project / "src" / "app.py").read_text() == "print('app')\n"
    assert not (project / "src" / "new.py").exists()
    assert (project / "build" / "out.bin").exists()  # ignored: never touched
    assert {c.path for c in restored.changes} == set(changes)

    # The agent is told, in its next request.
    llm_server.reply_text("noted")
    conv.send_message("what happened?")
    conv.run()
    sent = str(llm_server.requests[-1]["messages"])
    assert "restored the workspace" in sent and "src/app.py" in sent

    # The restore is undoable: its own checkpoint brings the new state back.
    conv.restore_checkpoint(restored.undo_checkpoint_id)
    assert (project / "src" / "new.py").read_text() == "new\n"
    assert not (project / "src" / "app.py").exists()


def test_without_the_sandbox_the_same_command_asks(
    make_conversation: Factory, llm_server: ScriptedLLMServer, project: Path
) -> None:
    conv = make_conversation()
    command(llm_server, "rm -f src/*.py")
    conv.send_message("clean up")
    conv.run()

    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    [action] = actions(conv)
    assert action.security_risk is SecurityRisk.MEDIUM
    assert "not shown to be harmless" in (action.security_risk_reason or "")
    assert (project / "src" / "app.py").exists()


@pytest.mark.usefixtures("bwrap")
def test_with_network_the_same_command_asks(
    make_conversation: Factory, llm_server: ScriptedLLMServer, project: Path
) -> None:
    conv = make_conversation(sandbox=SandboxConfig(network=True))
    command(llm_server, "rm -f src/*.py")
    conv.send_message("clean up")
    conv.run()
    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert (project / "src" / "app.py").exists()


def test_reading_takes_no_checkpoint_and_an_edit_takes_one(
    make_conversation: Factory, llm_server: ScriptedLLMServer, project: Path
) -> None:
    conv = make_conversation()
    llm_server.reply_tool_call("terminal", {"command": "cat src/app.py", "security_risk": "LOW"})
    llm_server.reply_tool_call(
        "file_editor",
        {
            "command": "str_replace",
            "path": "src/app.py",
            "old_str": "app",
            "new_str": "APP",
            "security_risk": "LOW",
        },
    )
    llm_server.reply_text("done")
    conv.send_message("edit")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED  # the edit is undoable: unasked
    read, edit = actions(conv)
    assert read.security_risk is SecurityRisk.LOW
    [checkpoint] = conv.list_checkpoints()
    assert checkpoint.action_id == edit.id
    assert edit.security_risk is SecurityRisk.LOW
    conv.restore_checkpoint()
    assert (project / "src" / "app.py").read_text() == "print('app')\n"


def test_when_no_checkpoint_can_be_taken_an_undoable_action_waits_instead(
    make_conversation: Factory, llm_server: ScriptedLLMServer, project: Path
) -> None:
    conv = make_conversation()
    assert conv.checkpointing is not None
    store = Path(conv.checkpointing.store_dir or "")
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text("not a folder")  # the store cannot be made
    llm_server.reply_tool_call(
        "file_editor",
        {"command": "create", "path": "src/new.py", "file_text": "x", "security_risk": "LOW"},
    )
    llm_server.reply_text("done")
    conv.send_message("add a file")
    conv.run()

    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert not (project / "src" / "new.py").exists()
    [notice] = [e for e in conv.state.events if isinstance(e, CheckpointEvent)]
    assert notice.checkpoint_id is None and notice.unavailable
    # Confirmed by the user, it runs (still without a checkpoint).
    conv.run()
    assert (project / "src" / "new.py").read_text() == "x"


def test_checkpoints_survive_a_resume_and_undo_walks_back(
    make_conversation: Factory, llm_server: ScriptedLLMServer, project: Path
) -> None:
    conv = make_conversation()
    for text in ("one", "two"):
        llm_server.reply_tool_call(
            "file_editor",
            {
                "command": "create",
                "path": f"src/{text}.py",
                "file_text": text,
                "security_risk": "LOW",
            },
        )
    llm_server.reply_text("done")
    conv.send_message("add files")
    conv.run()
    conversation_id = conv.id
    conv.close()

    again = make_conversation(conversation_id=conversation_id)
    assert len(again.list_checkpoints()) == 2
    again.restore_checkpoint()  # undoes "two"
    assert not (project / "src" / "two.py").exists()
    assert (project / "src" / "one.py").exists()
    again.restore_checkpoint()  # then "one"
    assert not (project / "src" / "one.py").exists()
    with pytest.raises(CheckpointError, match="nothing to undo"):
        again.restore_checkpoint()
    restores = [e for e in again.state.events if isinstance(e, CheckpointRestoreEvent)]
    assert len(restores) == 2


def test_an_unknown_checkpoint_is_a_worded_error(make_conversation: Factory) -> None:
    conv = make_conversation()
    with pytest.raises(CheckpointError, match="no checkpoint 'abcd'"):
        conv.restore_checkpoint("abcd")
    with pytest.raises(CheckpointError, match="nothing to undo"):
        conv.restore_checkpoint()
