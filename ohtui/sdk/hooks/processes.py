"""Hook commands as processes: run to completion with a timeout, or started in the background."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import threading
import time
from typing import TYPE_CHECKING, Any

from ohtui.sdk.hooks.config import HookDefinition
from ohtui.sdk.hooks.result import HookResult
from ohtui.sdk.hooks.types import HookDecision, HookEvent

if TYPE_CHECKING:
    from ohtui.sdk.sandbox import Sandbox
    from ohtui.sdk.sandbox.boundary import Launch

logger = logging.getLogger(__name__)

BLOCK_EXIT_CODE = 2
"""The exit code by which a command hook blocks; any other failing code blocks nothing."""
OUTPUT_LIMIT = 10_000
"""Characters kept of a hook's stdout and of its stderr."""
TERMINATE_GRACE = 1.0
"""Seconds a background hook has to exit after SIGTERM before it is killed."""
_DECISIONS = {
    "allow": HookDecision.ALLOW,
    "approve": HookDecision.ALLOW,  # Claude Code's older spelling
    "deny": HookDecision.DENY,
    "block": HookDecision.DENY,  # Claude Code's spelling
}


def hook_environment(event: HookEvent, working_dir: str) -> dict[str, str]:
    """What a hook command's environment is: the agent's shell's (without ohtui's keys),
    plus the OPENHANDS_* variables describing the event."""
    from ohtui.sdk.tools.terminal.environment import agent_environment

    env = agent_environment()
    env["OPENHANDS_PROJECT_DIR"] = working_dir
    env["OPENHANDS_SESSION_ID"] = event.session_id or ""
    env["OPENHANDS_EVENT_TYPE"] = str(event.event_type)
    if event.tool_name:
        env["OPENHANDS_TOOL_NAME"] = event.tool_name
    return env


def hook_launch(
    hook: HookDefinition, env: dict[str, str], sandbox: Sandbox | None = None
) -> Launch:
    """How a command hook runs: `bash -c COMMAND` with `env`, inside `sandbox` when it is
    on, exactly as the agent's shell is (its environment changes and kernel restriction
    included)."""
    from ohtui.sdk.sandbox.boundary import Launch

    argv = ["bash", "-c", hook.command]
    return sandbox.launch(argv, env) if sandbox is not None else Launch(argv)


