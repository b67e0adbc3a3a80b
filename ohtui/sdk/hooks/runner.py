"""Running hooks: each command gets the event as JSON on stdin and may block it."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.hook import HookExecutionEvent
from ohtui.sdk.hooks.config import HookConfig, HookDefinition, HookEventType

logger = logging.getLogger(__name__)

BLOCK_EXIT_CODE = 2
_DENY = {"deny", "block"}
_OUTPUT_LIMIT = 4000


@dataclass(frozen=True)
class HookResult:
    """How one hook command went."""

    hook: HookDefinition
    exit_code: int | None
    stdout: str
    stderr: str
    blocked: bool = False
    reason: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class HookVerdict:
    """The combined outcome of the hooks for one event: blocked if any of them blocked."""

    results: list[HookResult] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        """Whether a hook blocked."""
        return any(r.blocked for r in self.results)

    @property
    def reason(self) -> str:
        """Who blocked and why, for the agent and the user."""
        return "; ".join(
            f"hook `{r.hook.command}`: {r.reason or 'no reason given'}"
            for r in self.results
            if r.blocked
        )


def run_hook(hook: HookDefinition, payload: dict[str, Any], working_dir: str) -> HookResult:
    """Run one hook command with `payload` as JSON on stdin; never raises."""
    try:
        process = subprocess.Popen(
            ["bash", "-c", hook.command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=working_dir,
            start_new_session=True,  # so a timeout kills everything the hook started
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    except OSError as exc:
        return HookResult(hook, None, "", "", error=f"could not start: {exc.strerror or exc}")
    try:
        stdout, stderr = process.communicate(json.dumps(payload), timeout=hook.timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return HookResult(
            hook, None, "", "", error=f"timed out after {hook.timeout:g} s and was killed"
        )
    stdout, stderr = stdout[:_OUTPUT_LIMIT], stderr[:_OUTPUT_LIMIT]
    code = process.returncode
    if code == BLOCK_EXIT_CODE:
        return HookResult(
            hook,
            code,
            stdout,
            stderr,
            blocked=True,
            reason=stderr.strip() or stdout.strip() or None,
        )
    if code != 0:
        detail = stderr.strip() or stdout.strip() or "no output"
        return HookResult(hook, code, stdout, stderr, error=f"exited with code {code}: {detail}")
    decision = _decision(stdout)
    if decision is not None and str(decision.get("decision", "")).lower() in _DENY:
        reason = decision.get("reason")
        return HookResult(
            hook, code, stdout, stderr, blocked=True, reason=str(reason) if reason else None
        )
    return HookResult(hook, code, stdout, stderr)


def _decision(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


class HookManager:
    """Runs a conversation's hooks and records blocks and failures as events."""

    def __init__(
        self,
        config: HookConfig,
        working_dir: str,
        session_id: str,
        on_event: Callable[[Event], None],
    ) -> None:
        self.config = config
        self.working_dir = working_dir
        self.session_id = session_id
        self._on_event = on_event

    def run(
        self, event: HookEventType, tool_name: str | None = None, **details: Any
    ) -> HookVerdict:
        """Run the hooks for `event`; the JSON they read holds `details` and the basics."""
        hooks = self.config.hooks_for(event, tool_name)
        if not hooks:
            return HookVerdict()
        payload = {
            "hook_event_name": event.value,
            "session_id": self.session_id,
            "cwd": self.working_dir,
            **({"tool_name": tool_name} if tool_name else {}),
            **details,
        }
        results = []
        for hook in hooks:
            result = run_hook(hook, payload, self.working_dir)
            results.append(result)
            if result.error:
                logger.warning("%s hook %r %s", event.value, hook.command, result.error)
            if result.error or result.blocked:
                self._on_event(
                    HookExecutionEvent(
                        hook_event_name=event.value,
                        command=hook.command,
                        tool_name=tool_name,
                        exit_code=result.exit_code,
                        blocked=result.blocked,
                        reason=result.reason,
                        error=result.error,
                    )
                )
            if result.blocked:
                break  # one block decides; later hooks need not run
        return HookVerdict(results)
