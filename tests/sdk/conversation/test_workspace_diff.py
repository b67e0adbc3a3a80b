"""What the agent changed, through the real engine (`workspace_diff`): from the checkpoints,
since the start or since a message; from git, read only, where the conversation kept none;
refused, with the reason, where git could run a program of the repository's; nothing to
show, said plainly. The agent talks to the scripted LLM server; its terminal is real bash."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from terminal_turns import Factory, conversations, turn

from ohtui.sdk import LLM, LocalConversation
from ohtui.sdk.conversation.workspace_diff import DiffSource, file_diff, workspace_diff
from ohtui.sdk.utils.masking import SECRET_MASK


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    yield from conversations(llm, workspace, persistence_dir)


def summary(conv: LocalConversation, since: str | None = None) -> list[tuple[Any, ...]]:
    found = workspace_diff(conv, since)
    return [(p.path, p.status, p.added, p.removed, p.binary) for p in found.files]


def git(workspace: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=workspace,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return done.stdout


def repository(workspace: Path) -> None:
    (workspace / "app.py").write_text("print(1)\n")
    (workspace / "old.txt").write_text("old\n")
    git(workspace, "init", "-q")
    git(workspace, "add", ".")
    git(workspace, "commit", "-qm", "start")


def git_state(workspace: Path) -> tuple[bytes, int, str, str]:
    """What /diff must never change: the index (bytes and time), HEAD, the refs."""
    index = workspace / ".git" / "index"
    refs = git(workspace, "for-each-ref")
    return index.read_bytes(), index.stat().st_mtime_ns, git(workspace, "rev-parse", "HEAD"), refs


def test_from_the_checkpoints_since_the_start_and_since_a_message(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    (workspace / "keep.txt").write_text("a\nb\nc\n")
    conv = make_conversation(checkpoints=True)
    assert (
        workspace_diff(conv).note == "The agent has not changed the workspace in this conversation."
    )
    turn(conv, llm_server, "first", "printf 'a\\nB\\nc\\nd\\n' > keep.txt && echo one > new.txt")
    second = turn(conv, llm_server, "second", "rm new.txt && printf 'x\\000' > pic.bin")
    turn(conv, llm_server, "third", "echo look")  # reads only: nothing more changes

    found = workspace_diff(conv)
    assert found.source is DiffSource.CHECKPOINTS and not found.cut and found.note == ""
    assert summary(conv) == [
        ("keep.txt", "modified", 2, 1, False),
        ("pic.bin", "added", 0, 0, True),
    ]  # new.txt came and went: no change
    keep = found.files[0].text.splitlines()
    assert keep[-6:] == ["@@ -1,3 +1,4 @@", " a", "-b", "+B", " c", "+d"]
    assert summary(conv, second) == [
        ("new.txt", "deleted", 0, 1, False),
        ("pic.bin", "added", 0, 0, True),
    ]
    assert (workspace / "keep.txt").read_text() == "a\nB\nc\nd\n"  # nothing restored


def test_without_checkpoints_git_is_read_against_the_last_commit_and_left_as_it_was(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    repository(workspace)
    conv = make_conversation(checkpoints=False)
    turn(conv, llm_server, "work", "echo 'print(2)' > app.py && rm old.txt && echo hi > new.txt")
    git(workspace, "status")  # let git bring its index up to date, as the user's tools would
    before = git_state(workspace)
    commit = before[2][:12]

    found = workspace_diff(conv)
    assert found.source is DiffSource.GIT
    assert f"commit {commit}" in found.note and "kept no checkpoints" in found.note
    assert summary(conv) == [
        ("app.py", "modified", 1, 1, False),
        ("new.txt", "added", 1, 0, False),
        ("old.txt", "deleted", 0, 1, False),
    ]
    assert git_state(workspace) == before
    assert git(workspace, "status", "--porcelain") == " M app.py\n D old.txt\n?? new.txt\n"


def test_git_that_could_run_the_repositorys_program_is_not_run(
    make_conversation: Factory, workspace: Path, tmp_path: Path
) -> None:
    repository(workspace)
    marker = tmp_path / "ran"
    monitor = tmp_path / "monitor.sh"
    monitor.write_text(f"#!/bin/sh\ntouch {marker}\n")
    monitor.chmod(0o755)
    git(workspace, "config", "core.fsmonitor", str(monitor))
    (workspace / "app.py").write_text("print(3)\n")
    conv = make_conversation(checkpoints=False)

    found = workspace_diff(conv)
    assert found.source is DiffSource.NONE and found.files == []
    assert "git was not run" in found.note and "core.fsmonitor" in found.note
    assert not marker.exists()


def test_no_checkpoints_and_no_repository_says_so(
    make_conversation: Factory, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    conv = make_conversation(checkpoints=False)
    found = workspace_diff(conv)
    assert found.source is DiffSource.NONE
    assert found.note == (
        "No diff can be shown: this conversation kept no checkpoints, and the workspace is "
        "not a git repository."
    )


def test_a_file_left_out_of_a_long_diff_is_read_alone(
    make_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = make_conversation(checkpoints=True)
    turn(conv, llm_server, "big", "seq 1 40000 > a.txt && echo hello > b.txt")
    found = workspace_diff(conv)
    assert found.cut and found.checkpoint_id is not None
    assert [(p.path, bool(p.text), p.cut) for p in found.files] == [
        ("a.txt", True, True),
        ("b.txt", False, False),
    ]
    alone = file_diff(conv, found.checkpoint_id, "b.txt")
    assert alone is not None
    assert (alone.path, alone.status, alone.added) == ("b.txt", "added", 1)
    assert alone.text.endswith("@@ -0,0 +1 @@\n+hello")


def test_a_secret_the_agent_wrote_into_a_file_is_masked(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation(checkpoints=True)
    conv.update_secrets({"DEPLOY_TOKEN": "tok-8f3a9c2e71d4"})
    turn(conv, llm_server, "save", "printf 'token=tok-8f3a%s\\n' 9c2e71d4 > .env.local")
    assert (workspace / ".env.local").read_text() == "token=tok-8f3a9c2e71d4\n"
    found = workspace_diff(conv)
    [patch] = found.files
    assert "tok-8f3a9c2e71d4" not in patch.text
    assert patch.text.endswith(f"+token={SECRET_MASK}")
    alone = file_diff(conv, str(found.checkpoint_id), ".env.local")
    assert alone is not None and "tok-8f3a9c2e71d4" not in alone.text
