"""HookEventProcessor and create_hook_callback: hooks wired as an event callback.

Real hook commands (bash scripts), real conversations on the scripted LLM server.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from ohtui.sdk import (
    LLM,
    Agent,
    Conversation,
    HookConfig,
    HookExecutionEvent,
    Message,
    MessageEvent,
    ObservationEvent,
    TextContent,
    Tool,
    UserRejectObservation,
)
from ohtui.sdk.conversation.state import ConversationState
from ohtui.sdk.event.base import Event
from ohtui.sdk.hooks.conversation_hooks import HookEventProcessor, create_hook_callback
from ohtui.sdk.hooks.runner import HookManager
from ohtui.sdk.workspace import LocalWorkspace


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / f"{name}.sh"
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(0o755)
    return str(path)


def config(event: str, command: str) -> HookConfig:
    return HookConfig.from_dict({event: [{"hooks": [{"type": "command", "command": command}]}]})


def user_message(text: str) -> MessageEvent:
    return MessageEvent(
        source="user", llm_message=Message(role="user", content=[TextContent(text=text)])
    )


def test_a_callback_hook_blocks_the_action_before_it_runs(
    llm: LLM, llm_server: Any, workspace: Path, tmp_path: Path
) -> None:
    deny = script(tmp_path, "deny", 'cat > /dev/null\necho "not here" >&2\nexit 2\n')
    seen: list[Event] = []
    processor, callback = create_hook_callback(
        config("PreToolUse", deny), str(workspace), original_callback=seen.append
    )
    llm_server.reply_tool_call("terminal", {"command": "touch created.txt"})
    llm_server.reply_text("Done.")
    agent = Agent(llm=llm, tools=[Tool(name="terminal")])
    conv = Conversation(agent=agent, workspace=workspace, callbacks=[callback], visualizer=None)
    try:
        processor.set_conversation_state(conv.state)
        conv.send_message("Create the file")
        conv.run()
        assert not (workspace / "created.txt").exists()
        [rejection] = [e for e in conv.state.events if isinstance(e, UserRejectObservation)]
        assert (rejection.rejection_source, rejection.rejection_reason) == ("hook", "not here")
        assert [e for e in conv.state.events if isinstance(e, ObservationEvent)] == []
        assert conv.state.blocked_actions == {}  # settled by the rejection
        [record] = [e for e in seen if isinstance(e, HookExecutionEvent)]
        assert (record.hook_event_type, record.blocked, record.exit_code) == ("PreToolUse", True, 2)
        assert record.action_id == rejection.action_id
        # The record goes to the callback before the action it ran for.
        assert seen.index(record) < [e.id for e in seen].index(rejection.action_id)
    finally:
        conv.close()


def test_context_a_hook_adds_extends_the_same_message(tmp_path: Path, llm: LLM) -> None:
    add = script(tmp_path, "add", 'cat > /dev/null\necho \'{"additionalContext": "on main"}\'\n')
    seen: list[Event] = []
    processor = HookEventProcessor(
        HookManager(config("UserPromptSubmit", add), str(tmp_path)), original_callback=seen.append
    )
    original = user_message("Hello")
    processor.on_event(original)
    record, message = seen
    assert isinstance(record, HookExecutionEvent) and isinstance(message, MessageEvent)
    assert (record.message_id, record.hook_input) == (original.id, {"message": "Hello"})
    assert message.id == original.id
    assert [c.text for c in message.extended_content] == ["on main"]
    assert not processor.is_message_blocked(original.id)  # no state: nothing can be blocked


def test_a_blocked_prompt_is_marked_in_the_state(tmp_path: Path, llm: LLM) -> None:
    deny = script(tmp_path, "deny", 'cat > /dev/null\necho "off topic" >&2\nexit 2\n')
    state = ConversationState.create(
        id=uuid.uuid4(),
        agent=Agent(llm=llm, tools=[]),
        workspace=LocalWorkspace(working_dir=str(tmp_path)),
    )
    processor = HookEventProcessor(
        HookManager(config("UserPromptSubmit", deny), str(tmp_path)), emit_hook_events=False
    )
    processor.set_conversation_state(state)
    message = user_message("Tell me a joke")
    processor.on_event(message)
    assert processor.is_message_blocked(message.id)
    assert state.blocked_messages[message.id] == "off topic"


def test_stop_hooks_give_their_context_as_feedback(tmp_path: Path) -> None:
    deny = script(
        tmp_path,
        "stop",
        "cat > /dev/null\n"
        'echo \'{"decision": "deny", "additionalContext": "run the tests"}\'\nexit 2\n',
    )
    seen: list[Event] = []
    processor = HookEventProcessor(
        HookManager(config("Stop", deny), str(tmp_path)), original_callback=seen.append
    )
    assert processor.run_stop(reason="finish") == (False, "run the tests")
    [record] = seen
    assert isinstance(record, HookExecutionEvent)
    assert (record.hook_event_type, record.blocked, record.hook_input) == (
        "Stop",
        True,
        {"reason": "finish"},
    )
    assert json.loads(record.stdout)["decision"] == "deny"
    assert record.visualize.plain.endswith("blocked: run the tests")  # its context says why
    assert HookEventProcessor(HookManager(None, str(tmp_path))).run_stop() == (True, None)
