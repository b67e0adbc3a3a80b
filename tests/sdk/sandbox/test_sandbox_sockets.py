"""No channel out of the sandbox through another service's socket: the session bus and the
keyring behind it, ssh and gpg agents, anything listening in XDG_RUNTIME_DIR, /run or the
home folder, abstract sockets; unless the user opts in to one, by path or variable.

Each try connects for real, from inside the sandbox, to a socket a process outside serves.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_shell import run, sandboxed
from secret_service import start_secret_service

CONNECT = (
    "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); "
    's.connect(sys.argv[1]); s.sendall(b"hi"); print("REACHED", s.recv(9).decode())\' '
)


def _landlock_scopes() -> bool:
    from ohtui.sdk.sandbox import landlock

    return landlock.abi_version() >= landlock.SCOPE_ABI


class Listener:
    """A Unix socket server outside the sandbox that answers "yes" to whoever connects."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(address)
        self.sock.listen()
        self.reached = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.reached += 1
            with conn:
                conn.recv(9)
                conn.sendall(b"yes")

    def close(self) -> None:
        self.sock.close()
        if not self.address.startswith("\0"):
            with contextlib.suppress(OSError):
                os.unlink(self.address)


@pytest.fixture
def listeners() -> Iterator[list[Listener]]:
    made: list[Listener] = []
    yield made
    for listener in made:
        listener.close()


def serve(listeners: list[Listener], address: str | Path) -> Listener:
    path = str(address)
    if not path.startswith("\0"):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    listener = Listener(path)
    listeners.append(listener)
    return listener


