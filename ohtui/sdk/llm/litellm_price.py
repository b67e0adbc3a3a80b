"""A call's cost at litellm's prices, without asking litellm on every call.

`litellm.cost_per_token` looks the model up and walks its pricing rules each time: about a
quarter of a millisecond of every answer through litellm. Below the model's first price
tier a call's cost is linear in its four token counts, so the four prices are read from
litellm once per model (by asking it the cost of a few probe calls), checked against one
more probe, and used while a call stays below the tier; anything else asks litellm.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, NamedTuple

from ohtui.sdk.llm._litellm import litellm

_TIER = re.compile(r"above_(\d+)k_tokens")
_BASE, _STEP = 10_000, 1_000


class LinearPrice(NamedTuple):
    """Per-token prices of a model, valid while a call's prompt is within `limit` tokens."""

    prompt: float
    completion: float
    cache_read: float
    cache_write: float
    limit: float

    def cost(self, prompt: int, completion: int, cache_read: int, cache_write: int) -> float:
        """The cost of a call of these counts (below `limit`)."""
        return (
            prompt * self.prompt
            + completion * self.completion
            + cache_read * self.cache_read
            + cache_write * self.cache_write
        )


def litellm_cost(
    model: str, provider: str | None, prompt: int, completion: int, read: int, write: int
) -> float:
    """litellm's cost of a call (raises where it has no price for the model)."""
    prompt_cost, completion_cost = litellm().cost_per_token(
        model=model,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cache_read_input_tokens=read,
        cache_creation_input_tokens=write,
        custom_llm_provider=provider,
    )
    return float(prompt_cost + completion_cost)


def cost(
    model: str, provider: str | None, prompt: int, completion: int, read: int, write: int
) -> float:
    """What litellm would say the call cost (raises where it has no price for the model)."""
    price = linear_price(model, provider)
    if (
        price is not None
        and prompt + read + write <= price.limit
        and min(prompt, completion, read, write) >= 0
    ):
        return price.cost(prompt, completion, read, write)
    return litellm_cost(model, provider, prompt, completion, read, write)


def linear_price(model: str, provider: str | None) -> LinearPrice | None:
    """The model's prices below its first tier, read from litellm; None where its cost is
    not linear there (or litellm has no price for it). Read again when litellm's map
    changes (`register_model`)."""
    module = litellm()
    generation = getattr(getattr(module, "utils", None), "get_model_cost_mutation_generation", None)
    version = (id(module.model_cost), generation() if callable(generation) else None)
    return _linear_price(model, provider, version)


@functools.lru_cache(maxsize=32)
def _linear_price(model: str, provider: str | None, _version: object) -> LinearPrice | None:
    try:
        limit = _first_tier(litellm().get_model_info(model, custom_llm_provider=provider))
        if limit < 4 * _BASE:
            return None

        def ask(prompt: int, completion: int, read: int, write: int) -> float:
            return litellm_cost(model, provider, prompt, completion, read, write)

        base = ask(_BASE, 0, 0, 0)
        price = LinearPrice(
            prompt=(ask(2 * _BASE, 0, 0, 0) - base) / _BASE,
            completion=(ask(_BASE, _STEP, 0, 0) - base) / _STEP,
            cache_read=(ask(_BASE, 0, _STEP, 0) - base) / _STEP,
            cache_write=(ask(_BASE, 0, 0, _STEP) - base) / _STEP,
            limit=limit,
        )
        probes = ((_BASE, 0, 0, 0), (13_000, 700, 2_000, 1_500), (1, 1, 0, 0), (0, 0, 0, 0))
        for probe in probes:
            if not math.isclose(price.cost(*probe), ask(*probe), rel_tol=1e-9, abs_tol=1e-15):
                return None
    except Exception:  # noqa: BLE001 - no price, or priced otherwise: litellm is asked each time
        return None
    return price


def _first_tier(info: dict[str, Any]) -> float:
    """The prompt size where the model's prices change (infinite where they never do)."""
    if any("tier" in key for key in info if info.get(key)):
        return 0  # priced by a table of tiers: not linear
    sizes = [
        int(match.group(1)) * 1000
        for key, value in info.items()
        if value is not None and (match := _TIER.search(key))
    ]
    return min(sizes, default=math.inf)
