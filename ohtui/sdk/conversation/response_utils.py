"""get_agent_final_response: what the agent last said to the user."""

from __future__ import annotations

from collections.abc import Sequence

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent


def get_agent_final_response(events: Sequence[Event]) -> str:
    """The agent's final answer: the last `finish` message or agent text message, else ""."""
    for event in reversed(events):
        if isinstance(event, ActionEvent) and event.tool_name == "finish" and event.action:
            return str(getattr(event.action, "message", ""))
        if isinstance(event, MessageEvent) and event.source == "agent":
            return event.llm_message.text
        if isinstance(event, MessageEvent) and event.source == "user":
            return ""
    return ""
