"""Tests for hooks in real conversations: each event's hooks blocking and allowing, adding
context, failing, slow and unstartable; prompt hooks asking the same LLM.

Hook commands are real bash snippets and scripts under tmp_path that read the event JSON
from stdin; conversations talk to the scripted LLM server over real HTTP through litellm.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from llm_server import Reply

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    Conversation,
    ConversationExecutionStatus,
    HookConfig,
    HookExecutionEvent,
    LocalConversation,
    MessageEvent,
    ObservationEvent,
    Tool,
    UserRejectObservation,
)
from ohtui.sdk.conversation.impl.run_guards import MAX_STOP_DENIALS

Status = ConversationExecutionStatus
T = TypeVar("T")
Factory = Callable[..., LocalConversation]


# --- helpers -----------------------------------------------------------------------------


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    """Build conversations (a fresh Agent each); closes any still open at the end."""
    made: list[LocalConversation] = []

    def make(hook_config: HookConfig | None = None, **kwargs: Any) -> LocalConversation:
        kwargs.setdefault("visualizer", None)
        agent = Agent(llm=llm, tools=[Tool(name="terminal"), Tool(name="file_editor")])
        conv = Conversation(
            agent=agent,
            workspace=workspace,
            persistence_dir=persistence_dir,
            hook_config=hook_config,
            **kwargs,
        )
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def hooks(event: str, command: str, matcher: str | None = None, timeout: float = 5) -> HookConfig:
    """A config with one hook command for one event."""
    entry: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}
    if matcher is not None:
        entry["matcher"] = matcher
    return HookConfig.from_dict({event: [entry]})


def script(tmp_path: Path, name: str, body: str) -> str:
    """Write a bash script under tmp_path; return the hook command that runs it."""
    path = tmp_path / f"{name}.sh"
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(0o755)
    return str(path)


def capturing(tmp_path: Path, name: str, then: str = "exit 0") -> tuple[str, Path]:
    """A hook script that appends each payload it reads as one JSON line, then runs `then`."""
    log = tmp_path / f"{name}.jsonl"
    command = script(tmp_path, name, f'cat >> "{log}"\necho >> "{log}"\n{then}\n')
    return command, log


def payloads(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def of_type(events: Any, cls: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, cls)]


def hook_events(conv: LocalConversation) -> list[HookExecutionEvent]:
    return of_type(conv.state.events, HookExecutionEvent)


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return content or ""


def user_texts(request: dict[str, Any]) -> list[str]:
    return [text_of(m) for m in request["messages"] if m["role"] == "user"]


def touch_then_finish(llm_server: Any, name: str = "created.txt") -> None:
    llm_server.reply_tool_call("terminal", {"command": f"touch {name} && echo touched"})
    llm_server.reply_text("Done.")


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_dead(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


# --- PreToolUse --------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["exit-2", "json-deny"])
def test_pre_tool_use_block(
    make_conversation: Factory, llm_server, workspace: Path, tmp_path: Path, how: str
) -> None:
    if how == "exit-2":
        command = script(tmp_path, "deny", 'cat > /dev/null\necho "no touching" >&2\nexit 2\n')
    else:
        command = script(
            tmp_path,
            "deny",
            'cat > /dev/null\necho \'{"decision": "deny", "reason": "no touching"}\'\n',
        )
    touch_then_finish(llm_server)
    conv = make_conversation(hooks("PreToolUse", command, matcher="terminal"))
    conv.send_message("Create the file")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    assert not (workspace / "created.txt").exists()
    assert of_type(conv.state.events, ObservationEvent) == []
    [rejection] = of_type(conv.state.events, UserRejectObservation)
    assert command in rejection.rejection_reason
    assert "no touching" in rejection.rejection_reason
    assert rejection.rejection_source == "hook"
    assert conv.state.blocked_actions == {}
    [event] = hook_events(conv)
    assert event.blocked is True
    assert event.hook_event_type == "PreToolUse"
    assert event.tool_name == "terminal"
    assert event.hook_command == command
    assert event.reason == "no touching"
    assert event.error is None
    assert event.exit_code == (2 if how == "exit-2" else 0)
    # The agent is told why.
    [tool_message] = [m for m in llm_server.requests[1]["messages"] if m["role"] == "tool"]
    assert "no touching" in text_of(tool_message)


def test_pre_tool_use_allow_runs_the_action_and_gets_the_payload(
    make_conversation: Factory, llm_server, workspace: Path, tmp_path: Path
) -> None:
    command, log = capturing(tmp_path, "allow")
    touch_then_finish(llm_server)
    conv = make_conversation(hooks("PreToolUse", command, matcher="terminal"))
    conv.send_message("Create the file")
    conv.run()

    assert (workspace / "created.txt").exists()
    [event] = hook_events(conv)  # every run is recorded, an allowing one too
    [action] = of_type(conv.state.events, ActionEvent)
    assert (event.success, event.blocked, event.exit_code) == (True, False, 0)
    assert (event.action_id, event.tool_name) == (action.id, "terminal")
    assert event.hook_input is not None and event.hook_input["tool_name"] == "terminal"
    assert of_type(conv.state.events, UserRejectObservation) == []
    [payload] = payloads(log)
    assert payload["hook_event_name"] == "PreToolUse"
    assert payload["tool_name"] == "terminal"
    assert payload["tool_input"]["command"] == "touch created.txt && echo touched"
    assert payload["session_id"] == conv.id.hex
    assert Path(payload["cwd"]).resolve() == workspace.resolve()
    assert "tool_response" not in payload


def test_hooks_run_in_the_workspace(
    make_conversation: Factory, llm_server, workspace: Path, tmp_path: Path
) -> None:
    where = tmp_path / "where.txt"
    touch_then_finish(llm_server)
    conv = make_conversation(hooks("PreToolUse", f'cat > /dev/null; pwd > "{where}"'))
    conv.send_message("Create the file")
    conv.run()
    assert Path(where.read_text().strip()).resolve() == workspace.resolve()


@pytest.mark.parametrize(
    ("matcher", "blocked"),
    [
        ("terminal", True),
        ("*", True),
        ("term.*", True),
        (None, True),  # no matcher: every tool
        ("file_editor", False),
        ("term", False),
    ],
)
def test_pre_tool_use_matchers(
    make_conversation: Factory,
    llm_server,
    workspace: Path,
    tmp_path: Path,
    matcher: str | None,
    blocked: bool,
) -> None:
    command = script(tmp_path, "deny", 'cat > /dev/null\necho "matched" >&2\nexit 2\n')
    touch_then_finish(llm_server)
    conv = make_conversation(hooks("PreToolUse", command, matcher=matcher))
    conv.send_message("Create the file")
    conv.run()
    assert (workspace / "created.txt").exists() is not blocked
    assert len(of_type(conv.state.events, UserRejectObservation)) == int(blocked)
    assert len(hook_events(conv)) == int(blocked)  # a hook that does not match never runs


def test_pre_tool_use_blocks_only_the_matching_action_of_a_batch(
    make_conversation: Factory, llm_server, workspace: Path, tmp_path: Path
) -> None:
    command = script(tmp_path, "deny", 'cat > /dev/null\necho "no editing" >&2\nexit 2\n')
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "touch from_terminal.txt"}),
            (
                "file_editor",
                {
                    "command": "create",
                    "path": str(workspace / "from_editor.txt"),
                    "file_text": "hi\n",
                },
            ),
        ]
    )
    llm_server.reply_text("Done.")
    conv = make_conversation(hooks("PreToolUse", command, matcher="file_editor"))
    conv.send_message("Create both files")
    conv.run()
    assert (workspace / "from_terminal.txt").exists()
    assert not (workspace / "from_editor.txt").exists()
    [rejection] = of_type(conv.state.events, UserRejectObservation)
    assert rejection.tool_name == "file_editor"
    assert "no editing" in rejection.rejection_reason


def test_a_block_stops_the_later_hooks(
    make_conversation: Factory, llm_server, workspace: Path, tmp_path: Path
) -> None:
    first = script(tmp_path, "first", 'cat > /dev/null\necho "first says no" >&2\nexit 2\n')
    second, log = capturing(tmp_path, "second")
    config = HookConfig.model_validate(
        {
            "PreToolUse": [
                {"matcher": "*", "hooks": [{"command": first}, {"command": second}]},
            ]
        }
    )
    touch_then_finish(llm_server)
    conv = make_conversation(config)
    conv.send_message("Create the file")
    conv.run()
    assert not (workspace / "created.txt").exists()
    assert payloads(log) == []


def test_a_deny_without_a_reason_says_so(
    make_conversation: Factory, llm_server, workspace: Path
) -> None:
    command = 'cat > /dev/null; echo \'{"decision": "deny"}\''
    touch_then_finish(llm_server)
    conv = make_conversation(hooks("PreToolUse", command))
    conv.send_message("Create the file")
    conv.run()
    assert not (workspace / "created.txt").exists()
    [rejection] = of_type(conv.state.events, UserRejectObservation)
    assert "no reason given" in rejection.rejection_reason


# --- PostToolUse -------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["json-deny", "exit-2"])
def test_post_tool_use_deny_gives_the_agent_feedback(
    make_conversation: Factory, llm_server, workspace: Path, tmp_path: Path, how: str
) -> None:
    if how == "exit-2":
        then = 'echo "please add tests" >&2\nexit 2'
    else:
        then = 'echo \'{"decision": "deny", "reason": "please add tests"}\''
    command, log = capturing(tmp_path, "post", then)
    touch_then_finish(llm_server)
    conv = make_conversation(hooks("PostToolUse", command, matcher="terminal"))
    conv.send_message("Create the file")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    assert (workspace / "created.txt").exists()  # it already ran
    [observation] = of_type(conv.state.events, ObservationEvent)
    assert "touched" in observation.observation.text
    feedback = [e for e in of_type(conv.state.events, MessageEvent) if e.sender == "post-tool-hook"]
    assert len(feedback) == 1
    assert "please add tests" in feedback[0].text
    assert [e.blocked for e in hook_events(conv)] == [True]
    last = llm_server.requests[1]["messages"][-1]
    assert last["role"] == "user"
    assert "please add tests" in text_of(last)

    [payload] = payloads(log)
    assert payload["hook_event_name"] == "PostToolUse"
    assert payload["tool_name"] == "terminal"
    assert payload["tool_input"]["command"] == "touch created.txt && echo touched"
    assert payload["tool_response"]["kind"] == "TerminalObservation"
    assert "touched" in json.dumps(payload["tool_response"]["content"])
    assert payload["session_id"] == conv.id.hex


def test_post_tool_use_allow_adds_nothing(
    make_conversation: Factory, llm_server, workspace: Path, tmp_path: Path
) -> None:
    command, log = capturing(tmp_path, "post")
    touch_then_finish(llm_server)
    conv = make_conversation(hooks("PostToolUse", command))
    conv.send_message("Create the file")
    conv.run()
    assert (workspace / "created.txt").exists()
    [event] = hook_events(conv)
    assert (event.hook_event_type, event.success, event.blocked) == ("PostToolUse", True, False)
    assert event.hook_input is not None and "tool_response" in event.hook_input
    assert [e.sender for e in of_type(conv.state.events, MessageEvent)] == [None, None]
    assert len(payloads(log)) == 1
    assert llm_server.requests[1]["messages"][-1]["role"] == "tool"


# --- UserPromptSubmit --------------------------------------------------------------------

PROMPT_FILTER = (
    "import json, sys\n"
    "data = json.load(sys.stdin)\n"
    "if 'forbidden' in data['prompt']:\n"
    "    print('no forbidden words', file=sys.stderr)\n"
    "    sys.exit(2)\n"
)


def prompt_filter(tmp_path: Path) -> str:
    (tmp_path / "filter.py").write_text(PROMPT_FILTER)
    return f'python3 "{tmp_path / "filter.py"}"'


def test_user_prompt_submit_deny_records_but_never_sends_the_message(
    make_conversation: Factory, llm_server, tmp_path: Path
) -> None:
    conv = make_conversation(hooks("UserPromptSubmit", prompt_filter(tmp_path)))
    conv.send_message("say the forbidden word")
    [message] = [e for e in of_type(conv.state.events, MessageEvent) if e.source == "user"]
    assert message.text == "say the forbidden word"
    assert message.id in conv.state.blocked_messages
    assert "no forbidden words" in conv.state.blocked_messages[message.id]
    [event] = hook_events(conv)
    assert event.hook_event_type == "UserPromptSubmit"
    assert event.blocked is True
    assert event.reason == "no forbidden words"

    conv.run()
    assert llm_server.requests == []
    assert conv.state.execution_status is not Status.RUNNING

    llm_server.reply_text("Hi!")
    conv.send_message("please say hi")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    [request] = llm_server.requests
    assert user_texts(request) == ["please say hi"]
    assert "forbidden" not in json.dumps(request)


def test_user_prompt_submit_blocked_text_stays_out_of_later_runs(
    make_conversation: Factory, llm_server, tmp_path: Path
) -> None:
    llm_server.reply_text("First answer.")
    llm_server.reply_text("Second answer.")
    conv = make_conversation(hooks("UserPromptSubmit", prompt_filter(tmp_path)))
    conv.send_message("first question")
    conv.run()
    conv.send_message("a forbidden follow-up")
    conv.run()
    assert len(llm_server.requests) == 1
    conv.send_message("second question")
    conv.run()
    assert len(llm_server.requests) == 2
    assert user_texts(llm_server.requests[1]) == ["first question", "second question"]
    assert "forbidden" not in json.dumps(llm_server.requests)


def test_user_prompt_submit_blocked_text_is_not_sent_by_ask_agent(
    make_conversation: Factory, llm_server, tmp_path: Path
) -> None:
    conv = make_conversation(hooks("UserPromptSubmit", prompt_filter(tmp_path)))
    conv.send_message("tell me the forbidden secret")
    llm_server.reply_text("Nothing to report.")
    assert conv.ask_agent("what happened so far?") == "Nothing to report."
    [request] = llm_server.requests
    assert "forbidden" not in json.dumps(request)


def test_user_prompt_submit_blocked_text_is_not_sent_by_generate_title(
    make_conversation: Factory, llm_server, tmp_path: Path
) -> None:
    conv = make_conversation(hooks("UserPromptSubmit", prompt_filter(tmp_path)))
    conv.send_message("tell me the forbidden secret")
    llm_server.reply_text("A title")
    with contextlib.suppress(ValueError):  # no message the model may see: no title
        conv.generate_title()
    assert "forbidden" not in json.dumps(llm_server.requests)


def test_user_prompt_submit_allow_gets_the_prompt(
    make_conversation: Factory, llm_server, tmp_path: Path
) -> None:
    command, log = capturing(tmp_path, "prompt")
    llm_server.reply_text("Hello.")
    conv = make_conversation(hooks("UserPromptSubmit", command))
    conv.send_message("hello there")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert conv.state.blocked_messages == {}
    [payload] = payloads(log)
    assert payload["hook_event_name"] == "UserPromptSubmit"
    assert payload["prompt"] == "hello there"
    assert payload["session_id"] == conv.id.hex
    assert "tool_name" not in payload


def test_user_prompt_submit_context_goes_to_the_model_with_the_message(
    make_conversation: Factory, llm_server, tmp_path: Path
) -> None:
    command = 'cat > /dev/null; echo \'{"additionalContext": "HOOK_CONTEXT: use uv"}\''
    llm_server.reply_text("Hello.")
    conv = make_conversation(hooks("UserPromptSubmit", command))
    conv.send_message("hello there")
    [message] = of_type(conv.state.events, MessageEvent)
    assert message.text == "hello there"  # what the user wrote, as they wrote it
    assert [c.text for c in message.extended_content] == ["HOOK_CONTEXT: use uv"]
    conv.run()
    [request] = llm_server.requests
    [user] = [m for m in request["messages"] if m["role"] == "user"]
    assert "hello there" in text_of(user)
    assert "HOOK_CONTEXT: use uv" in text_of(user)


# --- Stop --------------------------------------------------------------------------------


def test_stop_deny_makes_the_agent_continue_until_allowed(
    make_conversation: Factory, llm_server, workspace: Path, tmp_path: Path
) -> None:
    counter = tmp_path / "count"
    log = tmp_path / "stop.jsonl"
    command = script(
        tmp_path,
        "stop",
        f'cat >> "{log}"; echo >> "{log}"\n'
        f'n=$(cat "{counter}" 2>/dev/null || echo 0)\n'
        f'n=$((n + 1)); echo $n > "{counter}"\n'
        'if [ "$n" -eq 1 ]; then echo "the tests were not run" >&2; exit 2; fi\n'
        "exit 0\n",
    )
    llm_server.reply_tool_call("finish", {"message": "All done."})
    llm_server.reply_tool_call("terminal", {"command": "touch tests_ran.txt"})
    llm_server.reply_text("Tests ran; now done.")
    conv = make_conversation(hooks("Stop", command))
    conv.send_message("Do the work")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    assert counter.read_text().strip() == "2"
    assert (workspace / "tests_ran.txt").exists()
    assert len(llm_server.requests) == 3
    last = llm_server.requests[1]["messages"][-1]
    assert last["role"] == "user"
    assert text_of(last) == "[Stop hook feedback] the tests were not run"
    stop_messages = [e for e in of_type(conv.state.events, MessageEvent) if e.sender == "stop-hook"]
    assert len(stop_messages) == 1
    denied, allowed = hook_events(conv)
    assert (denied.hook_event_type, denied.blocked) == ("Stop", True)
    assert (allowed.hook_event_type, allowed.blocked, allowed.success) == ("Stop", False, True)
    first, second = payloads(log)
    assert first["hook_event_name"] == "Stop"
    assert first["stop_hook_active"] is False
    assert second["stop_hook_active"] is True


def test_stop_deny_feedback_prefers_the_added_context(
    make_conversation: Factory, llm_server, tmp_path: Path
) -> None:
    counter = tmp_path / "count"
    command = script(
        tmp_path,
        "stop",
        f'cat > /dev/null\nn=$(cat "{counter}" 2>/dev/null || echo 0)\n'
        f'echo $((n + 1)) > "{counter}"\n'
        'if [ "$n" -eq 0 ]; then\n'
        '  echo \'{"decision": "deny", "additionalContext": "Complete the task first"}\'; exit 2\n'
        "fi\n",
    )
    llm_server.reply_text("Done.")
    llm_server.reply_text("Now really done.")
    conv = make_conversation(hooks("Stop", command))
    conv.send_message("Work")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    [feedback] = [e for e in of_type(conv.state.events, MessageEvent) if e.sender == "stop-hook"]
    assert feedback.source == "environment"
    assert feedback.text == "[Stop hook feedback] Complete the task first"
    assert text_of(llm_server.requests[1]["messages"][-1]) == feedback.text


def test_stop_denials_are_bounded_per_run(
    make_conversation: Factory, llm_server, tmp_path: Path
) -> None:
    command = script(tmp_path, "never", 'cat > /dev/null\necho "keep going" >&2\nexit 2\n')
    llm_server.set_default(Reply(text="I am done."))
    conv = make_conversation(hooks("Stop", command))
    conv.send_message("Work")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert len(llm_server.requests) == MAX_STOP_DENIALS + 1
    stop_messages = [e for e in of_type(conv.state.events, MessageEvent) if e.sender == "stop-hook"]
    assert len(stop_messages) == MAX_STOP_DENIALS

    # A new run may be kept going again.
    conv.send_message("More work")
    conv.run()
    assert len(llm_server.requests) == 2 * (MAX_STOP_DENIALS + 1)


def test_stop_allow_finishes(make_conversation: Factory, llm_server, tmp_path: Path) -> None:
    command, log = capturing(tmp_path, "stop")
    llm_server.reply_text("Done.")
    conv = make_conversation(hooks("Stop", command))
    conv.send_message("Work")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert len(llm_server.requests) == 1
    assert [p["hook_event_name"] for p in payloads(log)] == ["Stop"]
    assert [(e.hook_event_type, e.blocked) for e in hook_events(conv)] == [("Stop", False)]


# --- SessionStart and SessionEnd ---------------------------------------------------------


def test_session_start_runs_once_and_session_end_on_close(
    make_conversation: Factory, llm_server, tmp_path: Path
) -> None:
    start, start_log = capturing(tmp_path, "start")
    end, end_log = capturing(tmp_path, "end")
    config = HookConfig.model_validate(
        {
            "SessionStart": [{"hooks": [{"command": start}]}],
            "SessionEnd": [{"hooks": [{"command": end}]}],
        }
    )
    conv = make_conversation(config)
    assert payloads(start_log) == []
    llm_server.reply_text("One.")
    llm_server.reply_text("Two.")
    conv.send_message("first")
    assert len(payloads(start_log)) == 1
    conv.run()
    conv.send_message("second")
    conv.run()
    assert len(payloads(start_log)) == 1
    assert payloads(end_log) == []

    conv.close()
    conv.close()
    [started] = payloads(start_log)
    [ended] = payloads(end_log)
    assert started["hook_event_name"] == "SessionStart"
    assert ended["hook_event_name"] == "SessionEnd"
    assert started["session_id"] == ended["session_id"] == conv.id.hex


def test_an_unused_conversation_runs_no_session_hooks(
    make_conversation: Factory, tmp_path: Path
) -> None:
    start, start_log = capturing(tmp_path, "start")
    end, end_log = capturing(tmp_path, "end")
    config = HookConfig.model_validate(
        {
            "SessionStart": [{"hooks": [{"command": start}]}],
            "SessionEnd": [{"hooks": [{"command": end}]}],
        }
    )
    conv = make_conversation(config)
    conv.close()
    assert payloads(start_log) == []
    assert payloads(end_log) == []


# --- prompt and agent hooks ----------------------------------------------------------------


def test_a_prompt_hook_asks_the_conversations_llm_before_a_tool_runs(
    make_conversation: Factory, llm_server, workspace: Path
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "touch created.txt"})
    llm_server.reply_text('{"decision": "deny", "reason": "no new files today"}')  # the hook
    llm_server.reply_text("Understood, I did not create it.")
    config = HookConfig.from_dict(
        {
            "PreToolUse": [
                {
                    "matcher": "terminal",
                    "hooks": [{"type": "prompt", "name": "files", "prompt": "No new files."}],
                }
            ]
        }
    )
    conv = make_conversation(config)
    conv.send_message("Create the file")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    assert not (workspace / "created.txt").exists()
    [rejection] = of_type(conv.state.events, UserRejectObservation)
    assert rejection.rejection_reason == "Blocked by hook `prompt-hook:files`: no new files today"
    agent_call, hook_call, next_call = llm_server.requests
    assert "tools" in agent_call
    assert "No new files." in json.dumps(hook_call["messages"][0])
    assert "touch created.txt" in json.dumps(hook_call["messages"][1])
    assert "tools" not in hook_call
    assert "no new files today" in json.dumps(next_call["messages"][-1])
    assert "prompt-hook:files" in conv.conversation_stats.usage_to_metrics
    [event] = hook_events(conv)
    assert (event.hook_command, event.blocked) == ("prompt-hook:files", True)


def test_a_prompt_hook_that_cannot_decide_lets_the_tool_run_and_says_so(
    make_conversation: Factory, llm_server, workspace: Path
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "touch created.txt"})
    llm_server.reply_text("I would rather not say.")  # the hook: no decision
    llm_server.reply_text("Done.")
    config = HookConfig.from_dict(
        {"PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "No new files."}]}]}
    )
    conv = make_conversation(config)
    conv.send_message("Create the file")
    conv.run()
    assert (workspace / "created.txt").exists()
    [event] = hook_events(conv)
    assert event.blocked is False
    assert event.error is not None


# --- failures ----------------------------------------------------------------------------


def test_a_failing_hook_is_recorded_and_does_not_block(
    make_conversation: Factory, llm_server, workspace: Path, tmp_path: Path
) -> None:
    command = script(tmp_path, "broken", 'cat > /dev/null\necho "hook crashed" >&2\nexit 1\n')
    touch_then_finish(llm_server)
    conv = make_conversation(hooks("PreToolUse", command))
    conv.send_message("Create the file")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert (workspace / "created.txt").exists()
    assert of_type(conv.state.events, UserRejectObservation) == []
    [event] = hook_events(conv)
    assert event.blocked is False
    assert event.exit_code == 1
    assert event.error is not None
    assert "hook crashed" in event.error
    assert "code 1" in event.error


def test_a_hook_past_its_timeout_is_killed_and_the_run_goes_on(
    make_conversation: Factory, llm_server, workspace: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    command = script(
        tmp_path,
        "slow",
        f'cat > /dev/null\nsleep 30 &\necho "$$ $!" > "{pids}"\nwait\n',
    )
    touch_then_finish(llm_server)
    conv = make_conversation(hooks("PreToolUse", command, timeout=0.5))
    conv.send_message("Create the file")
    started = time.monotonic()
    conv.run()
    assert time.monotonic() - started < 10
    assert conv.state.execution_status is Status.FINISHED
    assert (workspace / "created.txt").exists()
    [event] = hook_events(conv)
    assert event.blocked is False
    assert event.error is not None
    assert "timed out" in event.error
    for pid in pids.read_text().split():
        assert wait_dead(int(pid)), f"hook process {pid} survived its timeout"


def test_a_slow_stop_hook_does_not_keep_the_agent_going(
    make_conversation: Factory, llm_server, tmp_path: Path
) -> None:
    llm_server.reply_text("Done.")
    conv = make_conversation(hooks("Stop", "sleep 30", timeout=0.3))
    conv.send_message("Work")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert len(llm_server.requests) == 1
    [event] = hook_events(conv)
    assert "timed out" in (event.error or "")


def test_a_hook_command_that_does_not_exist_never_crashes(
    make_conversation: Factory, llm_server, workspace: Path, tmp_path: Path
) -> None:
    missing = str(tmp_path / "no-such-hook")
    config = HookConfig.model_validate(
        {
            "PreToolUse": [{"hooks": [{"command": missing}]}],
            "PostToolUse": [{"hooks": [{"command": missing}]}],
            "UserPromptSubmit": [{"hooks": [{"command": missing}]}],
            "Stop": [{"hooks": [{"command": missing}]}],
            "SessionStart": [{"hooks": [{"command": missing}]}],
        }
    )
    touch_then_finish(llm_server)
    conv = make_conversation(config)
    conv.send_message("Create the file")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert (workspace / "created.txt").exists()
    events = hook_events(conv)
    assert {e.hook_event_type for e in events} == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
    }
    assert all(e.error and not e.blocked for e in events)
    assert all("127" in (e.error or "") for e in events)


def test_a_hook_printing_non_utf8_bytes_never_crashes(
    make_conversation: Factory, llm_server, workspace: Path, tmp_path: Path
) -> None:
    command = script(tmp_path, "binary", "cat > /dev/null\nprintf '\\377\\376 binary'\nexit 0\n")
    touch_then_finish(llm_server)
    conv = make_conversation(hooks("PreToolUse", command))
    conv.send_message("Create the file")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert (workspace / "created.txt").exists()


def test_an_empty_hook_config_runs_nothing(make_conversation: Factory, llm_server) -> None:
    llm_server.reply_text("Done.")
    conv = make_conversation(HookConfig())
    assert conv.hooks is None
    conv.send_message("hi")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
