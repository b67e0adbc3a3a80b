"""Stop means stop: an interrupt or a timeout ends the whole command line the agent sent.

Every test runs a real bash. "Gone" is read from /proc here, independently of the code under
test: a process still running anywhere (under bash or adopted by init) counts.
"""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ohtui.sdk.tools.terminal import TerminalAction, TerminalExecutor, TerminalObservation
from ohtui.sdk.tools.terminal.session import BashSession

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")

SIDE_EFFECT = "SIDE_EFFECT"
LATER = 1.5
"""Seconds to wait before checking that the rest of a stopped command never ran."""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def executor(workspace: Path) -> Iterator[TerminalExecutor]:
    terminal = TerminalExecutor(working_dir=str(workspace), timeout=30)
    yield terminal
    terminal.close()


def run(executor: TerminalExecutor, command: str, **fields: Any) -> TerminalObservation:
    return executor(TerminalAction(command=command, **fields))


def parents() -> dict[int, int]:
    table: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            table[int(entry.name)] = int(stat[stat.rfind(")") + 2 :].split()[1])
    return table


def running_under(root: int) -> set[int]:
    """The running (not zombie) processes below `root`."""
    table = parents()
    found: set[int] = set()
    stack = [root]
    while stack:
        pid = stack.pop()
        for child, parent in table.items():
            if parent == pid and child not in found:
                found.add(child)
                stack.append(child)
    return {pid for pid in found if alive(pid)}


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def wait_dead(pids: list[int], timeout: float = 3.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def pids_in(text: str) -> list[int]:
    return [int(p) for p in re.findall(r"^pid=(\d+)$", text, re.MULTILINE)]


def session_pid(session: BashSession) -> int:
    pid = session.pid
    assert pid is not None
    return pid


def interrupt_when_sleeping(executor: TerminalExecutor, count: int = 1) -> threading.Thread:
    """Interrupt once `count` sleep processes run under bash (the command is under way)."""

    def watch() -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            pid = executor.session.pid
            if pid and sum(comm(p) == "sleep" for p in running_under(pid)) >= count:
                executor.interrupt()
                return
            time.sleep(0.02)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def assert_stopped(obs: TerminalObservation, left: set[int], bash: int, shell: int | None) -> None:
    """Interrupted with nothing of the command `left` when `run` returned, and bash kept."""
    assert obs.interrupted and obs.exit_code is None and obs.is_error
    assert left == set()  # already when the agent is told, not a moment later
    assert shell == bash and "shell had to be killed" not in obs.text
    assert "stopped" in obs.text


STOPPED_COMMANDS = {
    "sequence": f"sleep 15; touch {SIDE_EFFECT}",
    "and-list": f"sleep 15 && touch {SIDE_EFFECT}",
    "for-loop": f"for i in 1 2 3; do sleep 15; done; touch {SIDE_EFFECT}",
    "function": f"f() {{ sleep 15; touch {SIDE_EFFECT}; }}; f; touch {SIDE_EFFECT}",
    "child-bash": f"bash -c 'sleep 15; touch {SIDE_EFFECT}'; touch {SIDE_EFFECT}",
    "respawning-loop": f"while :; do sleep 0.05; done; touch {SIDE_EFFECT}",
    "command-substitution": f"x=$(sleep 15); touch {SIDE_EFFECT}",
    "pipeline": f"sleep 15 | cat; touch {SIDE_EFFECT}",
    "wait-builtin": f"sleep 15 & wait; touch {SIDE_EFFECT}",
    "subshell": f"(sleep 15; touch {SIDE_EFFECT}); touch {SIDE_EFFECT}",
    "sourced-script": (
        f"printf 'sleep 15\\ntouch {SIDE_EFFECT}\\n' > s.sh; . ./s.sh; touch {SIDE_EFFECT}"
    ),
}


@pytest.mark.parametrize("command", STOPPED_COMMANDS.values(), ids=STOPPED_COMMANDS.keys())
def test_interrupt_stops_the_whole_command_line_and_keeps_the_shell(
    executor: TerminalExecutor, workspace: Path, command: str
) -> None:
    (workspace / "sub").mkdir()
    run(executor, "cd sub && export KEEP=yes && declare -A MAP=([k]=v)")
    bash = session_pid(executor.session)
    watcher = interrupt_when_sleeping(executor)
    started = time.monotonic()
    obs = run(executor, command)
    left = running_under(bash)
    watcher.join()
    assert time.monotonic() - started < 5
    time.sleep(LATER)
    assert not (workspace / "sub" / SIDE_EFFECT).exists()
    assert_stopped(obs, left, bash, executor.session.pid)
    obs = run(executor, 'pwd; echo "$KEEP ${MAP[k]}"')
    assert obs.text == f"{workspace / 'sub'}\nyes v\n[exit code 0]"
    assert not (workspace / "sub" / SIDE_EFFECT).exists()


def test_timeout_stops_the_rest_of_the_command_line(
    executor: TerminalExecutor, workspace: Path
) -> None:
    run(executor, "true")
    bash = session_pid(executor.session)
    obs = run(executor, f"sleep 15; touch {SIDE_EFFECT}", timeout=1)
    assert obs.timed_out
    assert running_under(bash) == set()
    time.sleep(LATER)
    assert not (workspace / SIDE_EFFECT).exists()
    assert executor.session.pid == bash


def test_a_shell_loop_is_stopped_without_killing_the_shell(
    executor: TerminalExecutor, workspace: Path
) -> None:
    run(executor, "cd / && export KEEP=1")
    bash = session_pid(executor.session)
    timer = threading.Timer(0.5, executor.interrupt)
    timer.start()
    obs = run(executor, f"n=0; while :; do n=$((n+1)); done; touch {workspace / SIDE_EFFECT}")
    left = running_under(bash)
    timer.join()
    assert_stopped(obs, left, bash, executor.session.pid)
    assert run(executor, 'pwd; echo "$KEEP"').text == "/\n1\n[exit code 0]"
    assert not (workspace / SIDE_EFFECT).exists()


def test_a_command_that_ignores_the_stop_costs_the_shell(
    executor: TerminalExecutor, workspace: Path
) -> None:
    run(executor, "cd / && export KEEP=1")
    bash = session_pid(executor.session)
    timer = threading.Timer(0.5, executor.interrupt)
    timer.start()
    started = time.monotonic()
    obs = run(executor, f"trap '' USR2; while :; do :; done; touch {workspace / SIDE_EFFECT}")
    timer.join()
    assert time.monotonic() - started < 5
    assert obs.interrupted
    assert "shell had to be killed" in obs.text
    assert wait_dead([bash], 0) == []  # gone before the agent is told
    obs = run(executor, 'pwd; echo "[$KEEP]"')
    assert "A new shell was started" in obs.text
    assert f"{workspace}\n[]\n[exit code 0]" in obs.text
    assert not (workspace / SIDE_EFFECT).exists()


def test_a_stop_under_set_e_ends_the_shell_and_says_so(
    executor: TerminalExecutor, workspace: Path
) -> None:
    run(executor, "set -e")
    bash = session_pid(executor.session)
    watcher = interrupt_when_sleeping(executor)
    obs = run(executor, f"sleep 15; touch {SIDE_EFFECT}")
    watcher.join()
    assert obs.interrupted
    assert "shell exited as the command was stopped" in obs.text
    assert not alive(bash)
    assert "A new shell was started" in run(executor, "true").text
    assert not (workspace / SIDE_EFFECT).exists()


def test_background_jobs_of_the_interrupted_command_are_killed(
    executor: TerminalExecutor,
) -> None:
    run(executor, "true")
    bash = session_pid(executor.session)
    command = (
        "sleep 300 > /dev/null 2>&1 & echo pid=$!\n"
        "(setsid sleep 301 > /dev/null 2>&1 & echo pid=$!)\n"
        "(nohup sleep 302 > /dev/null 2>&1 & echo pid=$!)\n"
        "sh -c 'sleep 303 > /dev/null 2>&1 & echo pid=$!'\n"
        "sleep 15"
    )
    watcher = interrupt_when_sleeping(executor, count=5)
    obs = run(executor, command)
    left = running_under(bash)
    jobs = [pid for pid in pids_in(obs.text) if alive(pid)]
    watcher.join()
    assert len(pids_in(obs.text)) == 4
    assert jobs == []
    assert_stopped(obs, left, bash, executor.session.pid)


def test_earlier_jobs_survive_a_later_interrupt_and_die_on_close(
    executor: TerminalExecutor, workspace: Path
) -> None:
    obs = run(
        executor,
        "sleep 300 > /dev/null 2>&1 & echo pid=$!\n"
        "(setsid sleep 301 > /dev/null 2>&1 & echo pid=$!)",
    )
    earlier = pids_in(obs.text)
    assert len(earlier) == 2
    bash = session_pid(executor.session)
    watcher = interrupt_when_sleeping(executor, count=3)
    obs = run(executor, f"sleep 15; touch {SIDE_EFFECT}")
    watcher.join()
    assert obs.interrupted
    assert [pid for pid in earlier if alive(pid)] == earlier  # not this command's to kill
    assert running_under(bash) == set(earlier)
    executor.close()
    assert [pid for pid in earlier if alive(pid)] == []  # gone when close returns
    assert not alive(bash)


def test_close_kills_a_double_forked_job(executor: TerminalExecutor) -> None:
    obs = run(
        executor,
        "(setsid sleep 300 > /dev/null 2>&1 & echo pid=$!)\n"
        "sh -c 'sleep 301 > /dev/null 2>&1 & echo pid=$!'",
    )
    jobs = pids_in(obs.text)
    assert len(jobs) == 2 and all(alive(pid) for pid in jobs)
    executor.close()
    assert [pid for pid in jobs if alive(pid)] == []


def test_close_during_a_command_stops_it_all(executor: TerminalExecutor, workspace: Path) -> None:
    run(executor, "true")
    bash = session_pid(executor.session)
    result: list[TerminalObservation] = []
    thread = threading.Thread(
        target=lambda: result.append(
            run(
                executor,
                f"(setsid sleep 300 > /dev/null 2>&1 & echo pid=$!); sleep 15; touch {SIDE_EFFECT}",
            )
        ),
    )
    thread.start()
    deadline = time.monotonic() + 10
    while sum(comm(p) == "sleep" for p in running_under(bash)) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    executor.close()
    thread.join(5)
    [obs] = result
    assert "closed" in obs.text
    [job] = pids_in(obs.text)
    assert not alive(job) and not alive(bash)
    time.sleep(LATER)
    assert not (workspace / SIDE_EFFECT).exists()


# --- the harness is invisible to the command ---------------------------------------------


def test_the_command_runs_as_if_typed_at_the_top_level(
    executor: TerminalExecutor, workspace: Path
) -> None:
    obs = run(executor, 'echo "status=$? funcs=[${FUNCNAME[*]}] args=$#"')
    assert obs.text == "status=0 funcs=[] args=0\n[exit code 0]"
    obs = run(executor, "declare -A MAP=([k]=v); declare N=3; typeset T=t; exec 4> out.txt")
    assert obs.exit_code == 0
    obs = run(executor, 'echo "${MAP[k]} $N $T" >&4; cat out.txt')
    assert obs.text == "v 3 t\n[exit code 0]"
    obs = run(executor, "no_such_command_zz")
    assert obs.exit_code == 127
    # Lines are counted in the command, not in everything bash was ever sent.
    assert "line 1: no_such_command_zz: command not found" in obs.text
    obs = run(executor, "true\ncd /no/such/dir")
    assert "line 2: cd: /no/such/dir: No such file or directory" in obs.text
    obs = run(executor, "false; echo $?; (exit 7)")
    assert obs.text == "1\n[exit code 7]"


def test_set_e_still_ends_the_shell(executor: TerminalExecutor) -> None:
    obs = run(executor, "set -e; false; echo unreachable")
    assert "unreachable" not in obs.text
    assert "shell exited with code 1" in obs.text


def test_a_stop_leaves_nothing_of_itself_behind(executor: TerminalExecutor) -> None:
    run(executor, "true")
    watcher = interrupt_when_sleeping(executor)
    assert run(executor, "sleep 15").interrupted
    watcher.join()
    obs = run(executor, 'trap -p DEBUG; shopt -q extdebug || echo "no extdebug"; echo "$-"')
    assert obs.text.startswith("no extdebug\n")
    assert "e" not in obs.text.split("\n")[1]
    obs = run(executor, "for i in 1 2 3; do echo $i; done")
    assert obs.text == "1\n2\n3\n[exit code 0]"


def test_a_stale_interrupt_does_not_stop_the_next_command(executor: TerminalExecutor) -> None:
    run(executor, "true")
    bash = session_pid(executor.session)
    for _ in range(20):
        timer = threading.Timer(0.02, executor.interrupt)
        timer.start()
        run(executor, "sleep 0.02")
        timer.join()
        assert run(executor, "echo ok").text == "ok\n[exit code 0]"
    assert executor.session.pid == bash


def test_an_interrupt_at_any_moment_of_the_start_stops_it(
    executor: TerminalExecutor, workspace: Path
) -> None:
    run(executor, "true")
    bash = session_pid(executor.session)
    # Spread the interrupts over the time a start takes on this machine now, so a loaded
    # machine still has most of them land inside the start rather than before it.
    began = time.monotonic()
    for _ in range(3):
        run(executor, "true")
    start = (time.monotonic() - began) / 3
    stopped: list[int] = []
    for i in range(30):
        timer = threading.Timer(start * i / 10, executor.interrupt)
        timer.start()
        obs = run(executor, f"sleep 0.3; touch {SIDE_EFFECT}{i}")
        timer.join()
        if obs.interrupted:
            stopped.append(i)
        else:  # the interrupt came before the command began, so it did not apply
            assert obs.exit_code == 0 and (workspace / f"{SIDE_EFFECT}{i}").exists()
    time.sleep(0.5)
    assert len(stopped) >= 10
    assert [i for i in stopped if (workspace / f"{SIDE_EFFECT}{i}").exists()] == []
    assert executor.session.pid == bash


def test_the_shell_adopts_and_reaps_what_a_command_detaches(executor: TerminalExecutor) -> None:
    obs = run(executor, "(sleep 0.5 > /dev/null 2>&1 & echo pid=$!)")
    [orphan] = pids_in(obs.text)
    bash = session_pid(executor.session)
    assert parents().get(orphan) == bash  # adopted by bash, not by init
    assert wait_dead([orphan]) == []
    time.sleep(0.2)
    assert orphan not in parents()  # reaped, not left a zombie
    assert run(executor, "wait; echo waited").text == "waited\n[exit code 0]"


def ignored_signals(status: str) -> int:
    return int(re.search(r"^SigIgn:\s*([0-9a-f]+)$", status, re.MULTILINE)[1], 16)  # type: ignore[index]


def test_the_shell_starts_with_the_signal_dispositions_of_a_plain_child(
    executor: TerminalExecutor,
) -> None:
    obs = run(executor, "yes | head -n 2")
    assert obs.text == "y\ny\n[exit code 0]"  # yes dies of SIGPIPE, silently
    obs = run(executor, "cat /proc/self/status")
    # What any child of this process would inherit; subprocess restores SIGPIPE and SIGXFSZ.
    restored = (1 << (signal.SIGPIPE - 1)) | (1 << (signal.SIGXFSZ - 1))
    expected = ignored_signals(Path("/proc/self/status").read_text()) & ~restored
    assert ignored_signals(obs.text) == expected


def test_the_shell_gets_the_environment_as_given(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("LANG", "LC_ALL", "LC_CTYPE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PROJECT_TEST_VALUE", "a b=c")
    session = BashSession(shell="bash", working_dir=str(workspace))
    out: list[bytes] = []
    try:
        assert session.run("env", 10, out.append).exit_code == 0
    finally:
        session.close()
    env = dict(line.split("=", 1) for line in b"".join(out).decode().splitlines() if "=" in line)
    assert env["PROJECT_TEST_VALUE"] == "a b=c"
    assert "LC_CTYPE" not in env  # Python's start-up may set it in the shim; bash must not see it
