"""A conversation manager as plain data (saved with the agent) and back."""

from __future__ import annotations

from typing import Any

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
