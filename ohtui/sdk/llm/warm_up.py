"""Warming up the LLM path before the first call: litellm imported, the server connected.

The first message of a session would otherwise wait for litellm's import (seconds of CPU)
and a new connection. A front end calls `warm_up` on a background thread once it is idle
(never before its first frame: the import competes for the CPU).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.sdk.llm import direct
from ohtui.sdk.llm._litellm import litellm

if TYPE_CHECKING:
    from ohtui.sdk.llm.llm import LLM

CONNECT_TIMEOUT = 3.0
"""Seconds to wait for the server when opening the first connection (offline is fine)."""


def warm_up(llm: LLM | None = None) -> None:
    """Open a pooled connection to `llm`'s server when it is OpenAI-compatible (called
    directly), then import litellm. Blocks for both: call it on a background thread.
    Harmless offline or with an unreachable server (the first call reports that)."""
    if llm is not None and llm.base_url:
        request = {
            "model": llm.model,
            "api_base": llm.base_url,
            "custom_llm_provider": llm.custom_llm_provider,
            "api_version": llm.api_version,
        }
        if direct.is_direct(request):
            key = llm.api_key.get_secret_value() if llm.api_key is not None else None
            direct.connect(llm.base_url, key, timeout=min(CONNECT_TIMEOUT, llm.connect_timeout))
    litellm()
