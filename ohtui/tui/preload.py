"""The engine and the cells' Markdown, imported off the UI thread, one thread at a time; the
conversation picker got ready while the app is idle.

Importing one package from two threads at once can fail in Python (a half-initialised
package raises KeyError or ImportError), and several threads reach for the engine early:
the preload started with the app, the settings loader, the session, the picker. Each calls
`load_engine` first; the first one does the work and the others wait for it.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App

_lock = threading.Lock()


def load_engine() -> None:
    """Import what opening a conversation needs (once; later calls return at once)."""
    with _lock:
        import ohtui.sdk
        import ohtui.sdk.conversation.impl.remote_conversation  # the chat checks for one
        import ohtui.sdk.security.pattern_analyzer  # the opened conversation rates risk with it
        import ohtui.sdk.security.rule_suggestion  # the approval modal suggests rules
        import ohtui.sdk.security.shell  # the approval rules read commands with it
        import ohtui.settings.schema
        import ohtui.tui.widgets.cell_factory  # noqa: F401


def load_picker() -> None:
    """Import the conversation picker (after the engine, which it lists conversations with)."""
    load_engine()
    with _lock:
        import ohtui.tui.screens.picker  # noqa: F401


async def preload_picker(app: App[Any]) -> None:
    """Get the conversation picker ready to open: its module imported off the UI thread, then
    its styles parsed into the app's stylesheet a little at a time. Run while the app is idle:
    its first opening then does neither, in one step, while the user waits."""
    await asyncio.to_thread(load_picker)
    from ohtui.tui.screens.picker import PickerScreen

    await PickerScreen.preload_styles(app)
