"""Tests for the terminal tool: a real persistent bash, timeouts, interrupts, big outputs."""

from __future__ import annotations

import os
import re
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from ohtui.sdk.tool import Observation, Tool, resolve_tool
from ohtui.sdk.tools.terminal import (
    TerminalAction,
    TerminalExecutor,
    TerminalObservation,
    TerminalTool,
)
from ohtui.sdk.tools.terminal.output import OutputCapture
from ohtui.sdk.workspace.local import LocalWorkspace


def make_state(root: Path, obs_dir: Path | None) -> types.SimpleNamespace:
    return types.SimpleNamespace(
        workspace=LocalWorkspace(working_dir=str(root)),
        env_observation_persistence_dir=None if obs_dir is None else str(obs_dir),
        agent_state={},
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def obs_dir(tmp_path: Path) -> Path:
    return tmp_path / "obs"  # not created: the tool must create it when needed


@pytest.fixture
def tool(workspace: Path, obs_dir: Path) -> Iterator[TerminalTool]:
    [terminal] = TerminalTool.create(make_state(workspace, obs_dir), timeout=10)  # type: ignore[arg-type]
    yield terminal
    terminal.close()


def executor_of(tool: TerminalTool) -> TerminalExecutor:
    assert isinstance(tool.executor, TerminalExecutor)
    return tool.executor


def run(tool: TerminalTool, command: str = "", **fields: Any) -> TerminalObservation:
    obs = tool(TerminalAction(command=command, **fields))
    assert isinstance(obs, TerminalObservation)
    return obs


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie waiting for its parent to reap it does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state not in ("Z", "X")


def wait_dead(pids: list[int], timeout: float = 3.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def pids_in(text: str) -> list[int]:
    return [int(p) for p in re.findall(r"^pid=(\d+)$", text, re.MULTILINE)]


def test_creating_the_tool_starts_no_shell(tool: TerminalTool) -> None:
    assert executor_of(tool).session.pid is None
    assert tool.name == "terminal"
    assert not tool.is_read_only
    assert tool.annotations is not None and tool.annotations.destructiveHint
    assert "10 s" in tool.description and "/dev/null" in tool.description


def test_echo_reports_output_and_exit_code(tool: TerminalTool, workspace: Path) -> None:
    obs = run(tool, "echo hello; echo oops >&2")
    assert obs.text == "hello\noops\n[exit code 0]"
    assert obs.exit_code == 0
    assert not obs.is_error
    assert obs.working_dir == str(workspace)
    assert not obs.truncated and obs.full_output_path is None
    assert obs.command == "echo hello; echo oops >&2"


def test_non_zero_exit_is_an_error(tool: TerminalTool) -> None:
    obs = run(tool, "ls /definitely/not/here")
    assert obs.exit_code == 2
    assert obs.is_error
    assert obs.text.endswith("[exit code 2]")
    assert "No such file" in obs.text


def test_cwd_and_exports_persist(tool: TerminalTool, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    obs = run(tool, "cd sub && export GREETING='hi there'")
    assert obs.working_dir == str(workspace / "sub")
    assert obs.text.endswith(f"[cwd: {workspace / 'sub'}]")
    obs = run(tool, 'pwd; echo "$GREETING"')
    assert obs.text == f"{workspace / 'sub'}\nhi there\n[exit code 0]"
    assert "[cwd:" not in obs.text  # unchanged this time


def test_multi_line_command_and_heredoc(tool: TerminalTool, workspace: Path) -> None:
    command = (
        "cat > notes.txt <<'EOF'\n"
        'literal $HOME and "quotes" and `ticks`\n'
        "\tindented\n"
        "EOF\n"
        "for i in 1 2; do\n"
        "  echo line $i\n"
        "done\n"
        "wc -l < notes.txt"
    )
    obs = run(tool, command)
    assert obs.text == "line 1\nline 2\n2\n[exit code 0]"
    assert (workspace / "notes.txt").read_text() == (
        'literal $HOME and "quotes" and `ticks`\n\tindented\n'
    )


def test_syntax_error_keeps_the_session(tool: TerminalTool) -> None:
    run(tool, "export KEEP=1")
    obs = run(tool, "if then fi")
    assert obs.exit_code == 2
    assert "syntax error" in obs.text
    obs = run(tool, "echo 'unterminated")
    assert obs.exit_code == 2
    obs = run(tool, 'echo "still here $KEEP"')
    assert obs.text == "still here 1\n[exit code 0]"


def test_stdin_is_dev_null(tool: TerminalTool) -> None:
    started = time.monotonic()
    obs = run(tool, 'cat; read -r line; echo "read=$?"', timeout=5)
    assert time.monotonic() - started < 2
    assert obs.text == "read=1\n[exit code 0]"


def test_timeout_kills_the_process_tree_and_keeps_the_shell(
    tool: TerminalTool, workspace: Path
) -> None:
    (workspace / "sub").mkdir()
    run(tool, "cd sub && export KEEP=yes")
    command = "sh -c 'echo pid=$$; sleep 30 & echo pid=$!; sleep 31 & echo pid=$!; wait'"
    started = time.monotonic()
    obs = run(tool, command, timeout=1)
    elapsed = time.monotonic() - started
    assert 1 <= elapsed < 3
    assert obs.timed_out and obs.exit_code is None and obs.is_error
    assert "timed out after 1 s and was killed" in obs.text
    assert "background" in obs.text
    pids = pids_in(obs.text)
    assert len(pids) == 3  # the output printed before the timeout is kept
    assert wait_dead(pids) == []
    obs = run(tool, 'pwd; echo "$KEEP"')
    assert obs.text == f"{workspace / 'sub'}\nyes\n[exit code 0]"


def test_timeout_stops_the_rest_of_a_sequence(tool: TerminalTool) -> None:
    started = time.monotonic()
    obs = run(tool, "sleep 30; sleep 30; sleep 30", timeout=1)
    assert obs.timed_out
    assert time.monotonic() - started < 3.5


def test_a_loop_in_bash_that_ignores_the_stop_is_ended_with_the_shell(
    tool: TerminalTool, workspace: Path
) -> None:
    run(tool, "cd / && export KEEP=1")
    started = time.monotonic()
    obs = run(tool, "trap '' USR2; while :; do :; done", timeout=1)
    assert obs.timed_out
    assert time.monotonic() - started < 3.5
    assert "shell had to be killed" in obs.text
    obs = run(tool, 'pwd; echo "[$KEEP]"')
    assert "A new shell was started" in obs.text
    assert f"{workspace}\n[]\n[exit code 0]" in obs.text


def test_interrupt_from_another_thread(tool: TerminalTool) -> None:
    run(tool, "true")  # start the shell first, so the interrupt lands on the command
    timer = threading.Timer(0.5, executor_of(tool).interrupt)
    started = time.monotonic()
    timer.start()
    obs = run(tool, "echo started; sleep 30", timeout=30)
    timer.join()
    assert time.monotonic() - started < 3
    assert obs.interrupted and not obs.timed_out
    assert obs.exit_code is None and obs.is_error
    assert obs.text.startswith("started\n")
    assert "interrupted" in obs.text
    assert run(tool, "echo next").text == "next\n[exit code 0]"


def test_interrupt_with_no_command_running_is_harmless(tool: TerminalTool) -> None:
    executor_of(tool).interrupt()
    obs = run(tool, "echo fine")
    assert obs.text == "fine\n[exit code 0]" and not obs.interrupted


def test_shell_exit_is_reported_and_a_fresh_shell_follows(
    tool: TerminalTool, workspace: Path
) -> None:
    run(tool, "cd / && export KEEP=1")
    first_pid = executor_of(tool).session.pid
    obs = run(tool, "echo bye; exit 3")
    assert obs.exit_code == 3 and obs.is_error
    assert obs.text.startswith("bye\n")
    assert "shell exited with code 3" in obs.text
    assert first_pid is not None and wait_dead([first_pid]) == []
    obs = run(tool, 'pwd; echo "[$KEEP]"')
    assert "A new shell was started" in obs.text and "reset" in obs.text
    assert f"{workspace}\n[]\n[exit code 0]" in obs.text
    assert executor_of(tool).session.pid not in (None, first_pid)
    assert "A new shell" not in run(tool, "true").text  # said once


def test_large_output_is_truncated_and_saved(tool: TerminalTool, obs_dir: Path) -> None:
    obs = run(tool, "seq 1 200000")
    expected = "".join(f"{i}\n" for i in range(1, 200001))
    assert obs.truncated and obs.exit_code == 0
    assert obs.full_output_path is not None
    saved = Path(obs.full_output_path)
    assert saved.parent == obs_dir
    assert saved.read_text() == expected
    assert obs.text.startswith("1\n2\n3\n")
    assert obs.text.endswith("199999\n200000\n[exit code 0]")
    assert len(obs.text) < 30_000 + 400
    marker = re.search(r"\(([\d,]+) lines, ([\d,]+) characters\)", obs.text)
    assert marker is not None
    shown = len(obs.text) - len(marker.group(0))
    omitted = int(marker.group(2).replace(",", ""))
    assert omitted > len(expected) - shown - 400
    assert str(saved) in obs.text


def test_long_output_is_cut_at_line_boundaries_saying_which_lines_are_left_out(
    tool: TerminalTool, obs_dir: Path
) -> None:
    """`seq 1 100000`: the model sees only whole lines (no fake "97" from "97001") and is
    told which lines are left out and where the whole output is."""
    obs = run(tool, "seq 1 100000")
    body, _, exit_line = obs.text.rpartition("\n")
    assert exit_line == "[exit code 0]"
    lines = body.split("\n")
    (at,) = [i for i, line in enumerate(lines) if line.startswith("[...")]
    head = [int(line) for line in lines[:at]]
    tail = [int(line) for line in lines[at + 1 :]]
    assert head == list(range(1, len(head) + 1))
    assert tail == list(range(100_001 - len(tail), 100_001))
    first, last = len(head) + 1, 100_000 - len(tail)
    marker = lines[at]
    assert f"lines {first:,}-{last:,} of 100,000 left out ({last - first + 1:,} lines," in marker
    assert f"sed -n '{first},{last}p'" in marker
    assert obs.full_output_path is not None and Path(obs.full_output_path).parent == obs_dir
    assert f"saved in {obs.full_output_path}" in marker


def test_a_line_longer_than_the_budget_is_left_out_whole_or_cut_inside_saying_so(
    tmp_path: Path,
) -> None:
    capture = OutputCapture(1000, lambda binary: (tmp_path / "1", (tmp_path / "1").open("xb")))
    capture.feed(b"short\n" + b"x" * 5000 + b"\nend\n")
    assert capture.finish().text.startswith(
        "short\n[... line 2 of 3 left out (1 line, 5,001 characters); the full output"
    )
    capture = OutputCapture(1000, lambda binary: (tmp_path / "2", (tmp_path / "2").open("xb")))
    capture.feed(b"x" * 5000)
    text = capture.finish().text
    assert "characters left out, from inside a very long line" in text
    assert text.startswith("x" * 100) and text.endswith("x" * 100)


def test_saved_output_is_capped(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"

    def open_file(binary: bool) -> tuple[Path, BinaryIO]:
        return path, path.open("xb")

    capture = OutputCapture(200, open_file, max_file_bytes=1000)
    for i in range(100):
        capture.feed(f"{i:09d}\n".encode())  # 10 bytes a line: 1000 bytes in all
    capture.feed(b"the end\n")
    result = capture.finish()
    assert result.total_bytes == 1008 and result.saved_bytes == 1000
    assert path.read_bytes() == b"".join(f"{i:09d}\n".encode() for i in range(100))
    assert "8 bytes more were discarded" in result.text
    assert result.text.startswith("000000000\n") and result.text.endswith("the end\n")


def test_small_outputs_are_not_kept(tool: TerminalTool, obs_dir: Path) -> None:
    obs = run(tool, "seq 1 1000")
    assert not obs.truncated and obs.full_output_path is None
    assert not obs_dir.exists() or list(obs_dir.iterdir()) == []


def test_binary_output_is_saved_not_shown(tool: TerminalTool) -> None:
    obs = run(tool, r"printf 'a\000b\000c'")
    assert "binary output (5 B)" in obs.text
    assert obs.full_output_path is not None
    assert Path(obs.full_output_path).read_bytes() == b"a\x00b\x00c"
    assert "\x00" not in obs.text
    obs = run(tool, "head -c 3000 /dev/urandom")
    assert "binary output" in obs.text
    assert obs.full_output_path is not None
    assert Path(obs.full_output_path).stat().st_size == 3000
    assert obs.exit_code == 0


def test_invalid_utf8_and_crlf_are_tolerated(tool: TerminalTool) -> None:
    obs = run(tool, r"printf 'caf\351 ok\r\nnext\n'")
    assert obs.text == "caf\ufffd ok\nnext\n[exit code 0]"


def test_empty_command_is_an_error(tool: TerminalTool) -> None:
    obs = run(tool, "   ")
    assert obs.is_error
    assert "No command given" in obs.text
    assert executor_of(tool).session.pid is None


def test_reset_restarts_the_shell(tool: TerminalTool, workspace: Path) -> None:
    run(tool, "cd / && export KEEP=1")
    old_pid = executor_of(tool).session.pid
    obs = run(tool, reset=True)
    assert not obs.is_error
    assert "reset" in obs.text and str(workspace) in obs.text
    assert obs.working_dir == str(workspace)
    assert old_pid is not None and wait_dead([old_pid]) == []
    obs = run(tool, 'pwd; echo "[$KEEP]"')
    assert obs.text == f"{workspace}\n[]\n[exit code 0]"


def test_close_kills_the_shell_and_its_jobs(tool: TerminalTool) -> None:
    obs = run(tool, "sleep 30 & echo pid=$!")
    [job] = pids_in(obs.text)
    bash = executor_of(tool).session.pid
    assert bash is not None and alive(bash) and alive(job)
    tool.close()
    tool.close()  # idempotent
    assert wait_dead([bash, job]) == []
    obs = run(tool, "echo hi")
    assert obs.is_error and "closed" in obs.text
    assert executor_of(tool).session.pid is None


def test_close_from_another_thread_ends_a_running_command(tool: TerminalTool) -> None:
    run(tool, "true")
    timer = threading.Timer(0.3, tool.close)
    started = time.monotonic()
    timer.start()
    obs = run(tool, "sleep 30", timeout=30)
    timer.join()
    assert time.monotonic() - started < 3
    assert obs.is_error and "closed" in obs.text


def test_background_jobs_survive_a_later_timeout(tool: TerminalTool) -> None:
    obs = run(tool, "sleep 30 > /dev/null 2>&1 & echo pid=$!")
    [job] = pids_in(obs.text)
    assert run(tool, "sleep 30", timeout=1).timed_out
    assert alive(job)  # it belongs to an earlier command, not the one that timed out


def test_without_persistence_a_private_dir_holds_outputs(workspace: Path) -> None:
    [terminal] = TerminalTool.create(make_state(workspace, None), max_output_chars=1000)  # type: ignore[arg-type]
    obs = run(terminal, "seq 1 5000")
    assert obs.truncated and obs.full_output_path is not None
    saved = Path(obs.full_output_path)
    assert saved.parent.name.startswith("ohtui-terminal-")
    assert saved.read_text().splitlines()[-1] == "5000"
    assert len(obs.text) < 1000 + 400
    terminal.close()
    assert not saved.parent.exists()


def test_resolve_tool_by_name(workspace: Path, obs_dir: Path) -> None:
    state = make_state(workspace, obs_dir)
    [terminal] = resolve_tool(Tool(name="terminal", params={"timeout": 7}), state)  # type: ignore[arg-type]
    try:
        assert isinstance(terminal, TerminalTool)
        assert executor_of(terminal).timeout == 7
        obs = terminal(TerminalAction(command="echo via registry"))
        assert obs.text == "via registry\n[exit code 0]"
    finally:
        terminal.close()
    with pytest.raises(ValueError, match="bogus"):
        resolve_tool(Tool(name="terminal", params={"bogus": 1}), state)  # type: ignore[arg-type]


def test_action_schema_for_the_model() -> None:
    schema = TerminalAction.to_mcp_schema()
    assert schema["required"] == ["command"]
    assert set(schema["properties"]) == {"command", "timeout", "reset"}
    assert schema["properties"]["timeout"]["type"] == "number"
    with pytest.raises(ValueError):
        TerminalAction(command="true", timeout=0)


def test_observation_json_round_trip_and_visualize(tool: TerminalTool) -> None:
    obs = run(tool, "echo hi; exit_code_of_nothing_zz")
    restored = Observation.model_validate_json(obs.model_dump_json())
    assert isinstance(restored, TerminalObservation)
    assert restored == obs
    shown = obs.visualize.plain
    assert shown.startswith("$ echo hi; exit_code_of_nothing_zz\n")
    assert "hi\n" in shown
    assert shown.endswith("exit 127")
    timed_out = run(tool, "sleep 5", timeout=0.5)
    assert timed_out.visualize.plain.endswith("timed out after 0.5 s")
