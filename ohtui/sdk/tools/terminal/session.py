"""BashSession: one persistent bash process that runs commands one at a time.

How a command is written to the shell and its output cut at its end is `framing`'s.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal

from ohtui.sdk.tools.terminal.environment import agent_environment
from ohtui.sdk.tools.terminal.first_shell import READY, take
from ohtui.sdk.tools.terminal.framing import Framer, command_script
from ohtui.sdk.tools.terminal.processes import (
    children_of,
    descendants,
    direct_children,
    freeze,
    is_running,
    process_table,
    signal_pids,
    subtree,
    thaw,
    wait_gone,
)
from ohtui.sdk.tools.terminal.supervisor import shell_command, supervised
from ohtui.sdk.utils.spawn import popen

if TYPE_CHECKING:
    from ohtui.sdk.sandbox import Sandbox

logger = logging.getLogger(__name__)

# Pagers and prompts would wait for a user that is not there.
DEFAULT_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "TERM": "dumb",
    "GIT_TERMINAL_PROMPT": "0",
    "PYTHONUNBUFFERED": "1",
}
READ_CHUNK = 64 * 1024
TERM_GRACE = 1.0
"""Seconds a killed command gets to exit after SIGTERM before SIGKILL."""
KILL_GRACE = 1.0
"""Seconds more to wait for bash to finish the command after SIGKILL, before killing bash."""
EXIT_DRAIN = 0.5
"""Seconds to wait for the last output of a bash that exited."""
SLOW_START = 5.0
"""Seconds after which a shell that has not started yet is logged as slow (it is waited for:
a loaded machine starts processes slowly, and that is no failure)."""
GIVE_UP = 120.0
"""Seconds after which a shell still not found is taken to be the started process itself
(stopping it stops everything under it)."""
BUSY_AFTER = 0.5
"""Seconds a stopped command may run no process and still not end before bash is deemed
busy in itself (a loop in a command that ignores the stop) and killed."""

Outcome = Literal["done", "exited", "timeout", "idle", "interrupted", "closed"]


class SessionClosedError(RuntimeError):
    """The session was closed; it runs no more commands."""


@dataclass(frozen=True)
class RunResult:
    """How a command ended. Its output went to the sink given to `BashSession.run`."""

    exit_code: int | None
    """The command's exit status; bash's own when it exited; None when the command was killed."""
    working_dir: str
    """The shell's cwd afterwards (the last known one when it could not be read)."""
    timed_out: bool = False
    idle: bool = False
    """Stopped for printing nothing new for the idle timeout (`timed_out` is set too)."""
    interrupted: bool = False
    shell_exited: bool = False
    """Bash itself ended during the command (e.g. `exit 3`, or a stop under `set -e`)."""
    shell_killed: bool = False
    """The command could not be stopped, so bash was killed with it."""
    closed: bool = False
    """The session was closed while the command ran."""
    new_shell: bool = False
    """A new bash process was started for this command."""


