"""InputPace: an App mixin that knows when the user last typed, so work on other threads can
step aside while a key is being drawn.

A background thread holding the GIL (litellm's import, seconds of CPU) makes every key wait:
the UI thread takes the GIL back many times while it handles and draws one key, waiting up to
the switch interval each time. Such work calls `give_way` between small pieces (for an
import, before each module: `ohtui.paced_import`): it sleeps until KEY_GRACE has
passed since the last key, so the key is drawn with the GIL to itself, then goes on.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import events

if TYPE_CHECKING:
    from textual.app import App

    _Base = App[object]
else:
    _Base = object

KEY_GRACE = 0.08
"""Seconds after a key (or paste, or click) during which background work gives way: a key
is handled and drawn in a few tens of milliseconds with the GIL free."""


class InputPace(_Base):
    """Mix into an App (before App): note the time of each key, paste and click."""

    _last_input: float = float("-inf")

    async def on_event(self, event: events.Event) -> None:
        """Note typed input (on the UI thread), then handle the event as usual."""
        if isinstance(event, events.Key | events.Paste | events.MouseDown):
            self._last_input = time.monotonic()
        await super().on_event(event)

    def give_way(self) -> None:
        """Called on a background thread between pieces of its work: sleep while a key typed
        less than KEY_GRACE ago may still be being drawn (at once otherwise)."""
        while (wait := self._last_input + KEY_GRACE - time.monotonic()) > 0:
            time.sleep(wait)
