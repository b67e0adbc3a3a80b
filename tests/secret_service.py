"""A private Secret Service for tests: gnome-keyring-daemon on its own D-Bus session bus.

Nothing touches the developer's real keyring or session bus: the bus has its own socket and no
service directories (so nothing is D-Bus-activated behind our back, not even a password prompter),
and gnome-keyring keeps its files under a temporary HOME. Only the pytest process's environment
is pointed at it, by the test fixtures, for one test at a time.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REQUIRE_ENV = "OHTUI_REQUIRE_SECRET_SERVICE"
"""Set to 1 (CI does) to make a missing gnome-keyring or dbus-daemon a failure, not a skip."""

PASSWORD = "test-login-password"
SECRETS_NAME = "org.freedesktop.secrets"

_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={socket_dir}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


def require(*programs: str) -> None:
    """Skip the test when a program is missing, or fail it when REQUIRE_ENV=1 (as on CI)."""
    missing = [p for p in programs if shutil.which(p) is None]
    if not missing:
        return
    reason = f"{', '.join(missing)} not installed (apt-get install gnome-keyring dbus)"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@dataclass
class SessionBus:
    """A dbus-daemon of our own, and a temporary HOME/XDG tree for whatever runs on it."""

    root: Path
    address: str
    process: subprocess.Popen[bytes]
    children: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        """The variables a client (or a daemon) needs to live on this bus and in this HOME."""
        return {
            "DBUS_SESSION_BUS_ADDRESS": self.address,
            "HOME": str(self.root / "home"),
            "XDG_RUNTIME_DIR": str(self.root / "run"),
            "XDG_DATA_HOME": str(self.root / "data"),
            "XDG_CONFIG_HOME": str(self.root / "config"),
            "XDG_CACHE_HOME": str(self.root / "cache"),
        }

    def has_owner(self, name: str) -> bool:
        """Whether some connection owns `name` on this bus."""
        from jeepney.bus_messages import message_bus
        from jeepney.io.blocking import open_dbus_connection

        with closing(open_dbus_connection(bus=self.address)) as conn:
            reply = conn.send_and_get_reply(message_bus.NameHasOwner(name), timeout=5)
        return bool(reply.body[0])

    def close(self) -> None:
        """Stop every daemon started here and remove the temporary tree."""
        for process in [*self.children, self.process]:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGCONT)  # a frozen daemon cannot act on SIGTERM
                process.terminate()
        for process in [*self.children, self.process]:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class SecretService:
    """gnome-keyring-daemon serving org.freedesktop.secrets on a private bus, unlocked."""

    bus: SessionBus
    process: subprocess.Popen[bytes]

    @property
    def env(self) -> dict[str, str]:
        """The variables that point a client at this Secret Service."""
        return self.bus.env

    @contextmanager
    def frozen(self) -> Iterator[None]:
        """Stop the daemon (SIGSTOP): calls to it hang, like a keyring waiting on a prompt."""
        os.kill(self.process.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(self.process.pid, signal.SIGCONT)

    def lock(self) -> None:
        """Lock the default (login) collection, as a screen lock or a timeout would."""
        import secretstorage
        from jeepney.io.blocking import open_dbus_connection

        with closing(open_dbus_connection(bus=self.bus.address)) as conn:
            collection = secretstorage.get_default_collection(conn)
            collection.lock()
            assert collection.is_locked()


def _wait_for_line(process: subprocess.Popen[bytes], deadline: float) -> str:
    assert process.stdout is not None
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or process.poll() is not None:
            raise RuntimeError(f"dbus-daemon printed no address (exit code {process.poll()})")
        ready, _, _ = select.select([process.stdout], [], [], left)
        if ready:
            line += os.read(process.stdout.fileno(), 4096)
    return line.decode().strip()


def start_session_bus(timeout: float = 10.0, base: Path | None = None) -> SessionBus:
    """A new, empty D-Bus session bus (nothing on it can be activated), in a new folder in
    `base` (default: the temporary folder)."""
    require("dbus-daemon")
    # Short path: a unix socket path must fit in 108 bytes.
    root = Path(tempfile.mkdtemp(prefix="ohtui-bus-", dir=base))
    for name in ("home", "run", "data", "config", "cache"):
        (root / name).mkdir(mode=0o700)
    config = root / "bus.conf"
    config.write_text(_BUS_CONFIG.format(socket_dir=root / "run"), encoding="utf-8")
    with open(root / "dbus-daemon.log", "wb") as log:
        process = subprocess.Popen(
            ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
        )
    try:
        address = _wait_for_line(process, time.monotonic() + timeout)
    except BaseException:
        process.kill()
        process.wait()
        shutil.rmtree(root, ignore_errors=True)
        raise
    return SessionBus(root=root, address=address, process=process)


def start_secret_service(timeout: float = 10.0, base: Path | None = None) -> SecretService:
    """gnome-keyring-daemon (secrets component only) on a new bus, its login keyring unlocked."""
    require("dbus-daemon", "gnome-keyring-daemon")
    bus = start_session_bus(timeout, base)
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DBUS_", "XDG_"))}
        env.update(bus.env)
        with open(bus.root / "gnome-keyring.log", "wb") as log:
            process = subprocess.Popen(
                [
                    "gnome-keyring-daemon",
                    "--foreground",
                    "--unlock",  # reads the login password on stdin; creates the keyring
                    "--components=secrets",
                ],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        bus.children.append(process)
        assert process.stdin is not None
        process.stdin.write(PASSWORD.encode())
        process.stdin.close()
        deadline = time.monotonic() + timeout
        while not bus.has_owner(SECRETS_NAME):
            if process.poll() is not None or time.monotonic() > deadline:
                log_text = (bus.root / "gnome-keyring.log").read_text(errors="replace")
                raise RuntimeError(f"gnome-keyring-daemon did not start:\n{log_text}")
            time.sleep(0.02)
    except BaseException:
        bus.close()
        raise
    return SecretService(bus=bus, process=process)


def forget_detection() -> None:
    """Make keyring work out its viable backends again (it caches them once per process)."""
    import keyring.backend

    with suppress(KeyError):  # KeyError: nothing was cached yet
        keyring.backend.get_all_keyring.reset()


def redetect(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    """Make keyring detect its backend afresh, as the app's first probe does, in `env`."""
    import keyring.core

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    forget_detection()


@contextmanager
def private_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[SecretService]:
    """keyring pointed at a fresh private Secret Service until the block ends."""
    service = start_secret_service()
    redetect(monkeypatch, service.env)
    try:
        yield service
    finally:
        service.bus.close()
        forget_detection()
