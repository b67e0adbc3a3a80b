"""Keeping the garbage collector's pauses out of streaming."""

from __future__ import annotations

import gc


def settle_heap(reclaim: bool = False) -> None:
    """Move every object alive now out of the garbage collector's view.

    The app keeps hundreds of thousands of long-lived objects (modules, litellm's tables,
    the opened history, the UI). Each full collection walks all of them, and streaming
    creates enough new objects to trigger one every few seconds: ~200 ms pauses, a visible
    stutter. Frozen objects are skipped. But a frozen object in a reference cycle (every
    widget is in several) is never collected: freezing again at every model call kept every
    cell ever trimmed from the view, ~30 KB per event. So it is done twice a session: when
    the conversation opens and at its first streamed token; `reclaim` (a conversation was
    left for another) first collects what the sessions before froze and no longer use.
    """
    if reclaim:
        gc.unfreeze()
        gc.collect()
    gc.freeze()
