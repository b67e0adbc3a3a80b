"""The `openhands/` model prefix: models served through the OpenHands LLM proxy.

`openhands/<name>` is `<name>` at an OpenAI-compatible LiteLLM proxy: the given base URL,
or OpenHands' own proxy when none is given. Calls go to litellm as `litellm_proxy/<name>`
(or straight over HTTP, see `direct`); capability and price lookups use `<name>`.
"""

from __future__ import annotations

from typing import Final

OPENHANDS_PREFIX: Final = "openhands/"
LITELLM_PROXY_PREFIX: Final = "litellm_proxy/"
OPENHANDS_PROXY_URL: Final = "https://llm-proxy.app.all-hands.dev"


def route(model: str, base_url: str | None) -> tuple[str, str | None]:
    """The model name and base URL a call is made with."""
    if model.startswith(OPENHANDS_PREFIX):
        name = model.removeprefix(OPENHANDS_PREFIX)
        return f"{LITELLM_PROXY_PREFIX}{name}", base_url or OPENHANDS_PROXY_URL
    return model, base_url


def capability_name(model: str) -> str:
    """The name to look a model's context window, vision and prices up under."""
    return model.removeprefix(OPENHANDS_PREFIX)
