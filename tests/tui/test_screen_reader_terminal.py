"""Screen-reader mode as a terminal shows it: the real `ohtui --screen-reader` in a pty of a
fixed size, its output read by a terminal emulator (pyte), as a screen reader reads it."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyte
import pytest
from llm_server import ScriptedLLMServer

COLUMNS, ROWS = 100, 30
SHAPES = re.compile("[\u2500-\u257f]")
"""Box drawing (U+2500 to U+257F)."""
MOTION = re.compile("[\u2580-\u259f\u2800-\u28ff◐◓◑◒⣾⣽⣻⢿⡿⣟⣯⣷]")
"""Block elements and braille or circle spinner frames: what an animation is drawn with."""
CONFIG = "[ui]\nauto_title = false\n"


class Terminal:
    """`ohtui` running in a pty, what it writes kept in a pyte screen (and all of it raw)."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self._stream = pyte.ByteStream(self.screen)
        self.written = b""
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        self._master = master
        self._closed = False
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ohtui", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        os.close(slave)

    def read(self, seconds: float = 0.1) -> None:
        """Take in what the app wrote during `seconds`."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self._master], [], [], left)
            if not ready:
                return
            try:
                chunk = os.read(self._master, 65536)
            except OSError:  # the app has exited
                return
            self.written += chunk
            self._stream.feed(chunk)

    @property
    def lines(self) -> list[str]:
        """The screen's rows, without trailing spaces."""
        return [row.rstrip() for row in self.screen.display]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def settle(self, quiet: float = 0.3, timeout: float = 5) -> None:
        """Read until the app has written nothing for `quiet` seconds (a frame is written in
        pieces: a read in between would see half of it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            before = len(self.written)
            self.read(quiet)
            if len(self.written) == before:
                return

    def wait_for(self, condition: Callable[[str], bool], what: str, timeout: float = 30) -> str:
        """Read until the screen's text meets `condition`, then until it is still; returns
        that text."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.read(0.1)
            if condition(self.text):
                self.settle()
                return self.text
            if self.process.poll() is not None:
                raise AssertionError(f"ohtui exited ({self.process.returncode}):\n{self.text}")
        raise AssertionError(f"timed out waiting for {what}; the screen:\n{self.text}")

    def type(self, text: str) -> None:
        """Type keys (\\r is Enter)."""
        os.write(self._master, text.encode())

    def close(self) -> int:
        """Quit with Ctrl+Q (or end the process); its exit code."""
        if self._closed:
            return self.process.returncode
        self._closed = True
        if self.process.poll() is None:
            self.type("\x11")
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.read(0.05)
        os.close(self._master)
        return self.process.returncode


