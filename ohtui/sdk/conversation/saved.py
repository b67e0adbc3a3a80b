"""SavedConversations: renames and deletes saved conversations, each through its one writer.

The conversation open in this process is renamed through itself (`set_title`: it saves the
title and tells whoever shows it, wherever the rename came from) and is never deleted from
under it; any other is changed where the catalogue keeps it, which refuses one another ohtui
has open. Blocking (the database, a server): call these off a UI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ohtui.sdk.conversation.catalog import LocalCatalog

if TYPE_CHECKING:
    from ohtui.sdk.conversation.base import BaseConversation
    from ohtui.sdk.conversation.catalog import ConversationCatalog

DELETE_OPEN = (
    "This conversation is open now, so it cannot be deleted. "
    "Start a new conversation first, then delete this one from the picker."
)


class OpenConversationError(ValueError):
    """The conversation is open in this process: it cannot be deleted from under it."""


class SavedConversations:
    """The one way a front end renames and deletes conversations."""

    def __init__(
        self,
        directory: Path,
        open_conversation: Callable[[], BaseConversation | None],
        catalog: ConversationCatalog | None = None,
    ) -> None:
        """`open_conversation` gives the conversation open now (None: none is); `catalog`
        changes the others where they are kept (default: the local folder)."""
        self.directory = directory
        self._open_conversation = open_conversation
        self._catalog = catalog or LocalCatalog(directory)

    def is_open(self, conversation_id: str) -> bool:
        """Whether `conversation_id` is the conversation open in this process."""
        return self._open(conversation_id) is not None

    def _open(self, conversation_id: str) -> BaseConversation | None:
        conversation = self._open_conversation()
        if conversation is None or conversation.id.hex != conversation_id:
            return None
        return conversation

    def rename(self, conversation_id: str, title: str) -> None:
        """Give the conversation a new title. ValueError for an empty one;
        ConversationLockedError when another ohtui has it open."""
        title = title.strip()
        if not title:
            raise ValueError("A title cannot be empty.")
        conversation = self._open(conversation_id)
        if conversation is not None:
            conversation.set_title(title)
            return
        self._catalog.rename(conversation_id, title)

    def delete(self, conversation_id: str) -> None:
        """Delete the conversation, its events and files. OpenConversationError for the one
        open here; ConversationLockedError when another ohtui has it open."""
        if self.is_open(conversation_id):
            raise OpenConversationError(DELETE_OPEN)
        self._catalog.delete(conversation_id)
