"""Token counts and context windows, offline, from litellm's bundled tokenizers and model map.

litellm reads its model map from the copy bundled with it (see `_litellm`) and its
tiktoken encodings from files bundled with it, so nothing here touches the network.
Models litellm does not know have no known window, and are counted with its default
(OpenAI) tokenizer.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from typing import Any

from ohtui.sdk.llm import model_map
from ohtui.sdk.llm._litellm import litellm

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=64)
def lookup_context_window(model: str, provider: str | None = None) -> int | None:
    """The model's input token limit from litellm's model map; None when it is unknown.
    (Read from the map's file first: only a model it does not name imports litellm.)"""
    window = model_map.context_window(model, provider)
    if window is not None:
        return window
    try:
        info = litellm().get_model_info(model, custom_llm_provider=provider)
    except Exception:  # noqa: BLE001 - an unmapped model simply has no known window
        return None
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return int(window) if window else None


def count_tokens(
    model: str, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None = None
) -> int:
    """The tokens `messages` (chat-completions dicts) and `tools` take for `model`."""
    try:
        return int(
            litellm().token_counter(
                model=model, messages=list(messages), tools=list(tools) if tools else None
            )
        )
    except Exception:
        logger.warning("token counting failed for %s; estimating from length", model, exc_info=True)
        text = sum(len(str(m.get("content") or "")) for m in messages)
        return text // 4 + 4 * len(messages)
