"""The picker's scope line and key legend, and how they (and its other texts) are updated:
only when what they show changes, since each update repaints and may lay out the screen."""

from __future__ import annotations

from collections.abc import Iterable

from textual.content import Content
from textual.widgets import Static


def show(widget: Static, content: Content | str, *, same_size: bool = False) -> None:
    """Show `content` in `widget` unless it shows that already (a repaint and, unless
    `same_size`, a layout of the whole screen, for nothing)."""
    shown = widget.content
    if isinstance(shown, Content) and isinstance(content, Content):
        if shown.plain == content.plain and shown.spans == content.spans:
            return  # (Content's == compares the text only)
    elif type(shown) is type(content) and shown == content:
        return
    widget.update(content, layout=not same_size)


def scope_line(
    where: str, *, count: int | None, rows: int, query: str | None, partial: bool
) -> str:
    """`where` the rows are from, with how many there are (`count`; None: not counted yet,
    at least `rows`) and whether they are matches of a search (`query`)."""
    shown = f"{count:,}" if count is not None else f"{rows:,}+"
    if query:
        where += f" · {shown} match{'' if count == 1 else 'es'}"
        if partial:
            where += " so far, indexing…"
        return where
    return where + f" · {shown} conversation{'' if count == 1 else 's'}"


def show_legend(widget: Static, entries: Iterable[tuple[str, str, bool]]) -> None:
    """Show the (key, what it does, whether it does anything now) entries in `widget`; keys
    that do nothing right now are dimmed rather than hidden, so the legend stays put."""
    legend = Content(" · ").join(
        Content.assemble(
            (key, "bold $text-accent" if enabled else "$foreground-disabled"),
            " ",
            (text, "" if enabled else "$foreground-disabled"),
        )
        for key, text, enabled in entries
    )
    shown = widget.content
    # Keys dimmed or lit again wrap as before: only new words can change its height.
    same_size = isinstance(shown, Content) and legend.plain == shown.plain
    show(widget, legend, same_size=same_size)
