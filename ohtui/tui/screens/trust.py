"""Trust a file that would run programs: what it runs, in full, before anything runs."""

from __future__ import annotations

from collections.abc import Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ohtui.tui.screens.fit import fit_to_screen, fits

UNREAD_LEGEND = "↓ PgDn read to the end to be able to trust · esc cancel"
FIT_TRIES = 5
"""Layouts `_fit` waits for the dialog to fit on the screen."""
LEGEND = "↑↓ scroll · ←→ choose a button · enter press it · esc cancel"


class TrustScreen(ModalScreen[bool]):
    """Ask whether to trust what a file runs: the question, what changed since it was
    trusted, everything it runs (scrolls), and a note. Trust gives True; Esc or Cancel False.

    Cancel has the focus first, and no letter answers: a stray Enter or typed text never
    trusts anything. Trust stays disabled until all of what it runs has been on screen.
    """

    CSS_PATH = "trust.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("left", "app.focus_previous", show=False),
        Binding("right", "app.focus_next", show=False),
        Binding("up", "scroll(-1)", show=False),
        Binding("down", "scroll(1)", show=False),
        Binding("pageup", "scroll(-10)", show=False),
        Binding("pagedown", "scroll(10)", show=False),
    ]

    def __init__(
        self, question: str, review: str, *, changed: Sequence[str] = (), note: str = ""
    ) -> None:
        super().__init__()
        self._question = question
        self._review = review
        self._changed = list(changed)
        self._note = note

    def compose(self) -> ComposeResult:
        """The question, what changed, the review, the note, two buttons and a legend."""
        with Vertical(id="dialog"):
            yield Static(self._question, id="question", markup=False)
            with VerticalScroll(id="review"):
                if self._changed:
                    lines = "\n".join(f"  • {line}" for line in self._changed)
                    changed = f"Changed since you trusted it:\n{lines}"
                    yield Static(changed, id="changed", markup=False)
                yield Static(self._review, markup=False)
            if self._note:
                yield Static(self._note, id="note", markup=False)
            with Horizontal(id="buttons"):
                yield Button("Trust", id="confirm", variant="error", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
            yield Static(UNREAD_LEGEND, id="legend", markup=False)

    def on_mount(self) -> None:
        """Start on Cancel."""
        self.query_one("#cancel", Button).focus()
        self.query_one("#confirm", Button).disabled = True
        self.watch(self.query_one("#review"), "scroll_y", self._seen, init=False)
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        """Fit again to the new size."""
        self.call_after_refresh(self._fit)

    def _fit(self, tries: int = FIT_TRIES) -> None:
        """Let what it runs take the rows the rest leaves (it scrolls beyond them), looked
        at again after the layout, a few times, until the dialog fits."""
        fit_to_screen(self.query_one("#dialog"), self.query_one("#review"), self.size.height)
        self.call_after_refresh(self._fitted, tries)

    def _fitted(self, tries: int) -> None:
        """After the layout: fit again if the dialog still runs past the screen."""
        if not self._fits() and tries > 0:
            self._fit(tries - 1)
        else:
            self._seen()

    def _fits(self) -> bool:
        """Whether the whole dialog is on screen (its last line, the legend, included)."""
        return fits(self.query_one("#legend"), self.size.height)

    def _seen(self) -> None:
        """Enable Trust once the end of what it runs has been shown: the dialog fits on the
        screen (before it is fitted, what it runs may reach past the screen unscrolled) and
        what it runs is scrolled to its end."""
        review = self.query_one("#review", VerticalScroll)
        confirm = self.query_one("#confirm", Button)
        # Measured from where the review is on screen now, not from max_scroll_y, which
        # lags one layout behind a new max-height (and reads 0 before it catches up).
        content = review.virtual_size.height
        shown = review.scroll_y + review.scrollable_content_region.height
        if confirm.disabled and self._fits() and content > 0 and shown >= content:
            confirm.disabled = False
            self.query_one("#legend", Static).update(LEGEND)

    def action_scroll(self, lines: int) -> None:
        """Scroll what it runs, whichever button has the focus."""
        self.query_one("#review", VerticalScroll).scroll_relative(y=lines, animate=False)

    @on(Button.Pressed, "#confirm")
    def _confirmed(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#cancel")
    def _cancelled(self) -> None:
        self.dismiss(False)

    def action_cancel(self) -> None:
        """Close without trusting."""
        self.dismiss(False)
