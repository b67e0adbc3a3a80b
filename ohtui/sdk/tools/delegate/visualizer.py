"""DelegationVisualizer: the default visualizer, with each block titled by which agent
acted and, for messages, who spoke to whom ("Delegator Agent Message to Lodging Expert Agent")."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ohtui.sdk.conversation.visualizer.default import DefaultConversationVisualizer
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.llm_convertible.observation import ObservationEvent
from ohtui.sdk.event.llm_convertible.system import SystemPromptEvent

if TYPE_CHECKING:
    from rich.console import Console, Group


class DelegationVisualizer(DefaultConversationVisualizer):
    """Shows a conversation in which agents delegate to each other, naming them."""

    def __init__(
        self,
        name: str | None = None,
        highlight_regex: dict[str, str] | None = None,
        skip_user_messages: bool = False,
        console: Console | None = None,
    ) -> None:
        super().__init__(
            highlight_regex=highlight_regex, skip_user_messages=skip_user_messages, console=console
        )
        self._name = name
        self._highlight_patterns = dict(highlight_regex or {})

    def create_sub_visualizer(self, agent_id: str) -> DelegationVisualizer:
        """A visualizer for the sub-agent `agent_id`, printing like this one."""
        return DelegationVisualizer(
            name=agent_id,
            highlight_regex=self._highlight_patterns,
            skip_user_messages=self._skip_user_messages,
            console=self._console,
        )

    @staticmethod
    def _format_agent_name(name: str) -> str:
        """ "lodging_expert" and "LodgingExpert" as "Lodging Expert"; a name with spaces as is."""
        if " " in name:
            return name
        if "_" in name:
            return name.replace("_", " ").title()
        return re.sub(r"(?<!^)(?=[A-Z])", " ", name).title()

    def _create_message_event_block(self, event: MessageEvent) -> Group | None:
        """The block of a message, titled by who spoke to whom."""
        return self._create_event_block(event)

    def _agent_name(self) -> str:
        return self._format_agent_name(self._name) if self._name else "Agent"

    def _event_title(self, event: Event) -> tuple[str, str]:
        agent = self._agent_name()
        if isinstance(event, SystemPromptEvent):
            return f"{agent} Agent System Prompt", "magenta"
        if isinstance(event, ActionEvent):
            done = "" if event.action is not None else " (Not Executed)"
            return f"{agent} Agent Action{done}", "blue"
        if isinstance(event, ObservationEvent):
            return f"{agent} Agent Observation", "yellow"
        if isinstance(event, MessageEvent):
            return self._message_title(event, agent)
        return super()._event_title(event)

    def _message_title(self, event: MessageEvent, agent: str) -> tuple[str, str]:
        if event.source == "user":
            if event.sender:
                sender = self._format_agent_name(event.sender)
                return f"{sender} Agent Message to {agent} Agent", "gold3"
            return f"User Message to {agent} Agent", "gold3"
        if event.source != "agent":
            return f"Message from {event.source.title()} to {agent} Agent", "magenta"
        recipient = self._last_sender()
        if recipient:
            return f"{agent} Agent Message to {self._format_agent_name(recipient)} Agent", "blue"
        return f"Message from {agent} Agent to User", "blue"

    def _last_sender(self) -> str | None:
        """Who sent the latest user message (another agent), to address the answer to."""
        state = self._state
        if state is None:
            return None
        events = state.events
        for index in range(len(events) - 1, -1, -1):
            event = events[index]
            if isinstance(event, MessageEvent) and event.source == "user":
                return event.sender
        return None
