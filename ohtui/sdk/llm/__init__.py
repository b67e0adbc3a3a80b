"""The LLM layer: messages, the litellm-backed LLM, streaming deltas, metrics, errors."""

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

__all__ = [
    "LLM",
    "ImageContent",
    "LLMAuthenticationError",
    "LLMBadRequestError",
    "LLMCallContext",
    "LLMCancelledError",
    "LLMContextWindowExceedError",
    "LLMError",
    "LLMNoResponseError",
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
