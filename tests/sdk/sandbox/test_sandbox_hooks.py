"""A command hook runs in the same sandbox as the agent's shell, not a weaker one: no abstract
socket with the network shared, no variable naming a hidden socket, a TMPDIR it can write
with the workspace directly in /tmp, and a background hook that outlives the run (the
thread) that started it.

A hook may run what the agent wrote in the workspace, so each check is what a hostile
script there would try, run by real bubblewrap.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ohtui.sdk.hooks.config import HookDefinition
from ohtui.sdk.hooks.runner import HookExecutor
from ohtui.sdk.hooks.types import HookEvent, HookEventType
from ohtui.sdk.sandbox import Sandbox, SandboxConfig, landlock

EVENT = HookEvent(event_type=HookEventType.POST_TOOL_USE, tool_name="terminal")


def executor(project: Path, **config: object) -> HookExecutor:
    sandbox = Sandbox(SandboxConfig.model_validate(config), str(project))
    return HookExecutor(str(project), command_sandbox=lambda: sandbox)


def hook(command: str, *, background: bool = False) -> HookDefinition:
    return HookDefinition.model_validate({"command": command, "timeout": 20, "async": background})


@pytest.fixture
def abstract_listener() -> Iterator[tuple[socket.socket, list[int]]]:
    """An abstract Unix socket served outside the sandbox (as X11's `@/tmp/.X11-unix/X0`)."""
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(f"\0ohtui-hook-test-{os.getpid()}")
    sock.listen()
    reached: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            reached.append(1)
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield sock, reached
    sock.close()


def test_a_hook_with_the_network_shared_reaches_no_abstract_socket(
    project: Path, abstract_listener: tuple[socket.socket, list[int]]
) -> None:
    if landlock.abi_version() < landlock.SCOPE_ABI:
        pytest.skip("this kernel has no Landlock scopes (Linux 6.12+)")
    sock, reached = abstract_listener
    name = sock.getsockname()[1:].decode()
    result = executor(project, network=True).execute(
        hook(
            "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); "
            f's.connect(b"\\0{name}"); print("REACHED")\''
        ),
        EVENT,
    )
    assert "REACHED" not in result.stdout and not reached, result


def test_a_hook_gets_no_variable_naming_a_hidden_socket(
    project: Path, outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = outside_tmp / "run"
    runtime.mkdir(mode=0o700)
    agent = socket.socket(socket.AF_UNIX)
    agent.bind(str(runtime / "ssh-agent.sock"))
    agent.listen()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("SSH_AUTH_SOCK", str(runtime / "ssh-agent.sock"))
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={runtime}/bus,guid=1")
    try:
        result = executor(project).execute(
            hook('echo "[$SSH_AUTH_SOCK][$DBUS_SESSION_BUS_ADDRESS][$XDG_RUNTIME_DIR]"'), EVENT
        )
    finally:
        agent.close()
    assert result.success, result
    assert result.stdout.strip() == "[][][]"


@pytest.fixture
def in_tmp() -> Iterator[Path]:
    """A workspace directly in /tmp, as `cd /tmp && mkdir proj && ohtui` makes."""
    path = Path(tempfile.mkdtemp(prefix="ohtui-ws-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_hook_in_a_workspace_directly_in_tmp_can_write_its_temp_files(in_tmp: Path) -> None:
    result = executor(in_tmp).execute(hook('f=$(mktemp) && echo ok > "$f" && cat "$f"'), EVENT)
    assert result.success and result.stdout.strip() == "ok", result


def test_a_background_hook_outlives_the_run_that_started_it(project: Path) -> None:
    hooks = executor(project)

    # Each run of the conversation is a thread of its own, which ends with the run.
    def run_on() -> None:
        hooks.execute(hook("sleep 2; echo done > ALIVE", background=True), EVENT)
        time.sleep(0.5)  # the run goes on a little: the hook is up when its thread ends

    run = threading.Thread(target=run_on)
    run.start()
    run.join()
    deadline = time.monotonic() + 15
    while not (project / "ALIVE").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    hooks.async_process_manager.cleanup_all()
    assert (project / "ALIVE").exists()
