"""litellm's bundled model map (context windows, prices), read without importing litellm.

Importing litellm costs seconds of CPU and ~150 MB. A model called directly (an
OpenAI-compatible server, see `direct`) needs only a few numbers from it, and the default
condenser asks for the context window before the first call: so these come from the JSON
file litellm ships, the same copy litellm reads (LITELLM_LOCAL_MODEL_COST_MAP, see
`_litellm`). Found with the import system's finder, which does not run litellm.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
from pathlib import Path
from typing import Any

from ohtui.sdk.llm import _litellm

logger = logging.getLogger(__name__)

MAP_FILE = "model_prices_and_context_window_backup.json"


def _entries() -> dict[str, Any]:
    """The whole map, read anew: kept, its thousands of entries would hold ~5 MB for the
    process's life, where a session asks about one or two models (see `model_info`)."""
    spec = importlib.util.find_spec("litellm")
    locations = spec.submodule_search_locations if spec is not None else None
    if not locations:
        return {}
    try:
        entries = json.loads((Path(next(iter(locations))) / MAP_FILE).read_bytes())
    except (OSError, ValueError):
        logger.warning("litellm's model map could not be read", exc_info=True)
        return {}
    return entries if isinstance(entries, dict) else {}


@functools.lru_cache(maxsize=64)
def model_info(model: str, provider: str | None = None) -> dict[str, Any] | None:
    """The map's entry for `model` ("gpt-4o", "openai/gpt-4o", "openrouter/x/y"...), or None.

    The name as given first, then under `provider`, then without its provider prefix where
    the entry is that provider's, as litellm looks models up. Each answer is kept, not the
    map (read again for a model not asked about before). Read-only: shared by callers."""
    loaded = _litellm.loaded()
    if loaded is not None and isinstance(getattr(loaded, "model_cost", None), dict):
        entries: dict[str, Any] = loaded.model_cost  # litellm holds the same map: no reading
    else:
        entries = _entries()
    candidates: list[tuple[str, str | None]] = [(model, None)]
    if provider:
        candidates.append((f"{provider}/{model}", None))
    prefix, _, rest = model.partition("/")
    if rest:
        candidates.append((rest, provider or prefix))
    for key, owner in candidates:
        entry = entries.get(key)
        if key == "sample_spec" or not isinstance(entry, dict):
            continue
        if owner is None or entry.get("litellm_provider") == owner:
            return entry
    return None


def context_window(model: str, provider: str | None = None) -> int | None:
    """The model's input token limit; None when the map does not know the model."""
    entry = model_info(model, provider) or {}
    window = entry.get("max_input_tokens") or entry.get("max_tokens")
    return int(window) if window else None


def cost(
    model: str,
    provider: str | None,
    *,
    prompt_tokens: int,
    completion_tokens: int,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> float | None:
    """What a call cost at the map's prices (cached prompt tokens at their own price);
    None when the map has no price for the model."""
    entry = model_info(model, provider) or {}
    input_price = entry.get("input_cost_per_token")
    output_price = entry.get("output_cost_per_token")
    if input_price is None and output_price is None:
        return None
    input_price = float(input_price or 0.0)
    read_price = float(entry.get("cache_read_input_token_cost") or input_price)
    write_price = float(entry.get("cache_creation_input_token_cost") or input_price)
    uncached = max(0, prompt_tokens - cache_read_tokens)
    return (
        uncached * input_price
        + cache_read_tokens * read_price
        + cache_write_tokens * write_price
        + completion_tokens * float(output_price or 0.0)
    )
