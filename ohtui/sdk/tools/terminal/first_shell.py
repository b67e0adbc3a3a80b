"""The agent's shell started once when a conversation opens in a sandbox: the check that the
sandbox works (a broken one is reported before the first command), and the shell the first
command then runs in, instead of a second start.

A sandboxed start costs ~30 ms (bubblewrap sets up its namespaces and mounts); checking with
one shell and running the first command in another cost the user both. The shell kept here is
handed to the terminal's first start only when it was started exactly as that start would
start it (same sandbox object, argv, environment, working directory) and what the sandbox's
mounts were made from has not changed since (`Sandbox.layout`); otherwise it is ended and the
terminal starts its own, as before.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ohtui.sdk.sandbox import Sandbox

logger = logging.getLogger(__name__)

READY = "ohtui-shell-ready"
"""What the shell is asked to echo first: it is up, in a sandbox that set up."""
PROBE_GRACE = 5.0
"""Seconds a shell that closed its output without saying it is up has to exit on its own
(its status is part of what the user is told)."""


@dataclass
class _Kept:
    proc: subprocess.Popen[bytes]
    argv: list[str]
    env: dict[str, str]
    cwd: str
    layout: tuple[tuple[int, int] | None, ...]


_kept: dict[int, _Kept] = {}
"""Kept shells by the id of their sandbox (removed when the sandbox is collected)."""
_lock = threading.Lock()


def start_shell(
    sandbox: Sandbox, argv: list[str], env: dict[str, str], cwd: str, timeout: float | None
) -> tuple[subprocess.Popen[bytes] | None, str]:
    """Start `argv` in the sandbox as the terminal starts its shell and wait until it says it
    is up: (the process, "") or, when the sandbox did not set up, (None, why in words).
    What the sandbox covers is listed just before it starts."""
    from ohtui.sdk.sandbox.availability import last_line
    from ohtui.sdk.utils.spawn import popen

    launch = sandbox.launch(argv, env)
    # Started from the process-lifetime thread: the shell (and the sandbox) end when this
    # process ends, however it ends.
    try:
        proc = popen(
            launch.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=launch.environment(env),
            preexec_fn=launch.before_exec,
            start_new_session=True,  # its own process group, killed as one on close
            bufsize=0,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"the sandboxed shell could not be started ({exc})"
    assert proc.stdin is not None and proc.stdout is not None
    with contextlib.suppress(OSError):
        proc.stdin.write(f"echo {READY}\n".encode())
    said = b""
    deadline = None if timeout is None else time.monotonic() + timeout
    fd = proc.stdout.fileno()
    while READY.encode() not in said:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                _end(proc)
                return None, f"the sandboxed shell did not start within {timeout:.0f} s"
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        said += chunk
    if READY.encode() in said:
        return proc, ""
    code = _end(proc, grace=PROBE_GRACE)
    logger.info("the sandbox did not set up (%s)", said[-200:])
    return None, (
        f"the sandboxed shell exited at once with status {code} "
        f"({last_line(said.decode(errors='replace'))})"
    )


def check_and_keep(sandbox: Sandbox, argv: list[str], env: dict[str, str], cwd: str) -> str | None:
    """Start the shell in the sandbox (SETUP_TRIES tries, as long as a loaded machine needs):
    None when it started, and it is kept for the terminal's first start; else why it cannot.
    A shell kept earlier for this sandbox is ended first."""
    from ohtui.sdk.sandbox.availability import PROBE_TIMEOUT
    from ohtui.sdk.sandbox.boundary import SETUP_TRIES

    if not sandbox.active:
        return None
    release(sandbox)
    problem = ""
    for _ in range(SETUP_TRIES):
        layout = sandbox.layout()
        proc, problem = start_shell(sandbox, argv, env, cwd, PROBE_TIMEOUT)
        if proc is not None:
            with _lock:
                if id(sandbox) not in _kept:
                    weakref.finalize(sandbox, _drop, id(sandbox))
                _kept[id(sandbox)] = _Kept(proc, list(argv), dict(env), cwd, layout)
            return None
    return problem


def take(
    sandbox: Sandbox, argv: list[str], env: dict[str, str], cwd: str
) -> subprocess.Popen[bytes] | None:
    """The shell `check_and_keep` kept for this sandbox, when it was started exactly as
    `argv`, `env` and `cwd` say, still runs, and the sandbox's mounts would be made the same
    now; else None (and a kept shell is ended). Given once."""
    with _lock:
        kept = _kept.pop(id(sandbox), None)
    if kept is None:
        return None
    if (
        kept.argv == argv
        and kept.env == env
        and kept.cwd == cwd
        and kept.proc.poll() is None
        and kept.layout == sandbox.layout()
    ):
        return kept.proc
    _end(kept.proc)
    return None


def release(sandbox: Sandbox) -> None:
    """End the shell kept for this sandbox, if any (its conversation closed, or moved on)."""
    with _lock:
        kept = _kept.pop(id(sandbox), None)
    if kept is not None:
        _end(kept.proc)


def _drop(key: int) -> None:
    with _lock:
        kept = _kept.pop(key, None)
    if kept is not None:
        _end(kept.proc)


def _end(proc: subprocess.Popen[bytes], grace: float = 0.0) -> int:
    """Kill the shell's process group (bubblewrap, and its init and bash with it) unless it
    exits within `grace` seconds; its status."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        return _closed(proc, proc.wait(grace)) if grace else _closed(proc, None)
    return _closed(proc, None)


def _closed(proc: subprocess.Popen[bytes], code: int | None) -> int:
    if code is None:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, 9)
        with contextlib.suppress(OSError):
            proc.kill()
        code = proc.wait()
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    return code
