"""Visualizers: show a conversation's events as they happen."""

from ohtui.sdk.conversation.visualizer.base import ConversationVisualizerBase
from ohtui.sdk.conversation.visualizer.default import DefaultConversationVisualizer

__all__ = ["ConversationVisualizerBase", "DefaultConversationVisualizer"]