@pytest.fixture
def ohtui_in_a_pty(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> Iterator[Callable[..., Terminal]]:
    """Start `ohtui` in a pty, its config, data and logs in tmp_path, pointed at the
    scripted server; closed (Ctrl+Q) after the test."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    config = tmp_path / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    started: list[Terminal] = []

    def start(*args: str, **env: str) -> Terminal:
        environ = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("OHTUI_", "TEXTUAL"))
            and key not in ("NO_COLOR", "COLUMNS", "LINES")  # the size is the pty's
        }
        environ.update(
            TERM="xterm-256color",
            OHTUI_CONFIG_DIR=str(tmp_path / "home-config"),
            OHTUI_DATA_DIR=str(tmp_path / "data"),
            OHTUI_LOG_DIR=str(tmp_path / "logs"),
            OHTUI_API_KEY="sk-test",
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            **env,
        )
        command = [
            *("-m", "openai/test-model", "--base-url", llm_server.base_url),
            *("--config", str(config), "--sandbox", "off", *args),
        ]
        terminal = Terminal(command, environ, workspace)
        started.append(terminal)
        return terminal

    yield start
    for terminal in started:
        terminal.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("no_color", [False, True], ids=["colour", "no-colour"])
def test_a_screen_reader_hears_role_lines_and_no_shapes_or_spinners(
    ohtui_in_a_pty: Callable[..., Terminal], llm_server: ScriptedLLMServer, no_color: bool
) -> None:
    """A turn with a command that takes a while: read several times while it runs, the
    screen never changes by itself and never holds a box or spinner character; once done,
    it reads as role lines, in order."""
    llm_server.reply_tool_call(
        "terminal", {"command": "sleep 4; echo done sleeping", "security_risk": "LOW"}
    )
    llm_server.reply_text("The command **slept**, then said so.")
    terminal = ohtui_in_a_pty("--screen-reader", **({"NO_COLOR": "1"} if no_color else {}))
    terminal.wait_for(lambda text: "status: ready" in text, "the conversation to open")
    terminal.type("Sleep a bit\r")
    terminal.wait_for(lambda text: "command: sleep 4" in text, "the command")
    reads = []
    for _ in range(4):  # a second of reads while the command runs
        terminal.read(0.25)
        reads.append(terminal.text)
    assert all("status: running" in read for read in reads), reads[-1]
    assert len(set(reads)) == 1, "the screen changed by itself while the command ran"
    final = terminal.wait_for(
        lambda text: "agent: The command slept" in text and "status: finished" in text,
        "the answer",
    )
    lines = [line.strip() for line in terminal.lines if line.strip()]
    expected = [
        "you: Sleep a bit",
        "command: sleep 4; echo done sleeping, LOW risk",
        "result: exit 0",
        "output: done sleeping",
        "agent: The command slept, then said so.",
    ]
    positions = [lines.index(line) for line in expected]
    assert positions == sorted(positions), lines
    assert lines[0].startswith("status: finished, model openai/test-model"), lines[0]
    everything = terminal.written.decode("utf-8", "replace")
    assert not SHAPES.search(everything), SHAPES.findall(everything)[:5]
    assert not MOTION.search(everything), MOTION.findall(everything)[:5]
    assert not MOTION.search(final) and "ctrl+q Quit" in final
    assert terminal.close() == 0


@pytest.mark.timeout(120)
def test_the_approval_choices_are_read_as_numbers_and_taken_by_number(
    ohtui_in_a_pty: Callable[..., Terminal], llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "rm -rf ~/old-build"})
    llm_server.reply_text("Removed it.")
    terminal = ohtui_in_a_pty("--confirm", "always", OHTUI_SCREEN_READER="yes")
    terminal.wait_for(lambda text: "status: ready" in text, "the conversation to open")
    terminal.type("Clean up\r")
    text = terminal.wait_for(lambda text: "1. Approve" in text, "the numbered choices")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    assert lines[0].startswith("needs approval: 1 action waits for your approval")
    assert any("HIGH risk" in line and "rm -rf ~/old-build" in line for line in lines)
    assert "> 1. Approve" in lines and "2. Reject with a reason" in lines
    assert not SHAPES.search(text)
    terminal.type("5")  # Decide later: the action keeps waiting
    text = terminal.wait_for(
        lambda text: "needs approval: waiting for your approval" in text, "back to the chat"
    )
    assert "1. Approve" not in text
    assert "command: rm -rf ~/old-build, HIGH risk" in text
    assert terminal.close() == 0


def test_a_bad_screen_reader_variable_is_refused_in_words(tmp_path: Path) -> None:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OHTUI_")}
    environ.update(OHTUI_SCREEN_READER="maybe", OHTUI_CONFIG_DIR=str(tmp_path))
    run = subprocess.run(
        [sys.executable, "-m", "ohtui"],
        env=environ,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert run.returncode == 3
    assert run.stderr.strip() == (
        "ohtui: OHTUI_SCREEN_READER='maybe' is not on or off: use 1, true or yes (on), "
        "or 0, false or no (off)."
    )
    assert run.stdout == ""
