"""Errors of the conversation layer."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ohtui.sdk.conversation.lease import LeaseHolder
    from ohtui.sdk.event.conversation_error import ConversationErrorEvent


class ConversationRunError(RuntimeError):
    """`run()` failed. Carries the conversation id, the ConversationErrorEvent recorded for
    the failure and where to look for details."""

    def __init__(
        self,
        conversation_id: object,
        original_exception: BaseException,
        persistence_dir: str | None = None,
        conversation_error: ConversationErrorEvent | None = None,
    ) -> None:
        self.conversation_id = conversation_id
        self.original_exception = original_exception
        self.persistence_dir = persistence_dir
        self.conversation_error = conversation_error
        self.log_file = current_log_file()
        where = [f"events saved under {persistence_dir}"] if persistence_dir else []
        where.append(f"logs in {self.log_file}" if self.log_file else "no log file is configured")
        super().__init__(
            f"Conversation {conversation_id} failed: {original_exception} ({'; '.join(where)})"
        )


class ConversationNotFoundError(LookupError):
    """No saved conversation matches the id (or id prefix) given."""


class ConversationIdTakenError(ValueError):
    """A conversation (a fork) was asked for under the id of one that already exists."""


class PersistenceError(OSError):
    """Conversations cannot be stored or read where asked; the message says why and what to do."""


class ConversationLockedError(PersistenceError):
    """Another process (or another open in this one) runs the conversation: `holder` says who."""

    def __init__(self, conversation_id: str, holder: LeaseHolder) -> None:
        self.conversation_id = conversation_id
        self.holder = holder
        super().__init__(
            f"Conversation {conversation_id} is open in another ohtui ({holder.describe()}). "
            "Close it there, or open it read-only here; if that process ends, even killed, "
            "the conversation is free again."
        )


class ConversationReadOnlyError(PersistenceError):
    """A conversation opened read-only was asked to change; the message says what to do."""


class StorageReadOnlyError(PersistenceError):
    """The folder (or database) conversations are kept in cannot be written: saved ones can
    still be read, with a read-only open."""

    def __init__(self, message: str, base_dir: Path) -> None:
        super().__init__(message)
        self.base_dir = base_dir


def current_log_file() -> str | None:
    """The file the logging configuration writes to, if any."""
    for name in ("ohtui", ""):
        for handler in logging.getLogger(name).handlers:
            filename = getattr(handler, "baseFilename", None)
            if filename:
                return str(Path(filename))
    return None


class CheckpointError(Exception):
    """A checkpoint of the workspace cannot be listed or restored; the message says why and
    what to do."""
