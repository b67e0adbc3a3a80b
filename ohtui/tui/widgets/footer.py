"""The key legend at the bottom of a screen, not rebuilt while a full screen covers it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class CoveredFooter(Footer):
    """A Footer that skips rebuilding its keys while another full screen covers its own.

    Textual rebuilds a screen's Footer each time the screen's bindings are refreshed, and a
    screen refreshes them when another is pushed over it. The covered screen is then laid out
    again behind the new one (Textual treats the screen just below the top one as visible),
    and its repaints are forwarded to the top screen: ~50k Python calls of UI work in the
    frames after the conversation picker opens, for keys nobody sees. The keys are rebuilt
    when the screen is shown again (resuming refreshes its bindings). Under a modal screen,
    which leaves it in view, the footer is rebuilt as before.

    Each key bound to the footer's `compact` value is also born with it. Textual's keys start
    compact and take the footer's value once mounted, so every key of every rebuild restyled
    itself twice (about 1 ms each, ~50 ms of UI work for a chat screen's first frames). The
    command palette's key is not bound, and stays as Textual makes it.
    """

    def compose(self) -> ComposeResult:
        """Textual's keys; those bound to the footer's compactness get it before mounting."""
        for widget in super().compose():
            if isinstance(widget, FooterKey) and "compact" in (widget._reactive_connect or {}):
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Rebuild the keys, unless `screen` is covered by a full screen."""
        top = screen.app.screen
        if top is not screen and not top.is_modal:
            return
        super().bindings_changed(screen)