class BashSession:
    """A bash process kept alive across commands, so cwd and exported variables persist.

    Bash starts on the first command, from this process's environment without the variables
    `environment.WITHHELD` names, plus `env` (default: DEFAULT_ENV). `interrupt` and `close`
    may be called from any thread while `run` blocks in another.
    """

    def __init__(
        self,
        *,
        shell: str,
        working_dir: str,
        env: Mapping[str, str] | None = None,
        sandbox: Sandbox | None = None,
    ):
        """`sandbox`: bubblewrap confinement for bash and everything it starts (None: none)."""
        self._shell = shell
        self._sandbox = sandbox if sandbox is not None and sandbox.active else None
        self._shell_pid: int | None = None
        self._reaper_pid: int | None = None
        self._nested = False  # bash runs under bubblewrap's init, not as a child of ours
        self._home = working_dir
        self._extra_env = dict(DEFAULT_ENV if env is None else env)
        self._env: dict[str, str] | None = None  # what the running bash started with
        self._cwd = working_dir
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._reader_stop = threading.Event()
        self._generation = 0
        # Guards the fields the reader thread shares with `run`, `interrupt` and `close`.
        self._cond = threading.Condition()
        self._frame: Framer | None = None
        self._last_output = 0.0  # when the running command last printed (monotonic)
        self._eof = False
        self._interrupt_requested = False
        self._closed = False
        self._run_lock = threading.Lock()  # one command at a time
        self._proc_lock = threading.RLock()  # starting and killing bash

    @property
    def pid(self) -> int | None:
        """The pid of the running bash, if any (inside a sandbox: bash, not bubblewrap);
        waits for a bash still starting."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return None
        located = self._locate(wait=True)
        return located[1] if located is not None else None

    @property
    def sandbox(self) -> Sandbox | None:
        """The sandbox bash runs in, if any."""
        return self._sandbox

    @property
    def working_dir(self) -> str:
        """The shell's cwd after the last command (the workspace before any)."""
        return self._cwd

    @property
    def generation(self) -> int:
        """Counts the bash processes started: a new one is a new value."""
        return self._generation

    @property
    def environment(self) -> dict[str, str]:
        """The environment bash started with (before the sandbox's own changes), or would
        start with now; later commands may have changed it in the shell."""
        if self._env is not None and self._proc is not None:
            return self._env
        return {**agent_environment(), **self._extra_env}

    def background(self) -> list[int]:
        """Processes that earlier commands started and that still run, detached or not
        (call between commands: bash itself and what holds it are not counted)."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return []
        located = self._locate(wait=False)
        if located is None:
            return []  # bash is not up yet: it has run nothing
        holders = {proc.pid, *located}
        found: list[int] = []
        stack = [proc.pid]
        while stack:
            for child in direct_children(stack.pop()):
                stack.append(child)
                if child not in holders and is_running(child):
                    found.append(child)
        return found

    @property
    def started(self) -> bool:
        """Whether bash was started (and not killed since)."""
        return self._proc is not None

    @property
    def closed(self) -> bool:
        """Whether `close` was called."""
        return self._closed

    def run(
        self,
        command: str,
        timeout: float,
        sink: Callable[[bytes], None],
        env: Mapping[str, str] | None = None,
        idle_timeout: float | None = None,
    ) -> RunResult:
        """Run `command` (with `env` exported for it) and send its output to `sink`.
        `idle_timeout`: stop it, as on timeout, once it has printed nothing for that long.

        On timeout or interrupt the whole command line stops: bash runs no more of it, and
        every process it started (detached ones too) is gone before this returns; bash is
        kept. A shell that starts slowly is waited for. Raises SessionClosedError after
        `close`, OSError when bash cannot start.
        """
        with self._run_lock:
            nonce = secrets.token_hex(8)
            frame = Framer(nonce, sink)
            with self._cond:
                self._frame = frame
                self._interrupt_requested = False
            try:
                new_shell = self._ensure_started()
                proc = self._proc
                assert proc is not None and proc.stdin is not None
                # Jobs of earlier commands, and whatever they started, are not this command's.
                earlier = subtree(proc.pid)
                # If bash is gone the write fails; the wait below reports how it exited.
                with contextlib.suppress(OSError):
                    _write_all(proc.stdin, command_script(command, nonce, env))
                outcome = self._wait(frame, proc, timeout, idle_timeout)
                if outcome in ("timeout", "idle", "interrupted"):
                    self._stop_command(frame, proc, earlier)
                    if self._closed and not frame.done:
                        outcome = "closed"
                if outcome == "exited":
                    self._wait_eof(EXIT_DRAIN)  # the last output may still be in the pipe
            finally:
                with self._cond:
                    self._frame = None
            frame.flush()
            return self._result(frame, proc, outcome, new_shell)

    def interrupt(self) -> None:
        """Stop the running command, if any; `run` then returns with `interrupted`."""
        with self._cond:
            if self._frame is not None and not self._frame.done:
                self._interrupt_requested = True
                self._cond.notify_all()

    def restart(self) -> None:
        """Kill bash and start a new one in the workspace. Raises OSError if it cannot start."""
        with self._run_lock, self._proc_lock:
            self._kill_process()
            self._ensure_started()

    def close(self) -> None:
        """Kill bash and everything it started, detached or not. Idempotent."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        with self._proc_lock:
            self._kill_process()

    def _result(
        self, frame: Framer, proc: subprocess.Popen[bytes], outcome: Outcome, new_shell: bool
    ) -> RunResult:
        if frame.working_dir:
            self._cwd = frame.working_dir
        if outcome == "done":
            return RunResult(frame.exit_code, self._cwd, new_shell=new_shell)
        if outcome == "closed":
            return RunResult(None, self._cwd, closed=True, new_shell=new_shell)
        if outcome == "exited":
            with self._proc_lock:
                code = _shell_status(proc)
                self._kill_process()
            return RunResult(code, self._cwd, shell_exited=True, new_shell=new_shell)
        # Stopped. Bash that never came back to the harness ended with the command (`set -e`)
        # or ignored the stop (a loop in bash itself); either way only its end stops it all.
        exited = killed = False
        if not frame.done:
            with self._proc_lock:
                exited = proc.poll() is not None
                killed = not exited
                self._kill_process()
        return RunResult(
            None,
            self._cwd,
            timed_out=outcome in ("timeout", "idle"),
            idle=outcome == "idle",
            interrupted=outcome == "interrupted",
            shell_exited=exited,
            shell_killed=killed,
            new_shell=new_shell,
        )

    def _ensure_started(self) -> bool:
        """Start bash unless it runs; return whether a new one was started."""
        with self._proc_lock:
            if self._closed:
                raise SessionClosedError("the terminal session is closed")
            if self._proc is not None and self._proc.poll() is None:
                return False
            self._kill_process()  # reap a bash that exited, and stop its reader
            argv = shell_command(self._shell, sandboxed=self._sandbox is not None)
            # Never ohtui's settings or the LLM keys: see environment.py.
            env = {**agent_environment(), **self._extra_env}
            self._env = env
            proc = None
            from ohtui.sdk.sandbox.boundary import SETUP_TRIES

            for _ in range(SETUP_TRIES):
                proc = self._start(argv, env)
                if proc is not None:
                    break
            if proc is None:  # started once more, to say why it cannot
                proc = self._start(argv, env, check=False)
            assert proc is not None and proc.stdout is not None
            self._generation += 1
            self._reader_stop = threading.Event()
            with self._cond:
                self._eof = False
            self._reader = threading.Thread(
                target=self._read_loop,
                args=(proc.stdout, self._generation, self._reader_stop),
                name=f"terminal-reader-{proc.pid}",
                daemon=True,
            )
            self._proc = proc
            self._cwd = self._home
            self._reader.start()
            # Bash itself is found when first needed (a stop): the command is written to it
            # at once, and it runs it as soon as it is up, however slowly that is.
            self._nested = self._sandbox is not None
            located = not (self._nested or supervised(argv))
            self._shell_pid = self._reaper_pid = proc.pid if located else None
            return True

    def _start(
        self, argv: list[str], env: dict[str, str], *, check: bool = True
    ) -> subprocess.Popen[bytes] | None:
        """Start bash (in the sandbox, if any); None when the sandbox failed to set up. What
        it covers is listed just before it starts, and a path gone in between (another
        program's socket removed) fails that one start: in the sandbox, bash is asked to
        say it is up before anything else is written to it. The shell the conversation's
        sandbox check started and kept (see first_shell) is taken when it was started so."""
        if self._sandbox is not None and check:
            kept = take(self._sandbox, argv, env, self._home)
            if kept is not None:
                return kept
        launch = self._sandbox.launch(argv, env) if self._sandbox is not None else None
        # Started from the process-lifetime thread: the shell (and the sandbox) end when
        # this process ends, however it ends.
        proc = popen(
            launch.argv if launch is not None else argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=self._home,
            env=launch.environment(env) if launch is not None else env,
            preexec_fn=launch.before_exec if launch is not None else None,
            start_new_session=True,  # its own process group, killed as one on close
            bufsize=0,
        )
        if launch is None or not check:
            return proc
        assert proc.stdin is not None and proc.stdout is not None
        with contextlib.suppress(OSError):
            _write_all(proc.stdin, f"echo {READY}\n".encode())
        said = b""
        while READY.encode() not in said:
            chunk = proc.stdout.read(4096)
            if not chunk:
                break
            said += chunk
        if READY.encode() in said:
            return proc
        proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stdin.close()
        logger.info("the sandbox did not set up (%s); starting it again", said[-200:])
        return None

    def _locate(self, *, wait: bool) -> tuple[int, int] | None:
        """(The process that adopts what commands detach, bash); None when bash is not up
        yet and `wait` is false, or the session is closed."""
        proc = self._proc
        if proc is None:
            return None
        if self._shell_pid is None or self._reaper_pid is None:
            found = self._find_shell(proc, wait=wait)
            if found is None:
                return None
            self._reaper_pid, self._shell_pid = found
        return self._reaper_pid, self._shell_pid

    def _find_shell(self, proc: subprocess.Popen[bytes], *, wait: bool) -> tuple[int, int] | None:
        """Bash is the child of the supervisor, or under bubblewrap the child of its init (the
        child of bubblewrap): (that parent, bash) once bash runs; both are the started
        process when it exits first. Without `wait`, None when bash is not up yet."""
        name = os.path.basename(self._shell)[:15]
        started = time.monotonic()
        slow_logged = False
        while proc.poll() is None and not self._closed:
            reaper = proc.pid
            if self._nested:
                inits = direct_children(proc.pid)
                reaper = inits[0] if inits else 0
            for pid in direct_children(reaper) if reaper else ():
                with contextlib.suppress(OSError):
                    if Path(f"/proc/{pid}/comm").read_text().strip() == name:
                        return reaper, pid
            if not wait:
                return None
            waited = time.monotonic() - started
            if waited > GIVE_UP:  # not found as expected (a renamed shell): what started
                logger.warning("the shell (pid %s) was not found; stopping it whole", proc.pid)
                break
            if not slow_logged and waited > SLOW_START:
                slow_logged = True
                logger.warning("the shell (pid %s) is slow to start; still waiting", proc.pid)
            time.sleep(0.002)
        return None if self._closed else (proc.pid, proc.pid)

    def _read_loop(self, stream: IO[bytes], generation: int, stop: threading.Event) -> None:
        """Read bash's output until EOF or `stop`, so a chatty command never blocks on the pipe."""
        fd = stream.fileno()
        try:
            while not stop.is_set():
                ready, _, _ = select.select([fd], [], [], 0.1)
                if not ready:
                    continue
                try:
                    chunk = os.read(fd, READ_CHUNK)
                except OSError:
                    chunk = b""
                with self._cond:
                    if generation != self._generation:
                        return
                    if not chunk:
                        self._eof = True
                        self._cond.notify_all()
                        return
                    if self._frame is not None:
                        self._last_output = time.monotonic()
                        try:
                            self._frame.feed(chunk)
                        except Exception:  # a broken sink must not leave `run` waiting
                            logger.exception("terminal output sink failed")
                        if self._frame.done:
                            self._cond.notify_all()
        finally:
            stream.close()

    def _wait(
        self,
        frame: Framer,
        proc: subprocess.Popen[bytes],
        timeout: float,
        idle_timeout: float | None = None,
    ) -> Outcome:
        deadline = time.monotonic() + timeout
        with self._cond:
            self._last_output = time.monotonic()
            while True:
                if frame.done:
                    return "done"
                if self._closed:
                    return "closed"
                if self._interrupt_requested:
                    return "interrupted"
                # Polling too: a background job holding the pipe open hides bash's EOF.
                if self._eof or proc.poll() is not None:
                    return "exited"
                now = time.monotonic()
                remaining = deadline - now
                if remaining <= 0:
                    return "timeout"
                if idle_timeout is not None and now - self._last_output >= idle_timeout:
                    return "idle"
                self._cond.wait(min(remaining, 0.1))

    def _wait_done(self, frame: Framer, proc: subprocess.Popen[bytes], timeout: float) -> bool:
        """Wait until bash finishes the command, exits, or the session closes."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not (frame.done or self._closed or self._eof or proc.poll() is not None):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(min(remaining, 0.05))
            return frame.done

    def _wait_eof(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._eof and (remaining := deadline - time.monotonic()) > 0:
                self._cond.wait(remaining)

    def _stop_command(
        self, frame: Framer, proc: subprocess.Popen[bytes], earlier: set[int]
    ) -> None:
        """Stop the command: bash abandons the rest of its line, and every process it started dies.

        Each round freezes the command's processes, sends bash USR2 (STOP_TRAP), then SIGTERM
        (SIGKILL after TERM_GRACE) to them, and lets them run: bash meets the trap before it
        learns that its child died, so it starts nothing more of the line. USR2 goes again each
        round until bash finishes, because bash clears the flag as a command begins. Returns
        once bash has finished the command and none of its processes runs, or when bash will
        not finish it (it ended, or it ignores the stop): the frame is then unfinished.
        """

        located = self._locate(wait=False)
        if located is None:
            return  # bash is not up yet, so nothing of the command runs: it all ends instead
        reaper_pid, shell_pid = located

        def command_tree() -> set[int]:
            # What the command started, and what it detached (adopted by the reaper).
            table = process_table()
            roots = children_of(shell_pid, table) | children_of(reaper_pid, table)
            tree = descendants(roots - earlier - {shell_pid}, table)
            return {pid for pid in tree if is_running(pid)}

        started = time.monotonic()
        terminated: set[int] = set()
        idle_since: float | None = None
        while not self._closed and proc.poll() is None:
            now = time.monotonic()
            if now - started >= TERM_GRACE + KILL_GRACE:
                return
            frozen = freeze(command_tree)
            if frame.done and not frozen:
                return
            if not frame.done:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(shell_pid, signal.SIGUSR2)
            if now - started < TERM_GRACE:
                signal_pids(frozen - terminated, signal.SIGTERM)  # once: let them clean up
                terminated |= frozen
            else:
                signal_pids(frozen, signal.SIGKILL)
            thaw(frozen)
            # Nothing of the command runs, yet bash does not finish it: it is busy in itself.
            if frozen or frame.done:
                idle_since = None
            elif idle_since is None:
                idle_since = now
            elif now - idle_since >= BUSY_AFTER:
                return
            self._wait_done(frame, proc, 0.05)

    def _kill_process(self) -> None:
        """Kill bash and everything under it, and its process group; stop the reader.

        Idempotent. Everything is frozen first, so nothing forks or runs on meanwhile.
        """
        with self._proc_lock:
            proc, self._proc = self._proc, None
            reader, self._reader = self._reader, None
            stop = self._reader_stop
        if proc is not None:

            def everything() -> set[int]:
                return {pid for pid in descendants([proc.pid]) if is_running(pid)}

            frozen = freeze(everything)
            signal_pids(frozen, signal.SIGTERM)
            _signal_group(proc.pid, signal.SIGTERM)
            thaw(frozen)
            survivors = wait_gone(frozen, TERM_GRACE)
            signal_pids(survivors | everything(), signal.SIGKILL)
            _signal_group(proc.pid, signal.SIGKILL)
            try:
                proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                logger.warning("bash (pid %s) did not exit after SIGKILL", proc.pid)
            wait_gone(survivors, KILL_GRACE)
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
        stop.set()
        if reader is not None and reader is not threading.current_thread():
            reader.join(timeout=1.0)


def _write_all(stream: IO[bytes], data: bytes) -> None:
    """Write all of `data` to an unbuffered stream, which may accept it in parts."""
    view = memoryview(data)
    while view:
        written = stream.write(view)
        view = view[written or 0 :]


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _shell_status(proc: subprocess.Popen[bytes]) -> int | None:
    """Bash's exit status, as a shell reports it (128 + N when killed by signal N)."""
    try:
        code = proc.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        return None
    return 128 - code if code < 0 else code