def _popen(launch: Launch, env: dict[str, str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """Start a hook from the process-lifetime thread (see ohtui.sdk.utils.spawn): the run's
    thread that asks for it ends with the run, and the sandbox dies with the thread that
    started it."""
    from ohtui.sdk.utils.spawn import popen

    return popen(
        launch.argv,
        env=launch.environment(env),
        preexec_fn=launch.before_exec,
        **kwargs,
    )


def run_command(
    hook: HookDefinition,
    event: HookEvent,
    working_dir: str,
    env: dict[str, str],
    sandbox: Sandbox | None = None,
) -> HookResult:
    """Run a command hook to completion (killed with all it started at its timeout), in
    `sandbox` when it is on."""
    try:
        process = _popen(
            hook_launch(hook, env, sandbox),
            env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=working_dir,
            start_new_session=True,  # so a timeout kills everything the hook started
        )
    except OSError as exc:
        return _failed(hook, f"could not start: {exc.strerror or exc}")
    try:
        out, err = process.communicate(event.stdin_json().encode(), timeout=hook.timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return _failed(hook, f"timed out after {hook.timeout:g} s and was killed")
    stdout, stderr = (data.decode("utf-8", errors="replace") for data in (out, err))
    return _outcome(hook, process.returncode, stdout, stderr)


def _failed(hook: HookDefinition, error: str) -> HookResult:
    return HookResult(hook=hook, success=False, exit_code=None, error=error)


def _outcome(hook: HookDefinition, code: int, stdout: str, stderr: str) -> HookResult:
    """Read a finished command's exit code and output (a JSON object on stdout decides)."""
    kept = {"stdout": stdout[:OUTPUT_LIMIT], "stderr": stderr[:OUTPUT_LIMIT]}
    if code not in (0, BLOCK_EXIT_CODE):
        detail = stderr.strip() or stdout.strip() or "no output"
        return HookResult(
            hook=hook,
            success=False,
            exit_code=code,
            error=f"exited with code {code}: {detail[:OUTPUT_LIMIT]}",
            **kept,
        )
    answer = _json_object(stdout)
    decision = _DECISIONS.get(str(answer.get("decision", "")).lower())
    reason = answer.get("reason")
    context = answer.get("additionalContext")
    blocked = code == BLOCK_EXIT_CODE or decision is HookDecision.DENY
    blocked = blocked or answer.get("continue") is False
    if blocked and not reason and code == BLOCK_EXIT_CODE:
        reason = stderr.strip() or (stdout.strip() if not answer else "")
    return HookResult(
        hook=hook,
        success=code == 0,
        blocked=blocked,
        exit_code=code,
        decision=decision,
        reason=str(reason)[:OUTPUT_LIMIT] if reason else None,
        additional_context=str(context) if context else None,
        **kept,
    )


def _json_object(stdout: str) -> dict[str, Any]:
    """A hook's structured answer: its stdout as a JSON object, or {} when it is not one."""
    text = stdout.strip()
    if not text.startswith("{"):
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def start_command(
    hook: HookDefinition,
    event: HookEvent,
    working_dir: str,
    env: dict[str, str],
    sandbox: Sandbox | None = None,
) -> subprocess.Popen[bytes]:
    """Start a command hook in the background (in `sandbox` when it is on); its output is
    discarded. OSError if it cannot start."""
    import tempfile  # only background hooks need it; it is slow to import

    # The event is handed over in a file, not a pipe: a hook that never reads its stdin
    # must not block the agent on a full pipe.
    with tempfile.TemporaryFile() as stdin:
        stdin.write(event.stdin_json().encode())
        stdin.seek(0)
        return _popen(
            hook_launch(hook, env, sandbox),
            env,
            stdin=stdin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=working_dir,
            **_own_process_group(),
        )


def _own_process_group() -> dict[str, Any]:
    """Popen arguments giving a hook a process group of its own, so that ending the group
    ends everything the hook started."""
    if os.name == "nt":
        group = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)  # defined on Windows only
        return {"creationflags": group, "start_new_session": False}
    return {"creationflags": 0, "start_new_session": True}


class AsyncProcessManager:
    """The background hook processes still running: each is ended at its timeout, and all
    of them when the session ends."""

    def __init__(self) -> None:
        self._processes: list[tuple[subprocess.Popen[Any], float, float]] = []
        self._lock = threading.Lock()

    def add_process(self, process: subprocess.Popen[Any], timeout: float) -> None:
        """Track a background process that may run for `timeout` seconds."""
        with self._lock:
            self._processes.append((process, time.monotonic(), timeout))

    def cleanup_expired(self) -> None:
        """End the processes past their timeout; forget those that exited."""
        now = time.monotonic()
        with self._lock:
            running = [entry for entry in self._processes if entry[0].poll() is None]
            expired = [p for p, started, limit in running if now - started > limit]
            self._processes = [entry for entry in running if entry[0] not in expired]
        for process in expired:
            logger.warning("background hook (pid %d) ran past its timeout; ending it", process.pid)
            _terminate(process)

    def cleanup_all(self) -> None:
        """End every background process."""
        with self._lock:
            processes, self._processes = [p for p, _, _ in self._processes], []
        for process in processes:
            _terminate(process)


def _terminate(process: subprocess.Popen[Any]) -> None:
    """End a hook's process group: SIGTERM, then SIGKILL if it lingers; reaps it."""
    if process.poll() is not None:
        return
    if os.name == "nt":
        _terminate_tree_on_windows(process)
        return
    # The hook leads its own session (start_new_session), so its group id is its pid.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(TERMINATE_GRACE)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _terminate_tree_on_windows(process: subprocess.Popen[Any]) -> None:
    """Windows has no process groups to signal: taskkill ends the hook's process tree."""
    subprocess.run(
        ["taskkill", "/F", "/T", "/PID", str(process.pid)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    try:
        process.wait(TERMINATE_GRACE)
    except subprocess.TimeoutExpired:
        process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(TERMINATE_GRACE)
