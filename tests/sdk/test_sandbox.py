"""The sandbox with real bubblewrap: what the agent's shell and file editor may touch.

The sandbox gives commands a private /tmp, so the fake home (with credential files) and the
workspace live outside /tmp, in a scratch directory beside the tests. Writes the sandbox
stops are checked on the host, where they must not appear.
"""

from __future__ import annotations

import json
import shlex
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from sandbox_shell import scratch_root
from sandboxed_bash import require_bwrap

from ohtui.sdk import (
    LLM,
    Agent,
    AlwaysConfirm,
    ConfirmRisky,
    Conversation,
    LocalConversation,
    NeverConfirm,
    Tool,
)
from ohtui.sdk.conversation import ConversationExecutionStatus as Status
from ohtui.sdk.event import ObservationEvent
from ohtui.sdk.hooks import HookConfig
from ohtui.sdk.sandbox import Sandbox, SandboxConfig, SandboxMode, probe
from ohtui.sdk.tools.file_editor import FileEditorAction
from ohtui.sdk.tools.file_editor.editor import FileEditorExecutor
from ohtui.sdk.tools.terminal.session import BashSession


@pytest.fixture(autouse=True)
def bwrap() -> None:
    require_bwrap()


SCRATCH = scratch_root()


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A scratch directory outside /tmp (which the sandbox replaces with a private one)."""
    SCRATCH.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(dir=SCRATCH))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def home(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = outside_tmp / "home"
    (path / ".ssh").mkdir(parents=True)
    (path / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    (path / ".netrc").write_text("machine x password hunter2")
    (path / "precious.txt").write_text("keep me")
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def project(outside_tmp: Path, home: Path) -> Path:
    path = outside_tmp / "projects" / "app"
    path.mkdir(parents=True)
    return path


def session(project: Path, **config: Any) -> BashSession:
    return BashSession(
        shell="bash",
        working_dir=str(project),
        sandbox=Sandbox(SandboxConfig(**config), str(project)),
    )


def run(shell: BashSession, command: str) -> tuple[int | None, str]:
    out: list[bytes] = []
    result = shell.run(command, 20, out.append)
    return result.exit_code, b"".join(out).decode()


@pytest.fixture
def shell(project: Path) -> Iterator[BashSession]:
    confined = session(project)
    yield confined
    confined.close()


# --- what the shell may touch --------------------------------------------------------------


def test_the_workspace_is_writable(shell: BashSession, project: Path) -> None:
    assert run(shell, "mkdir -p src && echo hi > src/a.txt && cat src/a.txt") == (0, "hi\n")
    assert (project / "src" / "a.txt").read_text() == "hi\n"


@pytest.mark.parametrize(
    "command",
    [
        "touch ~/escaped",
        "touch /etc/ohtui-escaped",
        "touch /usr/ohtui-escaped",
        "touch ../escaped",
        "cd .. && touch escaped",
        "echo x >> ~/precious.txt",
        "rm -rf ~/precious.txt",
    ],
)
def test_writes_outside_the_workspace_fail(
    shell: BashSession, project: Path, home: Path, command: str
) -> None:
    code, output = run(shell, command)
    assert code != 0, output
    assert "Read-only file system" in output
    assert not (home / "escaped").exists()
    assert not (project.parent / "escaped").exists()
    assert not Path("/etc/ohtui-escaped").exists() and not Path("/usr/ohtui-escaped").exists()
    assert (home / "precious.txt").read_text() == "keep me"


def test_tmp_is_private(shell: BashSession, tmp_path: Path) -> None:
    name = f"/tmp/ohtui-sandbox-{tmp_path.name}"
    assert run(shell, f"echo x > {name} && cat {name}") == (0, "x\n")
    assert not Path(name).exists()


def test_credential_paths_are_hidden_even_from_reads(shell: BashSession) -> None:
    _, output = run(shell, "cat ~/.ssh/id_ed25519; ls -A ~/.ssh; cat ~/.netrc; echo done")
    assert "PRIVATE KEY" not in output and "hunter2" not in output
    assert "id_ed25519" in output  # only in the error: the directory looks empty
    assert output.rstrip().endswith("done")


def test_the_session_keeps_cwd_and_variables(shell: BashSession, project: Path) -> None:
    run(shell, "mkdir sub && cd sub && export A=1 && B=2")
    assert run(shell, 'pwd; echo "$A $B"') == (0, f"{project}/sub\n1 2\n")


def test_the_network_is_off_unless_allowed(project: Path) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    probe_line = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    offline, online = session(project), session(project, network=True)
    try:
        code, output = run(offline, probe_line)
        assert code != 0 and "connected" not in output
        assert run(online, probe_line) == (0, "connected\n")
    finally:
        offline.close()
        online.close()
        listener.close()


def test_read_only_mode_writes_nothing(project: Path) -> None:
    confined = session(project, mode=SandboxMode.READ_ONLY)
    try:
        code, output = run(confined, "touch inside")
        assert code != 0 and "Read-only file system" in output
        assert not (project / "inside").exists()
        assert run(confined, "ls -a")[0] == 0
    finally:
        confined.close()


def test_an_interrupt_stops_the_whole_line_inside_the_sandbox(
    shell: BashSession, project: Path
) -> None:
    threading.Timer(0.5, shell.interrupt).start()
    out: list[bytes] = []
    result = shell.run("sleep 30; touch SIDE_EFFECT", 20, out.append)
    assert result.interrupted
    assert run(shell, "sleep 0.3; ls")[1] == ""
    assert not (project / "SIDE_EFFECT").exists()


# --- the file editor obeys the same boundary ------------------------------------------------


def test_the_file_editor_keeps_to_the_sandbox(project: Path, home: Path) -> None:
    sandbox = Sandbox(SandboxConfig(), str(project))
    editor = FileEditorExecutor(str(project), sandbox=lambda: sandbox)
    made = editor(FileEditorAction(command="create", path="ok.py", file_text="x = 1\n"))
    assert not made.is_error and (project / "ok.py").exists()
    outside = editor(FileEditorAction(command="create", path=str(home / "evil"), file_text="x"))
    assert outside.is_error and "outside the sandbox" in outside.text
    assert not (home / "evil").exists()
    secret = editor(FileEditorAction(command="view", path="~/.ssh/id_ed25519"))
    assert secret.is_error and "hidden by the sandbox" in secret.text
    assert "PRIVATE KEY" not in secret.text


# --- through a conversation ----------------------------------------------------------------


@pytest.fixture
def make_conversation(llm: LLM, project: Path, persistence_dir: Path) -> Iterator[Any]:
    made: list[LocalConversation] = []

    def make(**kwargs: Any) -> LocalConversation:
        agent = Agent(llm=llm, tools=[Tool(name="terminal"), Tool(name="file_editor")])
        conversation = Conversation(
            agent=agent,
            workspace=project,
            persistence_dir=persistence_dir,
            visualizer=None,
            **kwargs,
        )
        made.append(conversation)
        return conversation

    yield make
    for conversation in made:
        conversation.close()


def observations(conversation: LocalConversation) -> list[str]:
    return [
        e.observation.text for e in conversation.state.events if isinstance(e, ObservationEvent)
    ]


def test_rm_rf_home_rated_low_deletes_nothing_outside(
    make_conversation: Any, llm_server: ScriptedLLMServer, home: Path, project: Path
) -> None:
    (project / "mine.txt").write_text("workspace file")
    conversation = make_conversation(sandbox=SandboxConfig())
    conversation.set_confirmation_policy(NeverConfirm())
    llm_server.reply_tool_call(
        "terminal", {"command": "rm -rf ~ /etc/hostname", "security_risk": "LOW"}
    )
    llm_server.reply_text("Done.")
    conversation.send_message("clean up")
    conversation.run()
    assert (home / "precious.txt").read_text() == "keep me"
    assert (home / ".ssh" / "id_ed25519").exists()
    [text] = observations(conversation)
    assert "[sandbox: this command ran in the sandbox (workspace-write, no network)" in text
    assert "/sandbox" in text


def test_the_user_approves_one_command_outside_the_sandbox(
    make_conversation: Any, llm_server: ScriptedLLMServer, home: Path
) -> None:
    conversation = make_conversation(sandbox=SandboxConfig())
    conversation.set_confirmation_policy(ConfirmRisky(confirm_unknown=True))
    llm_server.reply_tool_call("terminal", {"command": "echo out > ~/approved.txt"})
    llm_server.reply_tool_call("terminal", {"command": "echo again > ~/again.txt"})
    llm_server.reply_text("Done.")
    conversation.send_message("write it")
    conversation.run()
    assert conversation.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    [waiting] = conversation.state.get_unmatched_actions(conversation.state.events)
    conversation.approve_outside_sandbox([waiting.id])
    conversation.run()
    assert (home / "approved.txt").read_text() == "out\n"
    assert "ran in a fresh, unconfined shell" in observations(conversation)[0]
    # the next command is confined again
    conversation.set_confirmation_policy(NeverConfirm())
    conversation.run()
    assert not (home / "again.txt").exists()


def test_an_agent_hooks_tools_run_in_the_conversations_sandbox(
    llm: LLM, llm_server: ScriptedLLMServer, home: Path, project: Path, outside_tmp: Path
) -> None:
    store = outside_tmp / "conversations"  # outside /tmp: the sandbox could see it there
    hooks = HookConfig.from_dict(
        {"PreToolUse": [{"hooks": [{"type": "agent", "name": "look", "tools": ["terminal"]}]}]}
    )
    agent = Agent(llm=llm, tools=[Tool(name="terminal")])
    with Conversation(
        agent=agent,
        workspace=project,
        persistence_dir=store,
        visualizer=None,
        sandbox=SandboxConfig(),
        hook_config=hooks,
    ) as conversation:
        conversation.set_confirmation_policy(NeverConfirm())
        llm_server.reply_tool_call("terminal", {"command": "echo agent > mine.txt"})  # the agent
        llm_server.reply_tool_call(  # the hook's agent
            "terminal", {"command": f"ls {store}; echo hook > ~/escaped.txt"}
        )
        llm_server.reply_tool_call("finish", {"message": '{"decision": "allow", "reason": "ok"}'})
        llm_server.reply_text("Done.")
        conversation.send_message("write it")
        conversation.run()
        assert conversation.state.execution_status is Status.FINISHED
    assert (store / "conversations.db").exists()
    assert not (home / "escaped.txt").exists()
    assert (project / "mine.txt").read_text() == "agent\n"
    hook_saw = json.dumps(llm_server.requests[2]["messages"])
    assert "[sandbox: this command ran in the sandbox" in hook_saw
    assert "conversations.db" not in hook_saw


SWAP_FOREVER = (
    "import ctypes, sys; libc = ctypes.CDLL(None); a, b = sys.argv[1].encode(), "
    "sys.argv[2].encode()\nwhile True: libc.renameat2(-100, a, -100, b, 2)"
)


def test_a_low_background_swap_never_lets_the_editor_write_outside(
    make_conversation: Any, llm_server: ScriptedLLMServer, home: Path, project: Path
) -> None:
    """The issue's attack, end to end: a LOW command leaves a loop running in the sandbox
    that swaps a workspace folder with a link to the home folder, then the model creates a
    file in that folder, again and again. The editor runs in ohtui's own process, outside the
    sandbox: only where it checks what it opened keeps the file out of the home folder."""
    tries = 100
    # The same call a hundred times is what the stuck detector is for: here it is the attack.
    conversation = make_conversation(sandbox=SandboxConfig(), stuck_detection=False)
    conversation.set_confirmation_policy(NeverConfirm())
    swapper = f"/usr/bin/python3 -c {shlex.quote(SWAP_FOREVER)} conf conf.alt"
    llm_server.reply_tool_call(
        "terminal",
        {
            "command": f"mkdir conf && ln -s {home} conf.alt && "
            f"(nohup {swapper} >/dev/null 2>&1 &) && echo started",
            "security_risk": "LOW",
        },
    )
    create = {"command": "create", "path": "conf/.bash_aliases", "file_text": "alias ls=rm\n"}
    llm_server.reply_tool_calls([("file_editor", create)] * tries)
    llm_server.reply_text("Done.")
    conversation.send_message("set up aliases")
    conversation.run()
    texts = observations(conversation)
    assert "started" in texts[0]
    assert not (home / ".bash_aliases").exists(), "the editor wrote ~/.bash_aliases"
    assert len(texts) == tries + 1  # each try answered, none crashed
    # The race ran: the folder was the link to the home folder at some tries (whether any
    # landed inside, between swaps, is up to the scheduler).
    assert any("is outside the sandbox" in text for text in texts[1:]), texts[1:3]


def test_an_edit_the_sandbox_refuses_can_be_approved_outside_it_once(
    make_conversation: Any, llm_server: ScriptedLLMServer, home: Path, project: Path
) -> None:
    """`o` on an edit: offered only where the sandbox alone refuses it, and then it does
    what it says (the file is written); the next edit is confined again, and ohtui's own
    files stay out of reach even outside the sandbox."""
    conversation = make_conversation(sandbox=SandboxConfig(mode=SandboxMode.READ_ONLY))
    conversation.set_confirmation_policy(AlwaysConfirm())
    create = {"command": "create", "path": "notes.txt", "file_text": "approved\n"}
    again = {"command": "create", "path": "again.txt", "file_text": "confined\n"}
    llm_server.reply_tool_call("file_editor", create)
    llm_server.reply_tool_call("file_editor", again)
    llm_server.reply_text("Done.")
    conversation.send_message("write notes")
    conversation.run()
    [waiting] = conversation.state.get_unmatched_actions(conversation.state.events)
    assert conversation.outside_sandbox_matters(waiting)
    conversation.approve_outside_sandbox([waiting.id])
    conversation.run()
    assert (project / "notes.txt").read_text() == "approved\n"
    [second] = conversation.state.get_unmatched_actions(conversation.state.events)
    conversation.set_confirmation_policy(NeverConfirm())
    conversation.run()
    assert not (project / "again.txt").exists()
    assert "read-only" in observations(conversation)[-1]
    assert second.id != waiting.id


def test_outside_the_sandbox_is_offered_only_where_it_changes_something(
    make_conversation: Any, llm_server: ScriptedLLMServer, project: Path
) -> None:
    conversation = make_conversation()
    data = project.parent / "ohtui-data"  # ohtui's own files, as a front end names them
    data.mkdir()
    (data / "keys.json").write_text("{}")
    own = str(data / "keys.json")
    conversation.set_sandbox(SandboxConfig(), private_paths=(str(data),))  # workspace-write
    conversation.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "echo hi"}),
            ("file_editor", {"command": "create", "path": "in.txt", "file_text": "x"}),
            ("file_editor", {"command": "create", "path": "/etc/ohtui-x", "file_text": "x"}),
            ("file_editor", {"command": "view", "path": own}),
        ]
    )
    conversation.send_message("go")
    conversation.run()
    terminal, inside, outside, ohtuis = conversation.state.get_unmatched_actions(
        conversation.state.events
    )
    assert conversation.outside_sandbox_matters(terminal)  # the shell is confined
    assert not conversation.outside_sandbox_matters(inside)  # the sandbox allows it anyway
    assert conversation.outside_sandbox_matters(outside)  # only the sandbox refuses it
    assert not conversation.outside_sandbox_matters(ohtuis)  # refused in every mode
    conversation.set_sandbox(None)
    assert not conversation.outside_sandbox_matters(terminal)  # no sandbox: nothing to lift


def test_approving_outside_needs_a_waiting_action(make_conversation: Any) -> None:
    conversation = make_conversation(sandbox=SandboxConfig())
    with pytest.raises(ValueError, match="not pending"):
        conversation.approve_outside_sandbox(["nope"])


def test_switching_the_sandbox_restarts_the_shell_and_says_so(
    make_conversation: Any, llm_server: ScriptedLLMServer, home: Path
) -> None:
    conversation = make_conversation(sandbox=SandboxConfig())
    conversation.set_confirmation_policy(NeverConfirm())
    llm_server.reply_tool_call("terminal", {"command": "touch ~/one.txt"})
    llm_server.reply_text("Blocked.")
    conversation.send_message("one")
    conversation.run()
    assert not (home / "one.txt").exists()
    conversation.set_sandbox(SandboxConfig(mode=SandboxMode.OFF))
    assert conversation.sandbox is not None and conversation.sandbox.mode is SandboxMode.OFF
    llm_server.reply_tool_call("terminal", {"command": "touch ~/two.txt"})
    llm_server.reply_text("Done.")
    conversation.send_message("two")
    conversation.run()
    assert (home / "two.txt").exists()
    assert (
        "The sandbox changed: this command runs in a new shell without a sandbox"
        in (observations(conversation)[-1])
    )


def test_the_conversation_store_is_hidden_but_its_own_directory_is_writable(
    make_conversation: Any, llm_server: ScriptedLLMServer, persistence_dir: Path
) -> None:
    conversation = make_conversation(sandbox=SandboxConfig())
    conversation.set_confirmation_policy(NeverConfirm())
    own = conversation.state.persistence_dir
    llm_server.reply_tool_call(
        "terminal",
        {"command": f"ls {persistence_dir}; touch {own}/note && echo wrote"},
    )
    llm_server.reply_text("Done.")
    conversation.send_message("look")
    conversation.run()
    [text] = observations(conversation)
    assert "conversations.db" not in text
    assert "wrote" in text


# --- availability ----------------------------------------------------------------------------


def test_a_missing_bwrap_is_reported_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    probe.cache_clear()
    monkeypatch.setenv("PATH", "/nonexistent")
    try:
        missing = probe()
    finally:
        probe.cache_clear()
    assert not missing.available
    assert "bubblewrap (bwrap) is not installed" in missing.message
    assert "install bubblewrap" in missing.message


def test_the_probe_is_quick_and_cached() -> None:
    probe.cache_clear()
    first = probe()
    assert first.available
    assert first.probe_ms < 500
    assert probe() is first


def test_a_command_the_network_ban_stops_is_explained(project: Path) -> None:
    from ohtui.sdk.tools.terminal import TerminalAction, TerminalExecutor

    sandbox = Sandbox(SandboxConfig(), str(project))
    executor = TerminalExecutor(working_dir=str(project), sandbox=lambda: sandbox)
    try:
        observation = executor(TerminalAction(command="exec 3<>/dev/tcp/192.0.2.1/80"))
    finally:
        executor.close()
    assert observation.is_error
    assert "Network is unreachable" in observation.text
    assert "cannot reach the network" in observation.text
    assert "approve the command to run outside the sandbox" in observation.text
