"""Deleting and renaming a conversation from the picker: asked first, refused where another
owner has it (this ohtui's open conversation, another ohtui), done on a worker thread."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

from ohtui.tui.picker_rows import display_title
from ohtui.tui.screens.confirm import ConfirmScreen
from ohtui.tui.screens.text_prompt import TextPromptScreen

if TYPE_CHECKING:
    from textual.screen import Screen

    from ohtui.sdk.conversation.saved import SavedConversations
    from ohtui.sdk.conversation.summary import ConversationSummary
    from ohtui.tui.screens.picker_preview import InBackground


@dataclass
class Deleted(Message):
    """A saved conversation was deleted from the picker."""

    conversation_id: str
    title: str


@dataclass
class Renamed(Message):
    """A saved conversation was renamed from the picker (its open copy may need it too)."""

    conversation_id: str
    title: str


class ConversationChanges:
    """The picker's delete and rename: each posts Deleted or Renamed to the screen when done."""

    def __init__(
        self,
        screen: Screen[Any],
        in_background: InBackground,
        saved: Callable[[], SavedConversations],
        current_id: str | None,
    ) -> None:
        """`saved` gives what renames and deletes (made once the engine is loaded)."""
        self._screen = screen
        self._in_background = in_background
        self._saved = saved
        self._current_id = current_id

    def delete(self, summary: ConversationSummary) -> None:
        """Delete the conversation after asking (never the open one)."""
        screen = self._screen
        if summary.id == self._current_id or self._saved().is_open(summary.id):
            from ohtui.sdk.conversation.saved import DELETE_OPEN

            screen.notify(DELETE_OPEN, title="Not deleted", severity="warning", markup=False)
            return
        if self._refuse_held(summary, "Not deleted"):
            return
        title = display_title(summary)

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._in_background(lambda: self._delete(summary.id, title), "change")

        screen.app.push_screen(
            ConfirmScreen(
                f"Delete '{title}'?",
                "Its events and files are removed. This cannot be undone.",
                confirm_label="Delete",
                danger=True,
            ),
            confirmed,
        )

    def _delete(self, conversation_id: str, title: str) -> Deleted:
        self._saved().delete(conversation_id)
        return Deleted(conversation_id, title)

    def rename(self, summary: ConversationSummary) -> None:
        """Give the conversation the new title the user types."""
        if self._refuse_held(summary, "Not renamed"):
            return

        def renamed(title: str | None) -> None:
            if title is not None and title != summary.title:
                self._in_background(lambda: self._rename(summary.id, title), "change")

        self._screen.app.push_screen(
            TextPromptScreen(
                "Rename conversation",
                summary.title or "",
                placeholder=display_title(summary),
                empty_message="A title cannot be empty: type one, or press esc to keep it.",
            ),
            renamed,
        )

    def _rename(self, conversation_id: str, title: str) -> Renamed:
        self._saved().rename(conversation_id, title)
        return Renamed(conversation_id, title.strip())

    def _refuse_held(self, summary: ConversationSummary, title: str) -> bool:
        """Say so when another ohtui has the conversation open (it alone may change it)."""
        if summary.held_by is None or summary.id == self._current_id:
            return False
        self._screen.notify(
            f"Another ohtui has this conversation open ({summary.held_by.describe()}). "
            "Close it there first.",
            title=title,
            severity="warning",
            markup=False,
        )
        return True