@pytest.fixture
def runtime_dir(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An XDG_RUNTIME_DIR outside /tmp, as /run/user/UID is."""
    path = outside_tmp / "run"
    path.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))
    return path


@pytest.mark.parametrize(
    "where",
    [
        "run/bus",  # the session bus, where the keyring answers
        "run/keyring/ssh",  # gnome-keyring's ssh agent
        "run/gnupg/S.gpg-agent",
        "run/podman/podman.sock",
        "run/docker.sock",
        "run/vscode-ipc-1.sock",
        "run/wayland-0",
        "home/.1password/agent.sock",
        "home/.local/share/docker.sock",
        "home/.cache/some-daemon/ipc.sock",
        "home/app/.dev-db.sock",  # served from outside, in the workspace
        "srv/mysqld.sock",
    ],
)
def test_no_socket_served_outside_the_sandbox_answers_inside(
    where: str, outside_tmp: Path, runtime_dir: Path, project: Path, listeners: list[Listener]
) -> None:
    listener = serve(listeners, outside_tmp / where)
    shell = sandboxed(project)
    try:
        code, out = run(shell, CONNECT + listener.address)
    finally:
        shell.close()
    assert "REACHED" not in out and listener.reached == 0, out
    assert code != 0


def test_a_socket_the_agent_makes_in_the_workspace_still_works(project: Path) -> None:
    shell = sandboxed(project)
    script = (
        "import socket,threading\n"
        "s=socket.socket(socket.AF_UNIX); s.bind('own.sock'); s.listen()\n"
        "threading.Thread(target=lambda: s.accept()[0].sendall(b'ok'), daemon=True).start()\n"
        "c=socket.socket(socket.AF_UNIX); c.connect('own.sock'); print('OWN', c.recv(2))\n"
    )
    (project / "own.py").write_text(script)
    try:
        code, out = run(shell, "python3 own.py")
    finally:
        shell.close()
    assert code == 0 and "OWN b'ok'" in out, out


def test_the_variables_naming_hidden_sockets_are_not_passed_on(
    runtime_dir: Path, project: Path, listeners: list[Listener], monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = serve(listeners, runtime_dir / "ssh-agent.sock")
    bus = serve(listeners, runtime_dir / "bus")
    monkeypatch.setenv("SSH_AUTH_SOCK", agent.address)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={bus.address},guid=1")
    shell = sandboxed(project)
    try:
        _, out = run(shell, 'echo "[$SSH_AUTH_SOCK][$DBUS_SESSION_BUS_ADDRESS][$XDG_RUNTIME_DIR]"')
    finally:
        shell.close()
    assert out.strip() == "[][][]"


def test_the_keyring_cannot_be_read_over_the_session_bus(
    outside_tmp: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from keyring.backends.SecretService import Keyring

    service = start_secret_service(base=outside_tmp)
    try:
        for name, value in service.env.items():
            if name != "HOME":
                monkeypatch.setenv(name, value)
        Keyring().set_password("ohtui", "llm-api-key", "sk-live-SECRET")
        address = service.env["DBUS_SESSION_BUS_ADDRESS"]
        # What the agent would run: the test's interpreter has jeepney and secretstorage.
        (project / "steal.py").write_text(
            "import secretstorage\n"
            "from jeepney.io.blocking import open_dbus_connection\n"
            f"conn = open_dbus_connection(bus={address!r})\n"
            "for item in secretstorage.get_default_collection(conn).get_all_items():\n"
            "    print('GOT', item.get_secret().decode())\n"
        )
        shell = sandboxed(project)
        try:
            _, out = run(shell, f"{sys.executable} steal.py")
        finally:
            shell.close()
    finally:
        service.bus.close()
    assert "sk-live-SECRET" not in out and "GOT" not in out, out


@pytest.mark.parametrize("network", [False, True])
def test_abstract_sockets_are_out_of_reach(
    network: bool, project: Path, listeners: list[Listener]
) -> None:
    if network and not _landlock_scopes():
        pytest.skip("this kernel has no Landlock scopes (Linux 6.12+)")
    listener = serve(listeners, f"\0ohtui-test-{os.getpid()}-{network}")
    shell = sandboxed(project, network=network)
    try:
        code, out = run(
            shell,
            "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); "
            f's.connect(b"\\0{listener.address[1:]}"); print("REACHED")\'',
        )
    finally:
        shell.close()
    assert "REACHED" not in out and listener.reached == 0, out
    assert code != 0


def test_signals_cannot_leave_the_sandbox_with_the_network_shared(project: Path) -> None:
    if not _landlock_scopes():
        pytest.skip("this kernel has no Landlock scopes (Linux 6.12+)")
    victim = subprocess.Popen(["sleep", "30"])
    shell = sandboxed(project, network=True)
    try:
        # The pid namespace hides it; Landlock refuses it even when named by host pid.
        _, out = run(shell, f"kill -9 {victim.pid}; echo done")
    finally:
        shell.close()
    assert victim.poll() is None, out
    victim.kill()
    victim.wait()


def test_an_opted_in_socket_answers_and_no_other(
    runtime_dir: Path,
    outside_tmp: Path,
    project: Path,
    listeners: list[Listener],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = serve(listeners, runtime_dir / "ssh-agent.sock")
    other = serve(listeners, runtime_dir / "bus")
    by_path = serve(listeners, outside_tmp / "home" / "dev.sock")
    monkeypatch.setenv("SSH_AUTH_SOCK", agent.address)
    shell = sandboxed(project, sockets=("$SSH_AUTH_SOCK", by_path.address))
    try:
        _, via_variable = run(shell, CONNECT + '"$SSH_AUTH_SOCK"')
        _, via_path = run(shell, CONNECT + by_path.address)
        _, refused = run(shell, CONNECT + other.address)
    finally:
        shell.close()
    assert "REACHED yes" in via_variable and "REACHED yes" in via_path
    assert "REACHED" not in refused and other.reached == 0


def test_a_real_ssh_agent_lists_no_key_inside(
    runtime_dir: Path, outside_tmp: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not shutil.which("ssh-agent") or not shutil.which("ssh-add"):
        pytest.skip("ssh-agent is not installed")
    socket_path = runtime_dir / "gcr" / "ssh"  # GNOME 44+: gcr-ssh-agent
    socket_path.parent.mkdir()
    key = outside_tmp / "id"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key], check=True)
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", socket_path], stdout=subprocess.DEVNULL)
    try:
        env = {**os.environ, "SSH_AUTH_SOCK": str(socket_path)}
        for _ in range(200):
            if socket_path.exists():
                break
            threading.Event().wait(0.02)
        subprocess.run(["ssh-add", "-q", key], env=env, check=True, capture_output=True)
        monkeypatch.setenv("SSH_AUTH_SOCK", str(socket_path))
        shell = sandboxed(project)
        try:
            code, out = run(shell, f"SSH_AUTH_SOCK={socket_path} ssh-add -l")
        finally:
            shell.close()
        assert code != 0 and "ED25519" not in out, out
    finally:
        agent.kill()
        agent.wait()


def test_an_old_kernel_with_the_network_on_is_said(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ohtui.opening.sandbox import install_sandbox
    from ohtui.sdk import LLM, Agent, Conversation
    from ohtui.sdk.sandbox import SandboxConfig, landlock

    monkeypatch.setattr(landlock, "abi_version", lambda: 5)
    llm = LLM(model="openai/x", base_url="http://127.0.0.1:9/v1", api_key="k")
    conversation = Conversation(agent=Agent(llm=llm, tools=[]), workspace=str(project))
    try:
        with_network = install_sandbox(conversation, SandboxConfig(network=True))
        without = install_sandbox(conversation, SandboxConfig())
    finally:
        conversation.close()
    assert with_network is not None and "abstract sockets" in with_network
    assert without is None


@pytest.mark.parametrize(
    ("entry", "shown"),
    [("{run}/", False), ("{run}/bin/..", False), ("{run}/bin", True), ("{run}/bin/", True)],
)
def test_a_program_folder_in_the_runtime_folder_shows_no_socket(
    entry: str, shown: bool, runtime_dir: Path, project: Path, listeners: list[Listener]
) -> None:
    """A folder on PATH under XDG_RUNTIME_DIR stays visible (fnm keeps shells there); the
    runtime folder itself never does, and no socket shows in what does."""
    (runtime_dir / "bin").mkdir()
    inside = serve(listeners, runtime_dir / "bin" / "ipc.sock")
    bus = serve(listeners, runtime_dir / "bus")
    path = entry.format(run=runtime_dir) + ":" + os.environ["PATH"]
    shell = sandboxed(project, env={"PATH": path})
    try:
        out = [run(shell, CONNECT + listener.address)[1] for listener in (inside, bus)]
        _, listed = run(shell, f"ls {runtime_dir}/bin && echo LISTED")
    finally:
        shell.close()
    assert "REACHED" not in "".join(out) and inside.reached == bus.reached == 0, out
    assert ("LISTED" in listed) is shown, listed


def test_a_socket_gone_before_the_sandbox_is_set_up_costs_one_start(
    project: Path, socket_gone_before_start: list[int]
) -> None:
    """Sockets are listed just before the sandbox starts; one removed in between (a test
    run's, an editor's) cannot be covered, and that start fails: the shell starts again."""
    shell = sandboxed(project)
    try:
        code, out = run(shell, "echo ran")
    finally:
        shell.close()
    assert (code, out.strip()) == (0, "ran"), out
    assert len(socket_gone_before_start) == 2


@pytest.mark.parametrize("entry", ["{run}//", "{run}/./", "{run}/bin/../", "{run}/bin//..//"])
def test_more_spellings_of_the_runtime_folder_on_path_show_no_socket(
    entry: str, runtime_dir: Path, project: Path, listeners: list[Listener]
) -> None:
    (runtime_dir / "bin").mkdir()
    bus = serve(listeners, runtime_dir / "bus")
    path = entry.format(run=runtime_dir) + ":" + os.environ["PATH"]
    shell = sandboxed(project, env={"PATH": path})
    try:
        _, out = run(shell, CONNECT + bus.address)
    finally:
        shell.close()
    assert "REACHED" not in out and bus.reached == 0, out
