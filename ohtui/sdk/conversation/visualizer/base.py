"""ConversationVisualizerBase: shows a conversation's events as they happen."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, final

if TYPE_CHECKING:
    from ohtui.sdk.conversation.stats import ConversationStats
    from ohtui.sdk.event.base import Event


class ConversationVisualizerBase(ABC):
    """Base class of visualizers. Pass an instance or the class to a Conversation."""

    def __init__(self) -> None:
        self._state: Any = None

    @final
    def initialize(self, state: Any) -> None:
        """Attach the conversation state; called by the Conversation. Do not override."""
        self._state = state

    @property
    def conversation_stats(self) -> ConversationStats | None:
        """The conversation's stats, once initialized."""
        return getattr(self._state, "stats", None)

    @abstractmethod
    def on_event(self, event: Event) -> None:
        """Show one event."""

    def create_sub_visualizer(self, agent_id: str) -> ConversationVisualizerBase | None:
        """A visualizer for a delegated sub-agent; None means sub-agents are not shown."""
        return None
