"""The conversation picker got ready while the app is idle: imported off the UI thread (after
the engine, `load_engine`, one thread at a time), then its styles parsed a little at a time;
then the app makes the picker itself (`Navigation.get_picker_ready`, see ready_picker).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ohtui.tui.widgets.engine_import import IMPORT_LOCK, load_engine

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["load_picker", "preload_picker"]


def load_picker() -> None:
    """Import the conversation picker (after the engine, which it lists conversations with)."""
    load_engine()
    with IMPORT_LOCK:
        import ohtui.sdk.conversation.catalog  # its first rows are read before it shows
        import ohtui.tui.screens.picker  # noqa: F401


async def preload_picker(app: App[Any]) -> None:
    """Get the conversation picker ready to open: its module imported off the UI thread, then
    its styles parsed into the app's stylesheet a little at a time. Run while the app is idle:
    its first opening then does neither, in one step, while the user waits."""
    await asyncio.to_thread(load_picker)
    from ohtui.tui.screens.picker import PickerScreen

    await PickerScreen.preload_styles(app)
