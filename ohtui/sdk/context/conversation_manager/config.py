"""A conversation manager as plain data (saved with the agent) and back."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import PlainSerializer, PlainValidator

from ohtui.sdk.context.conversation_manager.conversation_manager import ConversationManager
from ohtui.sdk.context.conversation_manager.null_conversation_manager import (
    NullConversationManager,
)
from ohtui.sdk.context.conversation_manager.sliding_window_conversation_manager import (
    SlidingWindowConversationManager,
)
from ohtui.sdk.context.conversation_manager.summarizing_conversation_manager import (
    SummarizingConversationManager,
)

MANAGERS: dict[str, type[ConversationManager]] = {
    cls.__name__: cls
    for cls in (
        NullConversationManager,
        SlidingWindowConversationManager,
        SummarizingConversationManager,
    )
}


def manager_from_config(config: dict[str, Any]) -> ConversationManager:
    """The manager `ConversationManager.to_config` described; ValueError for an unknown kind."""
    options = dict(config)
    kind = options.pop("kind", None)
    cls = MANAGERS.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown conversation manager {kind!r}: use one of {', '.join(MANAGERS)}")
    try:
        return cls(**options)
    except TypeError as exc:
        raise ValueError(f"invalid options for {kind}: {exc}") from exc


def _validate(value: Any) -> ConversationManager | None:
    if value is None or isinstance(value, ConversationManager):
        return value
    if isinstance(value, dict):
        return manager_from_config(value)
    raise ValueError(
        "conversation_manager takes a ConversationManager (e.g. "
        f"SlidingWindowConversationManager()), not {type(value).__name__}"
    )


def _serialize(value: ConversationManager | None) -> dict[str, Any] | None:
    return value.to_config() if value is not None else None


ManagerField = Annotated[
    ConversationManager | None,
    PlainValidator(_validate),
    PlainSerializer(_serialize, return_type=dict[str, Any] | None),
]
"""A pydantic field holding a conversation manager, saved as its `to_config()` dict."""
