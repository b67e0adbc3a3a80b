"""Filling the local search index in the background, on a thread that yields to a UI.

The store indexes messages for search lazily (indexing each append would double its cost),
so after many conversations the first search would wait for all of them: ~0.6 s of CPU at
60,000 messages. A picker has this done while the user reads the list: in short
transactions (each holds up the engine's appends), on a daemon thread (quitting never waits
for it: SQLite rolls an unfinished transaction back), at a low CPU priority where the system
allows one per thread, so on a busy machine the UI thread gets the CPU first.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from ohtui.sdk.conversation.listing import index_for_search

logger = logging.getLogger(__name__)

BATCH = 200
"""Conversations indexed per transaction."""
NICENESS = 10


def _lower_priority() -> None:
    # Only Linux takes a thread id for setpriority; elsewhere the id could name a process.
    if sys.platform != "linux":
        return
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
    except OSError:
        logger.debug("search indexing keeps the normal priority", exc_info=True)


def index_in_background(
    directory: Path,
    done: Callable[[], object],
    failed: Callable[[str], object],
    stop: threading.Event,
) -> threading.Thread:
    """Index what was saved since the last search under `directory`, a batch at a time,
    until done (then `done()`), `stop` is set, or it fails (`failed(why)`)."""

    def work() -> None:
        _lower_priority()
        try:
            while index_for_search(directory, BATCH):
                if stop.is_set():
                    return
        # Locked or damaged database (TimeoutError, PersistenceError: OSErrors).
        except OSError as exc:
            failed(str(exc))
            return
        done()

    thread = threading.Thread(target=work, name="ohtui-search-index", daemon=True)
    thread.start()
    return thread
