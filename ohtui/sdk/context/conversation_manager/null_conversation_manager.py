"""NullConversationManager: leaves the history as it is."""

from __future__ import annotations

from typing import Any

from ohtui.sdk.context.conversation_manager.conversation_manager import ConversationManager
from ohtui.sdk.context.conversation_manager.hooks import ManagedAgent


class NullConversationManager(ConversationManager):
    """Never changes the messages; an overflow stays an error."""

    def apply_management(self, agent: ManagedAgent, **kwargs: Any) -> None:
        """Do nothing."""

    def reduce_context(
        self, agent: ManagedAgent, e: Exception | None = None, **kwargs: Any
    ) -> None:
        """Re-raise the overflow `e` (nothing can be removed); without one, do nothing."""
        if e is not None:
            raise e
