"""ConversationManager: the strategy that keeps an agent's messages within the context window."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Any, TypedDict

from ohtui.sdk.context.conversation_manager.hooks import (
    BeforeModelCallEvent,
    HookRegistry,
    ManagedAgent,
)
from ohtui.sdk.llm.exceptions import LLMContextWindowExceedError
from ohtui.sdk.llm.message import Message

logger = logging.getLogger(__name__)

DEFAULT_COMPRESSION_THRESHOLD = 0.7
DEFAULT_CONTEXT_WINDOW_LIMIT = 200_000
"""The window assumed for proactive compression when the model's own is unknown."""


class ContextWindowOverflowException(LLMContextWindowExceedError):  # noqa: N818 - Strands name
    """The conversation does not fit the model's context window and cannot be reduced."""

    def __init__(self, message: str, *, model: str | None = None) -> None:
        super().__init__(message, model=model)
        self.summary = "the conversation no longer fits the model's context window"


class ProactiveCompressionConfig(TypedDict, total=False):
    """`proactive_compression` as a dict: the share of the window that triggers it, (0, 1]."""

    compression_threshold: float


ProactiveCompression = bool | ProactiveCompressionConfig | None


def resolve_threshold(proactive_compression: ProactiveCompression) -> float | None:
    """The compression threshold `proactive_compression` asks for; ValueError out of (0, 1]."""
    if proactive_compression is True:
        threshold: Any = DEFAULT_COMPRESSION_THRESHOLD
    elif isinstance(proactive_compression, dict):
        threshold = proactive_compression.get(
            "compression_threshold", DEFAULT_COMPRESSION_THRESHOLD
        )
    elif proactive_compression in (False, None):
        return None
    else:
        raise ValueError(
            "proactive_compression takes True, False, None or "
            f'{{"compression_threshold": <float>}}, got {proactive_compression!r}'
        )
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise ValueError(f"compression_threshold must be a number, got {threshold!r}")
    if threshold <= 0 or threshold > 1:
        raise ValueError(
            "compression_threshold must be between 0 (exclusive) and 1 (inclusive), "
            f"got {threshold}"
        )
    return float(threshold)


class ConversationManager(ABC):
    """Keeps an agent's message list within bounds (a HookProvider).

    `reduce_context(agent, e)` is called when the model reports a context-window overflow
    and must shrink the history enough for the retry to fit, or raise. With
    `proactive_compression`, `reduce_context(agent)` (no `e`) also runs before a model call
    whose projected input reaches the threshold share of the window; that is best effort.
    Subclasses overriding `register_hooks` call the base implementation.
    """

    def __init__(self, *, proactive_compression: ProactiveCompression = None) -> None:
        """`proactive_compression`: True (70% of the window), a dict with
        `compression_threshold` in (0, 1], or False/None (only overflow recovery)."""
        self.removed_message_count = 0
        """Messages of the user or the LLM removed from the list (a summary is not one)."""
        self.proactive_compression = proactive_compression
        self._compression_threshold = resolve_threshold(proactive_compression)
        self._context_window_limit_warned = False

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Register the proactive-compression check before every model call."""
        registry.add_callback(BeforeModelCallEvent, self._on_before_model_call_threshold)

    def _on_before_model_call_threshold(self, event: BeforeModelCallEvent) -> None:
        if self._compression_threshold is None:
            return
        limit = _context_window(event.agent)
        if limit is None:
            limit = DEFAULT_CONTEXT_WINDOW_LIMIT
            if not self._context_window_limit_warned:
                self._context_window_limit_warned = True
                logger.warning(
                    "the model's context window is unknown; proactive compression assumes %d "
                    "tokens (set max_input_tokens on the LLM)",
                    DEFAULT_CONTEXT_WINDOW_LIMIT,
                )
        tokens = event.projected_input_tokens
        if tokens is None:
            logger.debug("projected input tokens unknown: no proactive compression")
            return
        if tokens / limit >= self._compression_threshold:
            logger.debug("projected %d of %d tokens: reducing context", tokens, limit)
            try:
                self.reduce_context(event.agent)
            except Exception:  # best effort: the model call goes ahead anyway
                logger.debug("proactive compression failed", exc_info=True)

    def restore_from_session(self, state: dict[str, Any]) -> list[Message] | None:
        """Take back the state `get_state` saved; return messages to put before the restored
        ones (None here). ValueError when the state is another manager's."""
        if not isinstance(state, dict) or state.get("__name__") != type(self).__name__:
            saved = state.get("__name__") if isinstance(state, dict) else None
            raise ValueError(
                f"Invalid conversation manager state: it was saved by {saved or 'nothing'}, "
                f"not {type(self).__name__}."
            )
        self.removed_message_count = int(state.get("removed_message_count", 0))
        return None

    def get_state(self) -> dict[str, Any]:
        """This manager's state as a JSON-serializable dict."""
        return {
            "__name__": type(self).__name__,
            "removed_message_count": self.removed_message_count,
        }

    @abstractmethod
    def apply_management(self, agent: ManagedAgent, **kwargs: Any) -> None:
        """Bring `agent.messages` within this strategy's bounds, in place (after every run)."""

    @abstractmethod
    def reduce_context(
        self, agent: ManagedAgent, e: Exception | None = None, **kwargs: Any
    ) -> None:
        """Shrink `agent.messages` in place: enough for the retry to fit when `e` (an
        overflow) is given, else as a best effort."""

    def to_config(self) -> dict[str, Any]:
        """The constructor arguments that recreate this manager, with its class as `kind`."""
        return {"kind": type(self).__name__, "proactive_compression": self.proactive_compression}


def _context_window(agent: ManagedAgent) -> int | None:
    """The agent's model's input token limit, if known."""
    try:
        window = agent.llm.context_window
    except Exception:  # noqa: BLE001 - an unknown model simply has no known window
        return None
    return window if isinstance(window, int) and window > 0 else None
