"""The engine and the cells' Markdown, imported off the UI thread, one thread at a time.

Importing one package from two threads at once can fail in Python (a half-initialised
package raises KeyError or ImportError), and several threads reach for the engine early:
the preload started with the app, the settings loader, the session, the picker. Each calls
`load_engine` first; the first one does the work and the others wait for it.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()


def load_engine() -> None:
    """Import what opening a conversation needs (once; later calls return at once)."""
    with _lock:
        import ohtui.sdk
        import ohtui.settings.schema
        import ohtui.tui.widgets.cell_factory  # noqa: F401
