"""The one place litellm is imported: lazily, offline and silent.

Importing litellm costs seconds of CPU, so nothing imports it at module level. When it is
first needed it is imported with its price list read from the copy bundled with it (never
the network), no `.env` loading, and its stderr handlers replaced by propagation to our
own logging configuration.
"""

from __future__ import annotations

import inspect
import logging
import os
import threading
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from types import ModuleType
from typing import cast

from ohtui import long_lived

_module: ModuleType | None = None
_lock = threading.Lock()
_call_options: dict[str, object] = {}
_internal_call: list[Callable[[], AbstractContextManager[None]] | None] = [None]
_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "openai")


def loaded() -> ModuleType | None:
    """litellm if it has been imported, else None (never imports it)."""
    return _module


def litellm() -> ModuleType:
    """Return the litellm module, importing and quieting it on first use."""
    global _module
    if _module is not None:
        return _module
    with _lock:
        if _module is None:
            with long_lived.importing():  # then frozen out of the collector's full passes
                _module = _load()
    return _module


def _load() -> ModuleType:
    """Import litellm, offline and quiet, and set it up for our calls."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")  # DEV mode loads ./.env
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    # litellm's types trip a pydantic warning on first use; it would land on the terminal.
    warnings.filterwarnings("ignore", message=r".*`ReadOnly` qualifier", category=UserWarning)
    import litellm as module

    _defer_encoding(module)
    module.suppress_debug_info = True
    # Its per-chunk logging walks the whole request (the history) for every chunk on
    # a thread pool: with a long conversation that starves everything else. We keep
    # our own metrics and have no litellm callbacks, so it has nothing to log for us.
    module.disable_streaming_logging = True
    module.telemetry = False
    module.set_verbose = False
    # Nothing of litellm's bookkeeping is ours: no callbacks, no budget, no cache (our
    # own metrics come from the answer's usage). Its redaction of messages for those
    # absent callbacks is off too: it copied and rewrote every answer, for no reader.
    module.turn_off_message_logging = False
    module.log_raw_request_response = False
    module.success_callback = []
    module.failure_callback = []
    module.callbacks = []
    module.max_budget = 0.0
    module.cache = None
    # Its price of each answer (kept for its logging) counts the request's tokens
    # with its tokenizer when the answer is streamed: the history walked once more
    # and 40 MB of tokenizer loaded. We price answers ourselves from their usage.
    if callable(getattr(module, "response_cost_calculator", None)):
        module.response_cost_calculator = _no_price
    _internal_call[0] = _internal_sub_call()
    # It looks the same model up in its map several times per call.
    from ohtui.sdk.llm import litellm_model_info

    litellm_model_info.install(module)
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            if isinstance(handler, logging.StreamHandler) and not isinstance(
                handler, logging.FileHandler
            ):
                logger.removeHandler(handler)
        logger.propagate = True
        logger.setLevel(logging.WARNING)
    # With `tools`, litellm imports its MCP gateway (slow, and it needs the optional
    # `mcp` package) only to learn that function tools are not MCP tools. Versions
    # that can skip that check take a private flag; pass it only where it exists.
    if "_skip_mcp_handler" in inspect.getsource(module.main.completion):
        _call_options["_skip_mcp_handler"] = True
    return module


def _no_price(**_kwargs: object) -> None:
    """litellm's per-answer pricing, skipped (see `litellm`)."""
    return None


class _DeferredEncoding:
    """litellm's default tokenizer, loaded when something first uses it.

    litellm hands its tokenizer to every request (to count tokens where an answer has no
    usage): loading it costs 40 MB and a third of a second of CPU, on the first call or
    mid-stream. Our answers carry usage, and our own counting asks litellm's
    `token_counter`, so the tokenizer is made only when really used.
    """

    def __init__(self, load: Callable[[], object]) -> None:
        self._load = load
        self._real: object | None = None

    def __getattr__(self, name: str) -> object:
        if self._real is None:
            self._real = self._load()
        return getattr(self._real, name)


def _defer_encoding(module: ModuleType) -> None:
    """Give litellm's request path a tokenizer that loads on first use, where it has the
    hook (a private cache of the tokenizer); else leave it as it is."""
    main = getattr(module, "main", None)
    load = getattr(main, "_load_default_encoding", None)
    if main is None or load is None or getattr(main, "_encoding_cache", 0) is not None:
        return
    main._encoding_cache = _DeferredEncoding(load)


def _internal_sub_call() -> Callable[[], AbstractContextManager[None]] | None:
    """litellm's switch that skips its success logging of a call, where it has one."""
    try:
        from litellm._internal_context import internal_sub_call
    except ImportError:
        return None
    return cast("Callable[[], AbstractContextManager[None]]", internal_sub_call)


def unlogged() -> AbstractContextManager[None]:
    """Around a litellm call: skip its success logging. That runs on a thread after every
    call and copies and walks the whole request (the history), competing with the engine
    for the GIL; nothing in it is ours."""
    litellm()
    internal = _internal_call[0]
    return internal() if internal is not None else nullcontext()


def call_options() -> dict[str, object]:
    """Extra keyword arguments every `litellm.completion` call should get."""
    litellm()
    return _call_options
