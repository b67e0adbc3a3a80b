"""What a sandboxed command reports as done is done where the user looks, wherever the
workspace and ohtui live: a workspace in /tmp (the sandbox's /tmp is private), ohtui
installed under /tmp, a slow machine, a sandbox that cannot start at all."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_shell import run, sandboxed

ESCAPES = [
    "touch ../x && echo wrote",
    "echo hi > ../x && echo wrote",
    "mkdir ../x && echo wrote",
    "cp /etc/hostname ../x && echo wrote",
    'python3 -c \'open("../x", "w").write("1")\' && echo wrote',
    "cd .. && touch x && echo wrote",
    "ln -s / ../x && echo wrote",
]


@pytest.fixture
def in_tmp() -> Iterator[Path]:
    """A folder directly in /tmp, as `cd /tmp && mkdir proj && ohtui` makes."""
    path = Path(tempfile.mkdtemp(prefix="ohtui-ws-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("escape", ESCAPES)
@pytest.mark.parametrize("depth", ["deep", "direct"])
def test_a_write_beside_a_workspace_in_tmp_fails_loudly(
    escape: str, depth: str, in_tmp: Path, tmp_path: Path
) -> None:
    workspace = in_tmp if depth == "direct" else tmp_path / "a" / "b" / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    shell = sandboxed(workspace)
    try:
        code, out = run(shell, escape)
        _, inside = run(shell, f"cd {workspace} && echo in > mine.txt && cat mine.txt")
    finally:
        shell.close()
    assert code != 0 and "wrote" not in out, out
    assert not (workspace.parent / "x").exists()  # nothing landed, nothing claimed
    assert inside.strip() == "in" and (workspace / "mine.txt").read_text() == "in\n"


def test_scratch_space_still_works_with_a_workspace_directly_in_tmp(in_tmp: Path) -> None:
    shell = sandboxed(in_tmp)
    try:
        code, out = run(
            shell,
            'f=$(mktemp) && echo ok > "$f" && cat "$f" && '
            "python3 -c 'import tempfile; print(tempfile.mkdtemp())'",
        )
    finally:
        shell.close()
    assert code == 0 and out.startswith("ok\n"), out


@pytest.fixture
def venv_in_tmp() -> Iterator[Path]:
    """An interpreter under /tmp that imports this ohtui: as a clone or install in /tmp."""
    root = Path(tempfile.mkdtemp(prefix="ohtui-install-", dir="/tmp"))
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", root / "venv"], check=True, timeout=120
    )
    site = subprocess.run(
        [root / "venv/bin/python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = [str(Path(__file__).resolve().parents[3]), sysconfig.get_path("purelib")]
    Path(site, "ohtui-here.pth").write_text("\n".join(ours) + "\n")
    yield root / "venv" / "bin" / "python"
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("mode", ["workspace-write", "read-only", "off"])
def test_ohtui_installed_under_tmp_runs_sandboxed_commands(
    mode: str, venv_in_tmp: Path, project: Path
) -> None:
    script = textwrap.dedent(
        f"""
        from ohtui.sdk.sandbox import Sandbox, SandboxConfig
        from ohtui.sdk.tools.terminal.session import BashSession
        box = Sandbox(SandboxConfig(mode={mode!r}), {str(project)!r})
        problem = box.check(["bash", "--noprofile", "--norc"])
        shell = BashSession(shell="bash", working_dir={str(project)!r}, sandbox=box)
        out = []
        result = shell.run("echo ran-$((6*7))", 30, out.append)
        # A program of that install, found on PATH, as a project's MCP server or hook runs.
        shell.run("python -c 'import ohtui.sdk.sandbox; print(7)'", 30, out.append)
        shell.close()
        import os, subprocess, sys
        launch = box.launch([sys.executable, "-c", "import ohtui; print(8)"])
        server = subprocess.run(
            launch.wrapped_argv(), env=launch.environment(os.environ),
            capture_output=True, text=True, check=False,
        )
        print(problem, result.exit_code, b"".join(out).decode().split(), server.stdout.strip())
        """
    )
    env = {**os.environ, "PATH": f"{venv_in_tmp.parent}:{os.environ['PATH']}"}
    done = subprocess.run(
        [venv_in_tmp, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert done.stdout.strip() == "None 0 ['ran-42', '7'] 8", done.stdout + done.stderr


@pytest.fixture
def slow_bwrap(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bwrap as on a machine whose two cores are busy: 6 s to start anything."""
    real = shutil.which("bwrap")
    assert real is not None
    slow = outside_tmp / "bin"
    slow.mkdir()
    (slow / "bwrap").write_text(f'#!/bin/sh\nsleep 6\nexec {real} "$@"\n')
    (slow / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{slow}:{os.environ['PATH']}")


def test_a_slow_sandbox_start_is_waited_for_and_the_shell_is_the_real_one(
    project: Path, slow_bwrap: None
) -> None:
    shell = sandboxed(project)
    try:
        code, out = run(shell, "echo started && touch done.txt")
        stopped = shell.run("export KEEP=kept; sleep 30", 1, lambda _: None)
        _, kept = run(shell, "echo $KEEP")
    finally:
        shell.close()
    assert code == 0 and out.strip() == "started", out
    assert (project / "done.txt").exists()
    # A stop ends the command, not the shell: the pid it signals is bash's own.
    assert stopped.timed_out and not stopped.shell_exited and not stopped.shell_killed
    assert kept.strip() == "kept"


def test_a_slow_machine_does_not_lose_the_sandbox(slow_bwrap: None) -> None:
    from ohtui.sdk.sandbox import probe

    probe.cache_clear()
    try:
        availability = probe()
    finally:
        probe.cache_clear()
    assert availability.available, availability.message


def test_a_sandbox_that_cannot_start_says_why_and_is_not_claimed(
    project: Path, outside_tmp: Path, monkeypatch: pytest.MonkeyPatch, llm_server: object
) -> None:
    from ohtui.opening.sandbox import install_sandbox
    from ohtui.sdk import LLM, Agent, Conversation
    from ohtui.sdk.sandbox import SandboxConfig, SandboxMode, probe

    probe()  # the real bwrap works here; only the shell's start fails below
    broken = outside_tmp / "bin"
    broken.mkdir()
    (broken / "bwrap").write_text(
        f'#!/bin/sh\ncase "$*" in *--noprofile*) '
        'echo "bwrap: Creating new namespace failed: No space left on device" >&2; exit 1;; '
        f'esac\nexec {shutil.which("bwrap")} "$@"\n'
    )
    (broken / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{broken}:{os.environ['PATH']}")
    llm = LLM(model="openai/x", base_url="http://127.0.0.1:9/v1", api_key="k")
    conversation = Conversation(agent=Agent(llm=llm, tools=[]), workspace=str(project))
    try:
        notice = install_sandbox(conversation, SandboxConfig(mode=SandboxMode.WORKSPACE_WRITE))
        config = conversation.sandbox
    finally:
        conversation.close()
    assert notice is not None and "No space left on device" in notice, notice
    assert config is not None and config.mode is SandboxMode.OFF


@pytest.mark.parametrize("network", [False, True])
def test_the_loaders_variables_act_inside_only(
    network: bool, project: Path, outside_tmp: Path
) -> None:
    """LD_PRELOAD, LD_DEBUG and the like, given to a program (a server's `env`, a hook's),
    must not act on bubblewrap or the wrapper that start it, outside the sandbox: there a
    library the agent wrote would run unconfined. LD_DEBUG_OUTPUT shows who obeyed them:
    the folder it names is outside what the sandbox may write."""
    from ohtui.sdk.sandbox import Sandbox, SandboxConfig

    log = outside_tmp / "loader"
    log.mkdir()
    env = {**os.environ, "LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": str(log / "debug")}
    env["GCONV_PATH"] = str(project)
    launch = Sandbox(SandboxConfig(network=network), str(project)).launch(
        ["sh", "-c", 'echo "VARS $LD_DEBUG $GCONV_PATH"'], env
    )
    done = subprocess.run(
        launch.wrapped_argv(),
        env=launch.environment(env),
        preexec_fn=launch.before_exec,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    [line] = [line for line in done.stdout.splitlines() if line.startswith("VARS")]
    assert line.split() == ["VARS", "libs", str(project)], done.stderr  # the program has them
    assert not list(log.iterdir())  # and nothing outside obeyed them
