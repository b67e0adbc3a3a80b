"""The sandbox check at a conversation's open starts the agent's real shell once; the first
command runs in that shell (one sandbox start, not two), unless something it was made from
changed since; a broken sandbox is still reported, in words, before any command."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ohtui.sdk import LLM, Agent, Conversation
from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
from ohtui.sdk.sandbox import SandboxConfig, SandboxMode
from ohtui.sdk.tools.terminal.first_shell import _kept
from ohtui.sdk.tools.terminal.session import BashSession


def _open(project: Path) -> LocalConversation:
    llm = LLM(model="openai/x", base_url="http://127.0.0.1:9/v1", api_key="k")
    conversation = Conversation(agent=Agent(llm=llm, tools=[]), workspace=str(project))
    assert isinstance(conversation, LocalConversation)
    conversation.set_sandbox(SandboxConfig(mode=SandboxMode.WORKSPACE_WRITE))
    return conversation


def _kept_pid(conversation: LocalConversation) -> int:
    sandbox = conversation.state.sandbox
    assert sandbox is not None
    return _kept[id(sandbox)].proc.pid


def test_the_first_command_runs_in_the_shell_the_check_started(project: Path) -> None:
    conversation = _open(project)
    try:
        assert conversation.check_sandbox() is None
        checked = _kept_pid(conversation)
        session = BashSession(
            shell="bash", working_dir=str(project), sandbox=conversation.state.sandbox
        )
        out: list[bytes] = []
        result = session.run("echo in-sandbox > made && cat made", 30, out.append)
        assert result.exit_code == 0 and b"in-sandbox" in b"".join(out)
        assert session._proc is not None and session._proc.pid == checked
        assert id(conversation.state.sandbox) not in _kept  # given once
        session.close()
    finally:
        conversation.close()


def test_a_shell_made_before_a_repository_appeared_is_not_used(project: Path) -> None:
    """`.git` appearing after the check changes what the sandbox protects: a new shell."""
    conversation = _open(project)
    try:
        assert conversation.check_sandbox() is None
        checked = _kept[id(conversation.state.sandbox)].proc
        (project / ".git").mkdir()
        session = BashSession(
            shell="bash", working_dir=str(project), sandbox=conversation.state.sandbox
        )
        assert session.run("true", 30, lambda _: None).exit_code == 0
        assert session._proc is not None and session._proc.pid != checked.pid
        assert checked.poll() is not None  # the unused shell was ended
        session.close()
    finally:
        conversation.close()


def test_closing_the_conversation_ends_the_kept_shell(project: Path) -> None:
    conversation = _open(project)
    assert conversation.check_sandbox() is None
    checked = _kept[id(conversation.state.sandbox)].proc
    conversation.close()
    assert checked.poll() is not None


def test_a_broken_sandbox_is_reported_and_keeps_no_shell(
    project: Path, outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = outside_tmp / "bin"
    broken.mkdir()
    (broken / "bwrap").write_text(
        '#!/bin/sh\necho "bwrap: Creating new namespace failed: No space left on device" >&2\n'
        "exit 1\n"
    )
    (broken / "bwrap").chmod(0o755)
    conversation = _open(project)
    try:
        monkeypatch.setenv("PATH", f"{broken}:{os.environ['PATH']}")
        assert shutil.which("bwrap") == str(broken / "bwrap")
        problem = conversation.check_sandbox()
        assert problem == (
            "the sandboxed shell exited at once with status 1 "
            "(bwrap: Creating new namespace failed: No space left on device)"
        )
        assert id(conversation.state.sandbox) not in _kept
    finally:
        conversation.close()
