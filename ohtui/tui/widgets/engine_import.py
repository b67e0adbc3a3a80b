"""The engine and the cells' Markdown, imported off the UI thread, one thread at a time.

Importing one package from two threads at once can fail in Python (a half-initialised
package raises KeyError or ImportError), and several threads reach for the engine early:
the preload started with the app, the settings loader, the session, the picker. Each calls
`load_engine` first; the first one does the work and the others wait for it. It lives with
the widgets, below everything that calls it, because the cells are what it loads last.
"""

from __future__ import annotations

import threading

IMPORT_LOCK = threading.Lock()
"""Held while a thread imports the engine or a module built on it."""


def load_engine() -> None:
    """Import what opening a conversation needs (once; later calls return at once)."""
    with IMPORT_LOCK:
        import ohtui.sdk
        import ohtui.sdk.conversation.impl.remote_conversation  # the chat checks for one
        import ohtui.sdk.security.pattern_analyzer  # the opened conversation rates risk with it
        import ohtui.sdk.security.rule_suggestion  # the approval modal suggests rules
        import ohtui.sdk.security.shell  # the approval rules read commands with it
        import ohtui.settings.schema
        import ohtui.tui.widgets.cell_factory  # noqa: F401
