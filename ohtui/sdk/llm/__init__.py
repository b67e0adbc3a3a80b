"""The LLM layer: messages, the litellm-backed LLM, streaming deltas, metrics, errors."""

from typing import TYPE_CHECKING

from ohtui.sdk.llm.exceptions import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMCancelledError,
    LLMContextWindowExceedError,
    LLMError,
    LLMNoResponseError,
    LLMRateLimitError,
    LLMServiceUnavailableError,
    LLMTimeoutError,
)
from ohtui.sdk.llm.fallback_strategy import FallbackStrategy
from ohtui.sdk.llm.llm import LLM, LLMCallContext, LLMResponse
from ohtui.sdk.llm.message import (
    ImageContent,
    Message,
    MessageToolCall,
    ReasoningItemModel,
    RedactedThinkingBlock,
    TextContent,
    ThinkingBlock,
    content_to_str,
)
from ohtui.sdk.llm.metrics import Metrics, MetricsSnapshot, TokenUsage
from ohtui.sdk.llm.registry import LLMRegistry, RegistryEvent
from ohtui.sdk.llm.streaming import LLMStreamChunk, TokenCallbackType, ToolCallDelta
from ohtui.sdk.utils.lazy import lazy_exports

if TYPE_CHECKING:
    from ohtui.sdk.llm.llm_profile_store import LLMProfileStore

# The profile store loads on first use: it brings the file lock and the keyring's helpers.
__getattr__ = lazy_exports(__name__, {"LLMProfileStore": "ohtui.sdk.llm.llm_profile_store"})

__all__ = [
    "LLM",
    "FallbackStrategy",
    "ImageContent",
    "LLMAuthenticationError",
    "LLMBadRequestError",
    "LLMCallContext",
    "LLMCancelledError",
    "LLMContextWindowExceedError",
    "LLMError",
    "LLMNoResponseError",
    "LLMProfileStore",
    "LLMRateLimitError",
    "LLMRegistry",
    "LLMResponse",
    "LLMServiceUnavailableError",
    "LLMStreamChunk",
    "LLMTimeoutError",
    "Message",
    "MessageToolCall",
    "Metrics",
    "MetricsSnapshot",
    "ReasoningItemModel",
    "RedactedThinkingBlock",
    "RegistryEvent",
    "TextContent",
    "ThinkingBlock",
    "TokenCallbackType",
    "TokenUsage",
    "ToolCallDelta",
    "content_to_str",
]
