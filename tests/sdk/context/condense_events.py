"""Small builders of events for the condenser and View tests."""

from __future__ import annotations

import json

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.llm_convertible.observation import ObservationEvent
from ohtui.sdk.event.llm_convertible.system import SystemPromptEvent
from ohtui.sdk.llm.message import Message, MessageToolCall, TextContent
from ohtui.sdk.tool.builtins import FinishTool, ThinkAction, ThinkObservation


def system() -> SystemPromptEvent:
    return SystemPromptEvent(
        system_prompt=TextContent(text="You are a coding agent."),
        tools=[FinishTool().to_openai_tool()],
    )


def user(text: str) -> MessageEvent:
    return MessageEvent(
        source="user", llm_message=Message(role="user", content=[TextContent(text=text)])
    )


def agent(text: str) -> MessageEvent:
    return MessageEvent(
        source="agent", llm_message=Message(role="assistant", content=[TextContent(text=text)])
    )


def action(call_id: str, response_id: str | None = None) -> ActionEvent:
    arguments = json.dumps({"thought": f"thinking {call_id}"})
    return ActionEvent(
        action=ThinkAction(thought=f"thinking {call_id}"),
        tool_name="think",
        tool_call_id=call_id,
        tool_call=MessageToolCall(id=call_id, name="think", arguments=arguments),
        llm_response_id=response_id or f"resp-{call_id}",
    )


def observation(call_id: str) -> ObservationEvent:
    return ObservationEvent(
        observation=ThinkObservation.from_text(f"logged {call_id}"),
        action_id=f"action-{call_id}",
        tool_name="think",
        tool_call_id=call_id,
    )


def history(pairs: int) -> list[Event]:
    """System prompt, the task, then `pairs` action/observation pairs."""
    events: list[Event] = [system(), user("Do the task")]
    for n in range(pairs):
        events += [action(f"c{n}"), observation(f"c{n}")]
    return events
