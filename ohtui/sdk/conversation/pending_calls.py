"""The tool calls the model is still waiting on: the newest LLM response's calls that no
observation, rejection or error answers yet."""

from __future__ import annotations

from collections.abc import Sequence

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.llm_convertible.observation import (
    AgentErrorEvent,
    ObservationEvent,
    UserRejectObservation,
)
from ohtui.sdk.event.llm_convertible.system import SystemPromptEvent


def unanswered_tool_calls(events: Sequence[Event]) -> list[ActionEvent]:
    """The tool calls of the latest LLM response that no observation, rejection or error
    answers, runnable or not (the model's next request needs an answer for each).

    Only the newest batch can be unanswered (the agent never asks the model again while
    calls are open), so the scan stops at the first older batch or agent message.
    """
    answered: set[str] = set()
    pending: list[ActionEvent] = []
    batch_id: str | None = None
    for event in reversed(events):
        if isinstance(event, ObservationEvent | UserRejectObservation):
            answered.add(event.action_id)
            answered.add(event.tool_call_id)
        elif isinstance(event, AgentErrorEvent):
            answered.add(event.tool_call_id)
        elif isinstance(event, ActionEvent):
            if batch_id is not None and event.llm_response_id != batch_id:
                break
            batch_id = event.llm_response_id
            if event.id not in answered and event.tool_call_id not in answered:
                pending.append(event)
        elif isinstance(event, SystemPromptEvent) or (
            isinstance(event, MessageEvent) and event.source == "agent"
        ):
            break
    pending.reverse()
    return pending
