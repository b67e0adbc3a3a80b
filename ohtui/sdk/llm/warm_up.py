"""Warming up the LLM path before the first call: the server connected, or litellm imported.

The first message of a session would otherwise wait for a new connection, or for
litellm's import (seconds of CPU) where the model is not called directly. A front end
calls `warm_up` on a background thread once it is idle (never before its first frame: the
import competes for the CPU).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import TYPE_CHECKING

from ohtui import long_lived
from ohtui.paced_import import paced_imports
from ohtui.sdk.llm import direct, history_splice
from ohtui.sdk.llm._litellm import call_options, litellm, unlogged

if TYPE_CHECKING:
    from ohtui.sdk.llm.llm import LLM

REHEARSAL_TOOLS = (
    {
        "type": "function",
        "function": {
            "name": "warm_up",
            "description": "A tool, so that litellm's tool handling is loaded too.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
)
CONNECT_TIMEOUT = 3.0
"""Seconds to wait for the server when opening the first connection (offline is fine)."""


def warm_up(llm: LLM | None = None, pause: Callable[[], None] | None = None) -> None:
    """Open a pooled connection to `llm`'s server when it is OpenAI-compatible (called
    directly: litellm is not needed, so not imported); else import litellm. Blocks: call it
    on a background thread. Harmless offline or with an unreachable server (the first call
    reports that). `pause`, if given, is called before each module litellm's import and its
    first call load (see `paced_imports`): a UI can hold the import while it draws."""
    if llm is not None and llm.called_directly:
        assert llm.base_url is not None
        key = llm.api_key.get_secret_value() if llm.api_key is not None else None
        direct.connect(llm.base_url, key, timeout=min(CONNECT_TIMEOUT, llm.connect_timeout))
        return
    with paced_imports(pause) if pause is not None else nullcontext():
        _load_litellm_path(llm)


def _load_litellm_path(llm: LLM | None) -> None:
    """Import litellm and, for `llm`, what its first call loads (rehearsed, nothing sent)."""
    module = litellm()
    if llm is not None:
        from ohtui.sdk.llm.llm import LLMCallContext

        # litellm's first call imports the provider's code and makes its client: about a
        # second of CPU the first message would otherwise wait for. Frozen too, as litellm.
        request = llm._request(REHEARSAL_TOOLS, LLMCallContext(), {})
        request.update(call_options())
        if llm.stream:
            request.update(stream=True, stream_options={"include_usage": True})
        request["messages"] = [{"role": "user", "content": "warm-up"}]
        with unlogged(), long_lived.importing():
            history_splice.rehearse(module, request)
