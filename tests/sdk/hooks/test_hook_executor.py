"""Tests for HookExecutor: command hooks as real bash processes (blocking, failing, slow,
in the background), and prompt and agent hooks asking the scripted LLM server."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from llm_server import Reply

from ohtui.sdk import LLM
from ohtui.sdk.conversation.stats import ConversationStats
from ohtui.sdk.hooks import (
    AsyncProcessManager,
    HookDecision,
    HookDefinition,
    HookEvent,
    HookEventType,
    HookExecutor,
    HookType,
)
from ohtui.sdk.llm.metrics import Metrics

PRICED = {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002}


@pytest.fixture
def executor(tmp_path: Path) -> HookExecutor:
    return HookExecutor(working_dir=str(tmp_path))


@pytest.fixture
def event() -> HookEvent:
    return HookEvent(
        event_type=HookEventType.PRE_TOOL_USE,
        tool_name="terminal",
        tool_input={"command": "rm -rf build"},
        session_id="session-1",
        working_dir="/project",
    )


def command(text: str, **fields: Any) -> HookDefinition:
    return HookDefinition.model_validate({"command": text, **fields})


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(condition: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return bool(condition())


# --- command hooks ------------------------------------------------------------------------


def test_a_command_reads_the_event_on_stdin(executor: HookExecutor, event: HookEvent) -> None:
    result = executor.execute(command("cat"), event)
    assert (result.success, result.blocked, result.exit_code, result.error) == (
        True,
        False,
        0,
        None,
    )
    payload = json.loads(result.stdout)
    assert payload["event_type"] == payload["hook_event_name"] == "PreToolUse"
    assert payload["tool_name"] == "terminal"
    assert payload["tool_input"] == {"command": "rm -rf build"}
    assert payload["session_id"] == "session-1"
    assert payload["working_dir"] == payload["cwd"] == "/project"
    assert "tool_response" not in payload  # nothing is sent as null
    assert result.should_continue


@pytest.mark.parametrize(
    ("script", "reason", "decision", "exit_code"),
    [
        ("echo nope >&2; exit 2", "nope", None, 2),
        ("echo plain words; exit 2", "plain words", None, 2),
        ('echo \'{"decision": "deny", "reason": "json no"}\'', "json no", HookDecision.DENY, 0),
        (
            'echo \'{"decision": "block", "reason": "claude no"}\'',
            "claude no",
            HookDecision.DENY,
            0,
        ),
        ('echo \'{"decision": "deny", "reason": "both"}\'; exit 2', "both", HookDecision.DENY, 2),
        ('echo \'{"continue": false, "reason": "halt"}\'', "halt", None, 0),
        ("exit 2", None, None, 2),
    ],
)
def test_a_command_blocks_by_exit_code_2_or_a_json_deny(
    executor: HookExecutor,
    event: HookEvent,
    script: str,
    reason: str | None,
    decision: HookDecision | None,
    exit_code: int,
) -> None:
    result = executor.execute(command(script), event)
    assert result.blocked is True
    assert result.should_continue is False
    assert (result.reason, result.decision, result.exit_code) == (reason, decision, exit_code)
    assert result.error is None


@pytest.mark.parametrize(
    ("script", "decision"),
    [
        ('echo \'{"decision": "allow", "reason": "fine"}\'', HookDecision.ALLOW),
        ('echo \'{"decision": "approve"}\'', HookDecision.ALLOW),
        ('echo \'{"decision": "maybe"}\'', None),
        ("echo not json at all", None),
        ("echo '[1, 2]'", None),
    ],
)
def test_a_command_that_exits_0_allows(
    executor: HookExecutor, event: HookEvent, script: str, decision: HookDecision | None
) -> None:
    result = executor.execute(command(script), event)
    assert (result.success, result.blocked, result.decision) == (True, False, decision)
    assert result.should_continue


def test_additional_context_is_read(executor: HookExecutor, event: HookEvent) -> None:
    result = executor.execute(
        command('echo \'{"additionalContext": "Run the tests with -x"}\''), event
    )
    assert result.additional_context == "Run the tests with -x"
    assert result.should_continue


def test_a_failing_command_is_an_error_that_blocks_nothing(
    executor: HookExecutor, event: HookEvent
) -> None:
    result = executor.execute(
        command('echo \'{"decision": "deny"}\'; echo broken >&2; exit 1'), event
    )
    assert (result.success, result.blocked, result.exit_code) == (False, False, 1)
    assert result.error == "exited with code 1: broken"
    assert result.should_continue


def test_a_command_that_cannot_start_reports_it(tmp_path: Path, event: HookEvent) -> None:
    result = HookExecutor(working_dir=str(tmp_path / "missing")).execute(command("true"), event)
    assert (result.success, result.blocked, result.exit_code) == (False, False, None)
    assert result.error is not None
    assert "could not start" in result.error


def test_a_command_past_its_timeout_is_killed_with_what_it_started(
    executor: HookExecutor, event: HookEvent, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    started = time.monotonic()
    result = executor.execute(
        command(f'sleep 30 & echo "$$ $!" > "{pids}"; wait', timeout=0.5), event
    )
    assert time.monotonic() - started < 5
    assert (result.success, result.blocked, result.exit_code) == (False, False, None)
    assert result.error == "timed out after 0.5 s and was killed"
    for pid in pids.read_text().split():
        assert wait_for(lambda pid=int(pid): not alive(pid)), f"{pid} survived the timeout"


def test_a_command_runs_in_the_working_dir_with_the_event_in_its_environment(
    executor: HookExecutor, event: HookEvent, tmp_path: Path
) -> None:
    result = executor.execute(
        command(
            'echo "$PWD|$OPENHANDS_PROJECT_DIR|$OPENHANDS_SESSION_ID|$OPENHANDS_EVENT_TYPE|'
            '$OPENHANDS_TOOL_NAME|$EXTRA"'
        ),
        event,
        env={"EXTRA": "given"},
    )
    here = str(tmp_path)
    assert result.stdout.strip() == f"{here}|{here}|session-1|PreToolUse|terminal|given"


def test_a_command_never_sees_ohtuis_keys(
    executor: HookExecutor, event: HookEvent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak-1")
    monkeypatch.setenv("OHTUI_API_KEY", "sk-should-not-leak-2")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "sk-should-not-leak-3")
    monkeypatch.setenv("HOOK_TEST_VISIBLE", "kept")
    result = executor.execute(command("env"), event)
    assert "should-not-leak" not in result.stdout
    assert "HOOK_TEST_VISIBLE=kept" in result.stdout
    assert f"PATH={os.environ['PATH']}" in result.stdout


def test_a_command_printing_non_utf8_bytes_is_read(
    executor: HookExecutor, event: HookEvent
) -> None:
    result = executor.execute(command("printf '\\377\\376 binary'; exit 2"), event)
    assert result.blocked
    assert "binary" in (result.reason or "")


def test_execute_all_stops_at_the_first_block_unless_told_not_to(
    executor: HookExecutor, event: HookEvent
) -> None:
    hooks = [command("echo first"), command("exit 2"), command("echo third")]
    stopped = executor.execute_all(hooks, event)
    assert [r.stdout.strip() for r in stopped] == ["first", ""]
    assert [r.hook for r in stopped] == hooks[:2]
    every = executor.execute_all(hooks, event, stop_on_block=False)
    assert [r.blocked for r in every] == [False, True, False]


# --- background (async) command hooks ---------------------------------------------------------


def test_an_async_command_returns_at_once_and_runs_with_the_event(
    executor: HookExecutor, event: HookEvent, tmp_path: Path
) -> None:
    out = tmp_path / "seen.json"
    hook = command(f'sleep 0.3; cat > "{out}"', **{"async": True})
    started = time.monotonic()
    result = executor.execute(hook, event)
    assert time.monotonic() - started < 0.3
    assert (result.success, result.async_started, result.exit_code) == (True, True, 0)
    assert (result.blocked, result.stdout, result.stderr) == (False, "", "")
    assert wait_for(lambda: out.exists() and out.read_text().endswith("}"))
    assert json.loads(out.read_text())["tool_name"] == "terminal"


def test_an_async_command_that_never_reads_a_big_event_does_not_block(
    executor: HookExecutor, tmp_path: Path
) -> None:
    big = HookEvent(
        event_type=HookEventType.POST_TOOL_USE,
        tool_name="terminal",
        tool_response={"output": "x" * 1_000_000},  # far more than a pipe holds
    )
    started = time.monotonic()
    result = executor.execute(command("sleep 5", **{"async": True}), big)
    assert result.async_started
    assert time.monotonic() - started < 1
    executor.async_process_manager.cleanup_all()


def test_async_commands_are_ended_at_their_timeout_and_at_cleanup(
    executor: HookExecutor, event: HookEvent, tmp_path: Path
) -> None:
    def background(name: str, timeout: float) -> HookDefinition:
        return command(
            f'sleep 30 & echo $! > "{tmp_path / name}"; wait', timeout=timeout, **{"async": True}
        )

    def child(name: str) -> int:
        path = tmp_path / name
        assert wait_for(lambda: path.exists() and path.read_text().strip())
        return int(path.read_text())

    executor.execute_all([background("short", 0.2), background("long", 60)], event)
    short_child, long_child = child("short"), child("long")
    time.sleep(0.3)
    executor.execute(command("true"), event)  # each run ends the expired background hooks
    assert wait_for(lambda: not alive(short_child))
    assert alive(long_child)
    executor.async_process_manager.cleanup_all()
    assert wait_for(lambda: not alive(long_child))


def test_async_process_manager_ends_a_process_that_ignores_sigterm(tmp_path: Path) -> None:
    manager = AsyncProcessManager()
    process = subprocess.Popen(
        ["bash", "-c", "trap '' TERM; echo ready; sleep 30"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None
    process.stdout.readline()  # the trap is set
    manager.add_process(process, timeout=60)
    manager.cleanup_expired()
    assert process.poll() is None  # within its timeout
    started = time.monotonic()
    manager.cleanup_all()
    assert process.returncode == -9
    assert time.monotonic() - started < 5
    manager.cleanup_all()  # nothing left: a no-op


def test_async_process_manager_forgets_processes_that_exited() -> None:
    manager = AsyncProcessManager()
    process = subprocess.Popen(["true"], start_new_session=True)
    manager.add_process(process, timeout=60)
    process.wait()
    manager.cleanup_expired()
    manager.cleanup_all()
    assert process.returncode == 0  # reaped as it was, not signalled


# --- prompt hooks -----------------------------------------------------------------------------


def prompt(policy: str = "Block destructive commands", **fields: Any) -> HookDefinition:
    return HookDefinition.model_validate({"type": "prompt", "prompt": policy, **fields})


@pytest.mark.parametrize(
    ("answer", "decision", "blocked"),
    [
        ('{"decision": "deny", "reason": "it deletes files"}', HookDecision.DENY, True),
        ('{"decision": "allow", "reason": "reversible"}', HookDecision.ALLOW, False),
        ('```json\n{"decision": "DENY", "reason": "fenced"}\n```', HookDecision.DENY, True),
        (
            'I checked it.\n{"decision": "deny", "reason": "prose first"} Bye.',
            HookDecision.DENY,
            True,
        ),
    ],
)
def test_a_prompt_hook_asks_the_llm_for_a_decision(
    tmp_path: Path,
    llm: LLM,
    llm_server: Any,
    event: HookEvent,
    answer: str,
    decision: HookDecision,
    blocked: bool,
) -> None:
    llm_server.reply_text(answer)
    result = HookExecutor(working_dir=str(tmp_path), llm=llm).execute(prompt(), event)
    assert (result.success, result.decision, result.blocked) == (True, decision, blocked)
    assert result.reason and result.reason in answer
    [request] = llm_server.requests
    system, user = request["messages"]
    assert system["role"] == "system"
    assert "Block destructive commands" in json.dumps(system)
    assert user["role"] == "user"
    assert '\\"command\\": \\"rm -rf build\\"' in json.dumps(user)  # the event, as JSON
    assert "untrusted" in json.dumps(user)
    assert "rm -rf build" not in json.dumps(system)  # the event never joins the policy
    assert request.get("stream") in (None, False)


def test_a_prompt_hook_asks_through_the_responses_api_where_the_model_uses_it(
    tmp_path: Path, llm: LLM, llm_server: Any, event: HookEvent
) -> None:
    llm_server.reply_text('{"decision": "deny", "reason": "it deletes files"}')
    responses_llm = llm.model_copy(update={"api_mode": "responses"})
    result = HookExecutor(working_dir=str(tmp_path), llm=responses_llm).execute(prompt(), event)
    assert (result.decision, result.blocked, result.reason) == (
        HookDecision.DENY,
        True,
        "it deletes files",
    )
    [request] = llm_server.requests
    assert "messages" not in request
    assert "Block destructive commands" in request["instructions"]
    [user] = request["input"]
    assert "rm -rf build" in json.dumps(user) and "untrusted" in json.dumps(user)


@pytest.mark.parametrize(
    "answer",
    ["", "ALLOW", '{"decision": "maybe", "reason": "unsure"}', '{"reason": "no decision"}'],
)
def test_a_prompt_hook_without_a_usable_answer_allows_and_says_so(
    tmp_path: Path, llm: LLM, llm_server: Any, event: HookEvent, answer: str
) -> None:
    llm_server.reply_text(answer)
    result = HookExecutor(working_dir=str(tmp_path), llm=llm).execute(prompt(), event)
    assert (result.success, result.decision, result.blocked) == (False, HookDecision.ALLOW, False)
    assert result.error


def test_a_prompt_hook_whose_llm_fails_allows_and_says_why(
    tmp_path: Path, llm: LLM, llm_server: Any, event: HookEvent
) -> None:
    llm_server.reply(Reply(error_status=500, error_message="provider down"))
    llm_server.set_default(Reply(text='{"decision": "deny"}'))  # never reached: no retries
    result = HookExecutor(working_dir=str(tmp_path), llm=llm.model_copy(update={"num_retries": 3}))
    outcome = result.execute(prompt(), event)
    assert (outcome.success, outcome.decision, outcome.blocked) == (
        False,
        HookDecision.ALLOW,
        False,
    )
    assert outcome.error and "provider down" in outcome.error
    assert len(llm_server.requests) == 1


def test_a_prompt_hook_without_an_llm_allows(tmp_path: Path, event: HookEvent) -> None:
    result = HookExecutor(working_dir=str(tmp_path)).execute(prompt(), event)
    assert (result.success, result.decision, result.blocked) == (False, HookDecision.ALLOW, False)
    assert result.error


def test_a_prompt_hook_uses_the_current_llm_with_its_own_timeout_and_metrics(
    tmp_path: Path, llm: LLM, llm_server: Any, event: HookEvent
) -> None:
    current = {"llm": llm.model_copy(update={"model": "openai/first", "stream": True})}
    stats = ConversationStats()
    earlier = Metrics(model_name="openai/second")
    earlier.add_cost(0.25)
    stats.usage_to_metrics["prompt-hook:policy"] = earlier
    executor = HookExecutor(
        working_dir=str(tmp_path), llm_getter=lambda: current["llm"], conversation_stats=stats
    )
    current["llm"] = llm.model_copy(update={"model": "openai/second", "stream": True, **PRICED})
    llm_server.reply_text('{"decision": "allow", "reason": "ok"}')
    llm_server.reply_text('{"decision": "allow", "reason": "ok"}')
    hook = prompt(name="policy", timeout=7)
    executor.execute_all([hook, hook], event)

    assert [r["model"] for r in llm_server.requests] == ["second", "second"]
    assert all(r.get("stream") in (None, False) for r in llm_server.requests)
    assert current["llm"].metrics.accumulated_cost == 0  # the hook's calls are not the agent's
    assert current["llm"].stream is True
    spent = stats.usage_to_metrics["prompt-hook:policy"]
    assert spent is earlier
    assert spent.accumulated_cost > 0.25
    assert spent.call_count == 2


def test_execute_all_stops_after_a_prompt_hook_denies(
    tmp_path: Path, llm: LLM, llm_server: Any, event: HookEvent
) -> None:
    llm_server.reply_text('{"decision": "deny", "reason": "no"}')
    results = HookExecutor(working_dir=str(tmp_path), llm=llm).execute_all(
        [prompt(name="first"), prompt(name="second")], event
    )
    assert [r.blocked for r in results] == [True]
    assert len(llm_server.requests) == 1


# --- agent hooks ------------------------------------------------------------------------------


def agent_hook(**fields: Any) -> HookDefinition:
    return HookDefinition.model_validate({"type": HookType.AGENT, **fields})


def test_an_agent_hook_looks_around_with_its_tools_then_decides(
    tmp_path: Path, llm: LLM, llm_server: Any, event: HookEvent
) -> None:
    (tmp_path / "REPORT.md").write_text("all good\n")
    llm_server.reply_tool_call("terminal", {"command": "cat REPORT.md"})
    llm_server.reply_tool_call(
        "finish", {"message": '{"decision": "deny", "reason": "the report says all good"}'}
    )
    stats = ConversationStats()
    executor = HookExecutor(
        working_dir=str(tmp_path), llm=llm.model_copy(update=PRICED), conversation_stats=stats
    )
    hook = agent_hook(
        name="checker", system_prompt="Deny when REPORT.md exists", tools=["terminal"]
    )
    result = executor.execute(hook, event)

    assert (result.success, result.decision, result.blocked) == (True, HookDecision.DENY, True)
    assert result.reason == "the report says all good"
    first, second = llm_server.requests
    assert "Deny when REPORT.md exists" in json.dumps(first["messages"])
    assert "rm -rf build" in json.dumps(first["messages"])  # the event
    assert {t["function"]["name"] for t in first["tools"]} >= {"terminal", "finish"}
    assert "all good" in json.dumps(second["messages"])  # it saw what the tool printed
    assert stats.usage_to_metrics["agent-hook:checker"].accumulated_cost > 0


def test_an_agent_hook_answering_in_a_message_is_read(
    tmp_path: Path, llm: LLM, llm_server: Any, event: HookEvent
) -> None:
    llm_server.reply_text('Checked.\n```json\n{"decision": "allow", "reason": "fine"}\n```')
    result = HookExecutor(working_dir=str(tmp_path), llm=llm).execute(agent_hook(), event)
    assert (result.success, result.decision, result.reason) == (True, HookDecision.ALLOW, "fine")


def test_an_agent_hook_that_cannot_decide_allows_and_says_why(
    tmp_path: Path, llm: LLM, llm_server: Any, event: HookEvent
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "true"})
    llm_server.reply_tool_call("terminal", {"command": "true"})
    # No decision within max_iterations.
    result = HookExecutor(working_dir=str(tmp_path), llm=llm).execute(
        agent_hook(tools=["terminal"], max_iterations=2), event
    )
    assert (result.success, result.decision, result.blocked) == (False, HookDecision.ALLOW, False)
    assert result.error
    assert len(llm_server.requests) == 2


def test_an_agent_hook_with_an_unknown_tool_allows_and_says_why(
    tmp_path: Path, llm: LLM, llm_server: Any, event: HookEvent
) -> None:
    result = HookExecutor(working_dir=str(tmp_path), llm=llm).execute(
        agent_hook(tools=["no_such_tool"]), event
    )
    assert (result.success, result.decision, result.blocked) == (False, HookDecision.ALLOW, False)
    assert result.error and "no_such_tool" in result.error
    assert llm_server.requests == []
