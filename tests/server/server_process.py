"""`ohtui serve` in a subprocess on a free loopback port, for tests and the bench."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import httpx

TEST_KEY = "test-session-key-0123456789"


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """`ohtui serve` run with its own data dir; stderr (its log) is kept in a file."""

    def __init__(
        self,
        data_dir: Path,
        *,
        key: str | None = TEST_KEY,
        port: int | None = None,
        args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir = data_dir
        self.cwd = cwd or data_dir.parent
        """Where it starts: its default root, so workspaces must be under it (the data dir's
        parent holds every other tmp_path of the test session)."""
        self.key = key
        self.port = port or free_port()
        self.args = args
        self.extra_env = env or {}
        self.log_path = data_dir / f"server-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self.ready_seconds: float | None = None
        self.command = [sys.executable, "-m", "ohtui"]
        """What runs `ohtui` (the bench runs it under a probe)."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        return {"X-Session-API-Key": self.key} if self.key else {}

    def environ(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OHTUI_")}
        env["OHTUI_DATA_DIR"] = str(self.data_dir)
        env["OHTUI_CONFIG_DIR"] = str(self.data_dir / "config")
        env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        if self.key:
            env["OHTUI_SERVER_API_KEY"] = self.key
        env.update(self.extra_env)
        return env

    def start(self, wait: bool = True) -> ServerProcess:
        self._log = self.log_path.open("ab")
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [*self.command, "serve", "--port", str(self.port), *self.args],
            env=self.environ(),
            cwd=self.cwd,
            stdout=self._log,
            stderr=self._log,
        )
        if wait:
            self.wait_ready()
            self.ready_seconds = time.perf_counter() - started
        return self

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"ohtui serve exited {self.process.returncode}: {self.log()}")
            try:
                if httpx.get(self.url + "/ready", timeout=0.5).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.02)
        raise TimeoutError(f"ohtui serve not ready in {timeout} s: {self.log()}")

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers, timeout=30, **kwargs)

    def cpu_seconds(self) -> float:
        """CPU time the server process has used so far (user + system, from /proc)."""
        assert self.process is not None
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL: no shutdown at all."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
        self._close_log()

    def stop(self) -> None:
        """SIGINT, as Ctrl+C: uvicorn shuts down and the conversations are closed."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None
