"""Tests for HookManager on its own (no conversation): what each event's hooks are told,
what comes back, and what is recorded when a hook blocks or fails."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from ohtui.sdk import LLM, HookExecutionEvent
from ohtui.sdk.event.base import Event
from ohtui.sdk.hooks import HookConfig, HookDecision, HookManager, HookResult


def config(event: str, *hooks: dict[str, Any], matcher: str = "*") -> HookConfig:
    return HookConfig.from_dict({"hooks": {event: [{"matcher": matcher, "hooks": list(hooks)}]}})


def capture(path: Path, then: str = "exit 0") -> dict[str, Any]:
    """A command hook that saves the JSON it reads to `path`, then runs `then`."""
    return {"command": f'cat > "{path}"; {then}'}


def test_it_needs_only_a_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".openhands").mkdir()
    (tmp_path / ".openhands" / "hooks.json").write_text(
        json.dumps({"Stop": [{"hooks": [{"command": "exit 2"}]}]})
    )
    manager = HookManager(HookConfig())
    assert manager.working_dir == str(tmp_path)
    assert manager.run_stop() == (True, [])
    # No config: no hooks, not the project's hooks file behind the caller's back.
    assert HookManager().run_stop() == (True, [])
    assert HookManager().config.is_empty()


def test_pre_tool_use_blocks_and_is_told_the_tool(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    manager = HookManager(
        config(
            "PreToolUse",
            capture(seen, 'echo "not in CI" >&2; exit 2'),
            {"command": "touch never-run"},
            matcher="terminal",
        ),
        str(tmp_path),
        "session-1",
    )
    may_run, results = manager.run_pre_tool_use("terminal", {"command": "curl example.com"})
    assert may_run is False
    assert [r.blocked for r in results] == [True]  # the second hook never ran
    assert not (tmp_path / "never-run").exists()
    assert manager.get_blocking_reason(results) == "not in CI"
    assert manager.blocked_by(results) == f"hook `{results[0].hook.command}`: not in CI"  # type: ignore[union-attr]
    payload = json.loads(seen.read_text())
    assert (payload["event_type"], payload["tool_name"]) == ("PreToolUse", "terminal")
    assert payload["tool_input"] == {"command": "curl example.com"}
    assert (payload["session_id"], payload["cwd"]) == ("session-1", str(tmp_path))

    assert manager.run_pre_tool_use("file_editor", {}) == (True, [])  # the matcher says no


def test_post_tool_use_runs_every_hook_and_gets_the_response(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    manager = HookManager(
        config("PostToolUse", {"command": "exit 2"}, capture(seen)), str(tmp_path)
    )
    results = manager.run_post_tool_use("terminal", {"command": "ls"}, {"output": "a.txt"})
    assert [r.blocked for r in results] == [True, False]  # a block does not stop the others
    payload = json.loads(seen.read_text())
    assert payload["tool_response"] == {"output": "a.txt"}


def test_user_prompt_submit_gathers_added_context(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    manager = HookManager(
        config(
            "UserPromptSubmit",
            {"command": 'echo \'{"additionalContext": "Always run the tests"}\''},
            capture(seen, 'echo \'{"additionalContext": "The repo uses uv"}\''),
        ),
        str(tmp_path),
    )
    may_send, context, results = manager.run_user_prompt_submit("Fix the bug")
    assert (may_send, context, len(results)) == (True, "Always run the tests\nThe repo uses uv", 2)
    payload = json.loads(seen.read_text())
    assert payload["message"] == payload["prompt"] == "Fix the bug"
    assert "tool_name" not in payload

    blocking = HookManager(config("UserPromptSubmit", {"command": "exit 2"}), str(tmp_path))
    may_send, context, _ = blocking.run_user_prompt_submit("anything")
    assert (may_send, context) == (False, None)


def test_stop_deny_means_go_on(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    manager = HookManager(
        config("Stop", capture(seen, 'echo \'{"decision": "deny", "reason": "tests?"}\'')),
        str(tmp_path),
    )
    may_stop, results = manager.run_stop(reason="finish", stop_hook_active=True)
    assert may_stop is False
    assert results[0].decision is HookDecision.DENY
    payload = json.loads(seen.read_text())
    assert payload["metadata"] == {"reason": "finish"}
    assert payload["stop_hook_active"] is True


def test_session_hooks_and_background_hooks_ending_with_the_session(tmp_path: Path) -> None:
    started, ended = tmp_path / "started", tmp_path / "ended"
    pid_file = tmp_path / "pid"
    manager = HookManager(
        HookConfig.from_dict(
            {
                "SessionStart": [{"hooks": [{"command": f'touch "{started}"'}]}],
                "SessionEnd": [{"hooks": [{"command": f'touch "{ended}"'}]}],
                "PostToolUse": [
                    {
                        "hooks": [
                            {"command": f'echo $$ > "{pid_file}"; exec sleep 60', "async": True}
                        ]
                    }
                ],
            }
        ),
        str(tmp_path),
    )
    assert [r.success for r in manager.run_session_start()] == [True]
    assert started.exists()
    [background] = manager.run_post_tool_use("terminal", {}, {})
    assert background.async_started
    deadline = time.monotonic() + 5
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    pid = int(pid_file.read_text())
    assert [r.success for r in manager.run_session_end()] == [True]
    assert ended.exists()
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text()


def test_async_pre_tool_use_hooks_cannot_block_and_say_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    manager = HookManager(config("PreToolUse", {"command": "exit 2", "async": True}), str(tmp_path))
    with caplog.at_level(logging.WARNING):
        may_run, results = manager.run_pre_tool_use("terminal", {})
    assert may_run is True
    assert results[0].async_started
    assert "Async hooks in PreToolUse cannot block tool execution" in caplog.text
    assert "1 async hook(s)" in caplog.text
    manager.cleanup_async_processes()


def test_every_hook_run_is_recorded_as_an_event(tmp_path: Path) -> None:
    recorded: list[Event] = []
    manager = HookManager(
        HookConfig.from_dict(
            {
                "PreToolUse": [
                    {
                        "matcher": "terminal",
                        "hooks": [
                            {"command": "echo fine"},
                            {"command": "echo crashed >&2; exit 3"},
                            {"command": "echo nope >&2; exit 2"},
                        ],
                    }
                ]
            }
        ),
        str(tmp_path),
        on_event=recorded.append,
    )
    manager.run_pre_tool_use("terminal", {"command": "ls"}, action_id="a1")
    assert all(isinstance(e, HookExecutionEvent) for e in recorded)
    fine, failed, blocked = recorded
    assert isinstance(fine, HookExecutionEvent)
    assert isinstance(failed, HookExecutionEvent) and isinstance(blocked, HookExecutionEvent)
    assert (fine.success, fine.blocked, fine.exit_code, fine.stdout) == (True, False, 0, "fine\n")
    assert fine.hook_input == {"tool_name": "terminal", "tool_input": {"command": "ls"}}
    assert {e.action_id for e in recorded} == {"a1"}
    assert failed.success is False
    assert (failed.hook_command, failed.exit_code, failed.blocked) == (
        "echo crashed >&2; exit 3",
        3,
        False,
    )
    assert failed.error == "exited with code 3: crashed"
    assert (blocked.hook_event_type, blocked.tool_name) == ("PreToolUse", "terminal")
    assert (blocked.blocked, blocked.reason, blocked.error) == (True, "nope", None)


def test_a_prompt_hook_through_the_manager(tmp_path: Path, llm: LLM, llm_server: Any) -> None:
    llm_server.reply_text('{"decision": "deny", "reason": "Task is incomplete"}')
    manager = HookManager(
        config("Stop", {"type": "prompt", "name": "done", "prompt": "Require the work done"}),
        str(tmp_path),
        llm=llm,
    )
    may_stop, [result] = manager.run_stop()
    assert may_stop is False
    assert (result.blocked, result.reason) == (True, "Task is incomplete")
    assert manager.blocked_by([result]) == "hook `prompt-hook:done`: Task is incomplete"


def test_get_blocking_reason_from_results() -> None:
    manager = HookManager(HookConfig())
    assert manager.get_blocking_reason([HookResult(blocked=True, reason="Custom")]) == "Custom"
    assert manager.get_blocking_reason([HookResult(blocked=True, stderr="From stderr\n")]) == (
        "From stderr"
    )
    assert manager.get_blocking_reason([HookResult(blocked=True)]) == "Blocked by hook"
    assert manager.get_blocking_reason([HookResult()]) is None
    assert manager.blocked_by([HookResult(blocked=True)]) == "a hook: no reason given"
