"""Fitting a dialog of auto height to the screen: one part of it scrolls, the rest (its
buttons, its key legend) always stays on screen, however small the terminal."""

from __future__ import annotations

from textual.widget import Widget

MIN_ROWS = 3
"""Rows the scrolling part keeps on the smallest screens."""


def fit_to_screen(dialog: Widget, scrolling: Widget, screen_rows: int) -> None:
    """Give `scrolling` (a child of `dialog`) the rows the other children leave."""
    others = dialog.styles.gutter.height + sum(
        child.outer_size.height + child.styles.margin.top + child.styles.margin.bottom
        for child in dialog.children
        if child is not scrolling and child.display
    )
    scrolling.styles.max_height = max(MIN_ROWS, screen_rows - others)


def fits(last: Widget, screen_rows: int) -> bool:
    """Whether the dialog's last line (`last`) is on screen."""
    return last.region.bottom <= screen_rows
