"""Warming up the LLM path before the first call: the server connected, or litellm imported.

The first message of a session would otherwise wait for a new connection, or for
litellm's import (seconds of CPU) where the model is not called directly. A front end
calls `warm_up` on a background thread once it is idle (never before its first frame: the
import competes for the CPU).
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
    directly: litellm is not needed, so not imported); else import litellm. Blocks: call it
    on a background thread. Harmless offline or with an unreachable server (the first call
    reports that)."""
    if llm is not None and llm.called_directly:
        assert llm.base_url is not None
        key = llm.api_key.get_secret_value() if llm.api_key is not None else None
        direct.connect(llm.base_url, key, timeout=min(CONNECT_TIMEOUT, llm.connect_timeout))
        return
    litellm()
