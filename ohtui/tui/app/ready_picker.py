"""The next conversation picker, composed and mounted while the app is idle: /resume then only
lays it out and draws it. Composing and mounting its dozen widgets (a message pump each) was
9-20 ms of the UI thread in the opening, after Enter, measured.

A picker shows what it was made for: the conversation open (it is marked, and never deleted),
the folder it lists and the workspace it filters by; and its widgets keep the styles of the
moment it was made (Textual restyles only the screens on its stack when the theme changes).
One made for another conversation, or before the app's styles changed, is not used: it is
thrown away and a fresh one made, as before. A picker listing an agent server's conversations
is never made ahead (its catalogue belongs to the conversation open at the time).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App

    from ohtui.tui.screens.picker import PickerScreen

__all__ = ["ReadyPicker", "start_hidden"]


def start_hidden(app: App[Any], screen: PickerScreen) -> None:
    """Start `screen`, composing and mounting its widgets, without showing it: as Textual
    starts a screen it pushes for the first time (`App._get_screen` calls `App._register`,
    Textual 8.2). Pushed later, Textual finds it running and shows it at once; popped, it is
    removed as any pushed screen is. tests/tui/test_ready_picker.py fails if that changes."""
    app._register(app, screen)


class ReadyPicker:
    """At most one picker made ahead, with what it was made for (its key, and the app's
    styles then)."""

    def __init__(self, app: App[Any]) -> None:
        self._app = app
        self._screen: PickerScreen | None = None
        self._made_for: Hashable = None

    @property
    def ready(self) -> bool:
        """A picker is made and still in the app (its widgets may still be mounting: pushed
        then, Textual shows it once they are, as it does any screen)."""
        return self._screen is not None and self._screen.is_attached

    def prepare(self, key: Hashable, make: Callable[[], PickerScreen]) -> None:
        """Have a picker made for `key` ready (one made for another key is thrown away)."""
        if self.ready and self._made_for == (key, self._styles()):
            return
        self.discard()
        screen = make()
        start_hidden(self._app, screen)
        self._screen, self._made_for = screen, (key, self._styles())

    def take(self, key: Hashable) -> PickerScreen | None:
        """The picker made for `key`, now the caller's (None: there is none ready)."""
        screen, ready, made_for = self._screen, self.ready, self._made_for
        self._screen = self._made_for = None
        if screen is None:
            return None
        if not ready or made_for != (key, self._styles()):
            self._throw_away(screen)
            return None
        return screen

    def discard(self) -> None:
        """Throw away the picker made ahead, if any."""
        screen, self._screen, self._made_for = self._screen, None, None
        if screen is not None:
            self._throw_away(screen)

    def _styles(self) -> int:
        """Which styles the app has: Textual counts their changes (`_css_update_count`, 8.2)."""
        return self._app._css_update_count

    @staticmethod
    def _throw_away(screen: PickerScreen) -> None:
        if screen.is_attached:
            screen.remove()
