"""Keep notifications (toasts) off the errors on screen.

Textual stacks toasts in the bottom right corner. Whenever a screen's layout changes, each
screen's toast rack is placed where its toasts cover no error: at the bottom (Textual's
place), else at the top (below the status line), else the toasts are hidden until the error
goes or the toasts expire. An error outranks a notification: it is what the user must read.
"""

from __future__ import annotations

from weakref import WeakSet

from textual.app import App
from textual.css.query import NoMatches
from textual.css.scalar import Scalar, ScalarOffset, Unit
from textual.errors import NoWidget
from textual.geometry import Region
from textual.screen import Screen
from textual.widgets._toast import Toast, ToastRack

# A failed command's output is not ohtui's error: a long one would keep every toast away.
ERROR_DISPLAYS = ", ".join(
    (
        ".cell.error",  # the chat's error cells
        ".cell.notice.-error",
        "StatusBar",  # says a failed run's error in words
        "#error",  # a dialog's or the settings screen's inline error line
        "#check-result.-failed",  # the settings screen's failed model test
        "TextPromptScreen #message",  # why an answer was refused (rename, /title)
        "#problem-scroll",  # the config problem dialog
        "NoKeyringScreen #problem",
    )
)
"""Selectors of every widget that shows an error; toasts never cover them."""

BOTTOM = ""
"""Textual's place: the bottom right corner."""
TOP = "-top"
"""Rack class: the toasts sit in the top right corner."""
HIDDEN = "-covered"
"""Rack class: no corner is free of errors, so the toasts wait out of sight (moved off the
screen, not made invisible: they stay laid out, so they can be placed again)."""


def watch_screens(app: App[object]) -> None:
    """Place the toasts of every screen `app` shows, now and whenever its layout changes."""
    watched: WeakSet[Screen[object]] = WeakSet()

    def watch(screen: Screen[object], tries: int = 10) -> None:
        if screen in watched:
            return
        if not screen.is_running:  # a screen being pushed starts a moment later
            if tries:
                app.call_after_refresh(watch, screen, tries - 1)
            return
        watched.add(screen)
        screen.screen_layout_refresh_signal.subscribe(screen, place_toasts)
        place_toasts(screen)

    app.screen_change_signal.subscribe(app, watch)
    watch(app.screen)


def error_regions(screen: Screen[object]) -> list[Region]:
    """The parts of the screen where an error shows."""
    regions = []
    for widget in screen.query(ERROR_DISPLAYS):
        try:
            geometry = screen.find_widget(widget)
        except NoWidget:
            continue  # not displayed
        region = geometry.region.intersection(geometry.clip)
        if region and widget.visible:
            regions.append(region)
    return regions


def place_toasts(screen: Screen[object]) -> None:
    """Put `screen`'s toasts in a corner where they cover no error, or hide them."""
    try:
        rack = screen.get_child_by_type(ToastRack)
    except NoMatches:
        return
    if not rack.display:
        return
    toasts: list[Region] = []
    for toast in rack.query(Toast):
        try:
            toasts.append(screen.find_widget(toast).region)
        except NoWidget:
            continue  # not laid out yet: the next layout places it
    if not toasts:
        return
    stack = Region.from_union(toasts)
    if stack.x >= screen.size.width:  # out of sight (HIDDEN): measure where it would show
        toasts = [toast.translate((-screen.size.width, 0)) for toast in toasts]
    toasts = [toast.translate((0, -stack.y)) for toast in toasts]  # relative to the stack
    errors = error_regions(screen)
    # Textual docks the rack above one free line; at the top, the first toast's margin
    # keeps the status line free.
    bottom = screen.size.height - 1 - stack.height
    for name, top in ((BOTTOM, bottom), (TOP, 1)):
        placed = [toast.translate((0, top)) for toast in toasts]
        if not any(toast.overlaps(error) for toast in placed for error in errors):
            _set_place(rack, name)
            return
    _set_place(rack, HIDDEN)


def _set_place(rack: ToastRack, name: str) -> None:
    """Move the rack (inline styles: they win over Textual's own CSS, wherever the app's
    stylesheet is)."""
    current = TOP if rack.has_class(TOP) else HIDDEN if rack.has_class(HIDDEN) else BOTTOM
    if current == name:
        return  # already there: no restyle, so no new layout
    rack.set_class(name == TOP, TOP)
    rack.set_class(name == HIDDEN, HIDDEN)
    styles = rack.styles
    if name == TOP:
        styles.dock, styles.align_vertical, styles.margin = "top", "top", (0, 0, 0, 0)
    else:
        styles.dock, styles.align_vertical, styles.margin = "bottom", "bottom", (0, 0, 1, 0)
    styles.offset = _OFF_SCREEN if name == HIDDEN else ScalarOffset.from_offset((0, 0))


_OFF_SCREEN = ScalarOffset(Scalar(100, Unit.VIEW_WIDTH, Unit.VIEW_WIDTH), Scalar.from_number(0))
