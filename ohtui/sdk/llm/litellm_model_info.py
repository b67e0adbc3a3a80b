"""litellm's model-map lookup, remembered per model while its map is unchanged.

One `litellm.completion` asks litellm's model map about the same model five or six times
(capabilities, supported parameters, which API to use), each time trying a dozen spellings
of its name and building a 60-field record: about half a millisecond of every call,
whatever the model. The answer only changes when the map does, so it is kept, keyed by
the call's arguments and litellm's own count of changes to its map (bumped by
`register_model` and everything else that edits it), and each caller gets its own copy
(some change what they are given). A lookup that fails fails again the same way.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

MAX_ENTRIES = 256
"""Lookups kept (a session asks about a handful of models)."""
_HOLDERS = ("litellm.utils", "litellm.responses.bridge_check")
"""Modules that hold `get_model_info_helper` under their own name (imported at their top);
the others import it from `litellm.utils` when they call it."""


def install(litellm: ModuleType) -> bool:
    """Make litellm's `get_model_info_helper` remember its answers; False where this
    version of litellm has no such function (or no change count to key it by)."""
    import importlib

    utils = getattr(litellm, "utils", None)
    original = getattr(utils, "get_model_info_helper", None)
    generation = getattr(utils, "get_model_cost_mutation_generation", None)
    if original is None or generation is None or getattr(original, "_ohtui_memo", False):
        return False
    memo = remembering(original, lambda: (id(litellm.model_cost), generation()))
    for name in _HOLDERS:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if getattr(module, "get_model_info_helper", None) is original:
            module.get_model_info_helper = memo  # type: ignore[attr-defined]
    return True


def remembering(
    lookup: Callable[..., dict[str, Any]], version: Callable[[], object]
) -> Callable[..., dict[str, Any]]:
    """`lookup`, its answers (and failures) kept per arguments and `version()`."""
    kept: dict[tuple[Any, ...], tuple[dict[str, Any] | None, BaseException | None]] = {}
    lock = threading.Lock()

    @functools.wraps(lookup)
    def remembered(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            key = (version(), args, tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:  # unhashable arguments: not kept
            return lookup(*args, **kwargs)
        with lock:
            found = kept.get(key)
        if found is None:
            try:
                found = (lookup(*args, **kwargs), None)
            except Exception as exc:  # noqa: BLE001 - kept and raised again below
                found = (None, exc)
            with lock:
                if len(kept) >= MAX_ENTRIES:
                    kept.clear()
                kept[key] = found
        answer, error = found
        if error is not None:
            raise error.with_traceback(None)
        return dict(answer) if isinstance(answer, dict) else answer  # type: ignore[return-value]

    remembered._ohtui_memo = True  # type: ignore[attr-defined]
    return remembered
