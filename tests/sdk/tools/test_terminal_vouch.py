"""Allow rules run only what was analyzed: attacks on the persistent shell, through a real
conversation, a real bash (and bubblewrap where the sandbox matters) and real git.

Each attack prepares the shell or the workspace with a command that runs first (as a user
approved it: through the terminal itself), then the model asks for a command an allow rule
covers. That command must wait for the user, saying why, and what it would have run (a
marker file) must never run. The everyday path (`ls`, `git status`, `cd src && ls` in a
pristine shell) still runs without asking.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer
from sandboxed_bash import require_bwrap

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    ApprovalRule,
    ApprovalRulesPolicy,
    ConfirmRisky,
    Conversation,
    ConversationExecutionStatus,
    LocalConversation,
    ObservationEvent,
    Tool,
)
from ohtui.sdk.sandbox import SandboxConfig, SandboxMode
from ohtui.sdk.tools.terminal import TerminalAction, TerminalExecutor

ALLOWED = ["ls", "cat", "grep", "echo", "cd", "git status", "git log", "git diff", "git commit"]
MARK = "MARK"
EVIL = f"#!/bin/sh\ntouch {{ws}}/{MARK}\n"


class Harness:
    """One conversation under allow rules, its terminal, and its workspace."""

    def __init__(self, conversation: LocalConversation, server: ScriptedLLMServer, ws: Path):
        self.conversation = conversation
        self.server = server
        self.ws = ws
        conversation._ensure_agent_ready()  # the tools, resolved as the first run does
        tool = conversation.agent.tools_map["terminal"]
        assert isinstance(tool.executor, TerminalExecutor)
        self.terminal = tool.executor

    @property
    def marker(self) -> Path:
        return self.ws / MARK

    def prepare(self, command: str) -> str:
        """Run a command in the agent's shell, as an approved one runs; the marker is then
        removed (some preparations touch it as they run)."""
        observation = self.terminal(TerminalAction(command=command))
        self.marker.unlink(missing_ok=True)
        return observation.text

    def ask(self, command: str, *, then: str | None = None) -> ActionEvent:
        """The model asks for `command` (and says `then` once it ran); returns its action."""
        before = len(self.conversation.state.events)
        self.server.reply_tool_call("terminal", {"command": command})
        if then is not None:
            self.server.reply_text(then)
        self.conversation.send_message("go on")
        self.conversation.run()
        new = self.conversation.state.events[before:]
        [action] = [e for e in new if isinstance(e, ActionEvent)]
        return action

    def waits(self, command: str) -> str:
        """Ask for `command`, check that it waits and ran nothing; reject it; the reason."""
        action = self.ask(command)
        status = self.conversation.state.execution_status
        assert status is ConversationExecutionStatus.WAITING_FOR_CONFIRMATION, command
        assert not self.marker.exists(), f"{command} ran what the attack prepared"
        self.conversation.reject_pending_actions("no")
        return action.security_risk_reason or ""

    def runs(self, command: str) -> str:
        """Ask for `command`, check that it ran without asking; its output."""
        action = self.ask(command, then="done")
        status = self.conversation.state.execution_status
        assert status is ConversationExecutionStatus.FINISHED, action.security_risk_reason
        [observation] = [
            e
            for e in self.conversation.state.events
            if isinstance(e, ObservationEvent) and e.action_id == action.id
        ]
        return observation.observation.text


def evil(path: Path, ws: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(EVIL.format(ws=ws))
    path.chmod(0o755)


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def repository(path: Path) -> Path:
    """A repository with one commit, at `path`."""
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main", cwd=path)
    git("config", "user.email", "a@b.c", cwd=path)
    git("config", "user.name", "A", cwd=path)
    (path / "a.txt").write_text("one\n")
    git("add", "a.txt", cwd=path)
    git("commit", "-q", "-m", "first", cwd=path)
    return path


@pytest.fixture
def harness(
    llm: LLM,
    llm_server: ScriptedLLMServer,
    workspace: Path,
    persistence_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Harness]:
    home = workspace.parent / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # no global git configuration
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    for name in [n for n in os.environ if n.startswith("GIT_")]:
        monkeypatch.delenv(name)
    agent = Agent(llm=llm, tools=[Tool(name="terminal")])
    conversation = Conversation(
        agent=agent, workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )
    rules = [ApprovalRule(tool="terminal", command_prefix=p) for p in ALLOWED]
    conversation.set_confirmation_policy(ApprovalRulesPolicy(rules=rules, fallback=ConfirmRisky()))
    try:
        yield Harness(conversation, llm_server, workspace)
    finally:
        conversation.close()


# --- the everyday path ---------------------------------------------------------------------


def test_a_pristine_shell_runs_allowed_commands_without_asking(harness: Harness) -> None:
    repository(harness.ws)
    (harness.ws / "src").mkdir()
    (harness.ws / "src" / "main.py").write_text("print(1)\n")
    assert "a.txt" in harness.runs("ls")
    assert "On branch main" in harness.runs("git status")
    assert "main.py" in harness.runs("cd src && ls")
    assert "first" in harness.runs("git log --oneline")  # from src/, the same repository


def test_a_restarted_shell_is_trusted_again(harness: Harness) -> None:
    harness.prepare(f"ls() {{ touch {MARK}; }}")
    assert "changed the shell" in harness.waits("ls")
    harness.terminal(TerminalAction(command="", reset=True))
    harness.runs("ls")
    assert not harness.marker.exists()


# --- a shell prepared by an earlier command -------------------------------------------------

PREPARED = {
    "function": (f"ls() {{ touch {MARK}; }}", "ls"),
    "function cat": (f"cat() {{ touch {MARK}; }}", "cat a"),
    "builtin": (f'builtin() {{ touch {MARK}; command builtin "$@"; }}', "ls"),
    "declare": (f'declare() {{ touch {MARK}; command declare "$@"; }}', "ls"),
    "alias": (f"shopt -s expand_aliases; alias ls='touch {MARK}; ls'", "ls"),
    "alias cat": (f"shopt -s expand_aliases\nalias cat='touch {MARK}; cat'", "cat a"),
    "mapfile -C": (f"mapfile -C 'ls() {{ touch {MARK}; }}; :' -c 1 lines <<< x", "ls"),
    "trap DEBUG": (f"trap 'touch {MARK}' DEBUG", "ls"),
    "enable -f": ("enable -f ./nope.so ls 2>/dev/null; true", "ls"),
    "hash -p": ("hash -p ./bin/evil ls", "ls"),
    "set -k": (
        "set -k",
        "git status GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor "
        "GIT_CONFIG_VALUE_0=./fsmonitor.sh",
    ),
    "export GIT_CONFIG": (
        "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor "
        "GIT_CONFIG_VALUE_0=./fsmonitor.sh",
        "git status",
    ),
    "export PATH": ("export PATH=$PWD/.venv/bin:$PATH", "ls"),
    "source activate": ("source .venv/bin/activate", "ls"),
    "printf -v PATH": ('printf -v PATH "%s" "$PWD/.venv/bin:$PATH"', "ls"),
    "a stopped command": ("sleep 5", "ls"),
}


@pytest.mark.parametrize("name", list(PREPARED))
def test_a_prepared_shell_is_not_trusted(harness: Harness, name: str) -> None:
    ws = harness.ws
    repository(ws)
    evil(ws / "bin" / "evil", ws)
    evil(ws / "fsmonitor.sh", ws)
    evil(ws / ".venv" / "bin" / "ls", ws)
    (ws / ".venv" / "bin" / "activate").write_text(f'export PATH="{ws}/.venv/bin:$PATH"\n')
    setup, attack = PREPARED[name]
    if name == "a stopped command":
        harness.terminal(TerminalAction(command=setup, timeout=0.3))
    else:
        harness.prepare(setup)
    reason = harness.waits(attack)
    assert "changed the shell" in reason, reason


# --- a workspace executable, a background job ------------------------------------------------


@pytest.mark.parametrize("folder", [".venv/bin", "node_modules/.bin"])
def test_a_program_dropped_in_a_workspace_folder_on_path(
    harness: Harness, folder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{harness.ws / folder}:{os.environ['PATH']}")
    harness.prepare(f"mkdir -p {folder}")  # the shell starts with that PATH
    evil(harness.ws / folder / "grep", harness.ws)
    reason = harness.waits("grep x a")
    assert "commands may write" in reason, reason
    reason = harness.waits("ls")  # found after that folder: a drop would shadow it
    assert folder in reason, reason


@pytest.mark.parametrize(
    "job", ["sleep 30 &", "nohup sleep 30 >/dev/null 2>&1 &", "setsid -f sleep 30", "(sleep 30 &)"]
)
def test_a_background_job_of_an_earlier_command(harness: Harness, job: str) -> None:
    harness.prepare(job)
    assert "still running" in harness.waits("ls")


# --- git reading hostile configuration --------------------------------------------------------


def fsmonitor(repo: Path, ws: Path) -> None:
    evil(ws / "fsmonitor.sh", ws)
    git("config", "core.fsmonitor", str(ws / "fsmonitor.sh"), cwd=repo)


def test_git_status_after_cd_into_a_hostile_repository(harness: Harness) -> None:
    repository(harness.ws)
    lib = repository(harness.ws / "vendor" / "lib")
    fsmonitor(lib, harness.ws)
    assert "changes directory" in harness.waits("cd vendor/lib && git status")
    harness.prepare("cd vendor/lib")  # cd does not change the shell; git there is checked
    assert "core.fsmonitor" in harness.waits("git status")


def test_git_dash_c_into_another_directory(harness: Harness) -> None:
    harness.conversation.set_confirmation_policy(
        ApprovalRulesPolicy(rules=[ApprovalRule(tool="terminal", command_prefix="git")])
    )
    repository(harness.ws)
    fsmonitor(repository(harness.ws / "sub"), harness.ws)
    # The rule for `git` does not cover `-C`, which the read-only table does not know as a
    # read: the action waits whatever the shell would do (and the fsmonitor never runs).
    harness.waits("git -C sub status")


@pytest.mark.parametrize("how", ["include.path", "includeIf", "written earlier"])
def test_git_configuration_that_reads_or_runs_more(harness: Harness, how: str) -> None:
    repo = repository(harness.ws)
    evil(harness.ws / "fsmonitor.sh", harness.ws)
    other = harness.ws / "other.cfg"
    other.write_text(f"[core]\n\tfsmonitor = {harness.ws / 'fsmonitor.sh'}\n")
    if how == "include.path":
        git("config", "include.path", str(other), cwd=repo)
    elif how == "includeIf":
        git("config", "includeIf.gitdir:/.path", str(other), cwd=repo)
    else:
        harness.prepare(f"git config core.fsmonitor {harness.ws / 'fsmonitor.sh'}")
    reason = harness.waits("git status")
    assert "configuration" in reason, reason


def test_git_pager_and_textconv_from_the_repository(harness: Harness) -> None:
    repo = repository(harness.ws)
    git("config", "core.pager", f"touch {MARK}; cat", cwd=repo)
    assert "core.pager" in harness.waits("git log")
    git("config", "--unset", "core.pager", cwd=repo)
    evil(harness.ws / "textconv.sh", harness.ws)
    git("config", "diff.x.textconv", str(harness.ws / "textconv.sh"), cwd=repo)
    (harness.ws / ".gitattributes").write_text("*.txt diff=x\n")
    (harness.ws / "a.txt").write_text("two\n")
    assert "diff.x.textconv" in harness.waits("git diff")


def test_git_commit_with_a_hook(harness: Harness) -> None:
    repository(harness.ws)
    harness.prepare(f"printf '#!/bin/sh\\ntouch {MARK}\\n' > .git/hooks/pre-commit")
    harness.prepare("chmod +x .git/hooks/pre-commit")
    assert "hook" in harness.waits("git commit --allow-empty -m x")


# --- in the sandbox ---------------------------------------------------------------------------


def test_in_the_sandbox(harness: Harness) -> None:
    require_bwrap()
    harness.conversation.set_sandbox(SandboxConfig(mode=SandboxMode.WORKSPACE_WRITE))
    repository(harness.ws)
    assert "a.txt" in harness.runs("ls")
    assert "nothing to commit" in harness.runs("git status")
    harness.prepare(f"alias ls='touch {harness.ws / MARK}'; shopt -s expand_aliases")
    assert "changed the shell" in harness.waits("ls")
