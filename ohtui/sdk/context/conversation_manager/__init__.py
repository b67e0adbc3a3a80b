"""Conversation managers (the Strands reference): strategies that keep an agent's messages
within the model's context window, and the lifecycle hooks they listen to."""

from ohtui.sdk.context.conversation_manager.config import manager_from_config
from ohtui.sdk.context.conversation_manager.conversation_manager import (
    ContextWindowOverflowException,
    ConversationManager,
    ProactiveCompressionConfig,
)
from ohtui.sdk.context.conversation_manager.hooks import (
    AfterInvocationEvent,
    BeforeModelCallEvent,
    HookEvent,
    HookProvider,
    HookRegistry,
)
from ohtui.sdk.context.conversation_manager.null_conversation_manager import (
    NullConversationManager,
)
from ohtui.sdk.context.conversation_manager.sliding_window_conversation_manager import (
    SlidingWindowConversationManager,
)
from ohtui.sdk.context.conversation_manager.summarizing_conversation_manager import (
    SummarizingConversationManager,
)

__all__ = [
    "AfterInvocationEvent",
    "BeforeModelCallEvent",
    "ContextWindowOverflowException",
    "ConversationManager",
    "HookEvent",
    "HookProvider",
    "HookRegistry",
    "NullConversationManager",
    "ProactiveCompressionConfig",
    "SlidingWindowConversationManager",
    "SummarizingConversationManager",
    "manager_from_config",
]
