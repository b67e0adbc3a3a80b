"""TranscriptFind: Ctrl+F (or /find) on the chat screen: search the whole conversation and go
from hit to hit.

The whole active branch is searched, not only the cells mounted: the session reads every
event's text (`session.finding`, newest first, a stretch at a time, off the UI thread) into a
`FindIndex`, and events recorded later are added as they are shown, so the count follows a
run. Going to a hit on a page the view does not hold asks for that page; a hit folded away
(collapsed output, a long message, reasoning) unfolds its cell; the hits in the cells shown
are marked, the current one's line more strongly (`widgets.find_marks`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.geometry import Region

from ohtui.tui.widgets.cells import Cell
from ohtui.tui.widgets.find_bar import FindBar
from ohtui.tui.widgets.find_index import FindIndex, Hit, Matches
from ohtui.tui.widgets.find_marks import FindMarks, spans

if TYPE_CHECKING:
    from textual.timer import Timer

    from ohtui.tui import messages as msg
    from ohtui.tui.screens.chat import ChatScreen
    from ohtui.tui.widgets.conversation_view import ConversationView

TYPING_PAUSE = 0.08
"""Seconds of no typing before the term typed is searched (a fast typist's keys are one)."""
NO_MATCHES = "No matches"
READING = "searching…"


class TranscriptFind:
    """The find bar's search on one chat screen."""

    def __init__(self, screen: ChatScreen) -> None:
        self._screen = screen
        self.bar: FindBar | None = None
        self.index: FindIndex | None = None
        self._generation = 0
        self._read = 0
        self._total = 0
        self.term = ""
        self.hits = Matches([])
        self.current = -1
        """The index of the current hit in `hits` (-1: none chosen yet)."""
        self._note = ""
        """Said after the count once (e.g. that the search wrapped around)."""
        self._pending: Hit | None = None
        """A hit whose page was asked for."""
        self._current_cell: Cell | None = None
        self._typing: Timer | None = None

    @property
    def view(self) -> ConversationView:
        """The conversation view searched."""
        return self._screen.view

    @property
    def is_open(self) -> bool:
        """Whether the bar shows."""
        return self.bar is not None and self.bar.display

    # --- opening and closing ---------------------------------------------------------------

    def open(self, term: str | None = None) -> None:
        """Show the bar (mounted on first use) with `term` in it, and start reading the
        conversation if it has not been read."""
        if self.bar is None:
            self.bar = FindBar(id="find-bar")
            bottom = self._screen.query_one("#bottom")
            bottom.mount(self.bar, before=self._screen.query_one("#composer"))
            self._screen.call_after_refresh(self.open, term)  # once its field is there
            return
        if self.index is None:
            self._start_reading()
        self.bar.open(term)
        if term is not None:
            self.search(term)
        elif self.term:
            self._mark()
            self._show_count()

    def close(self) -> None:
        """The bar was closed: unmark the hits (the index is kept for the next search)."""
        self._pending = None
        self._set_current_cell(None)
        self.view.mark_found(None)

    def forget(self) -> None:
        """The conversation shown changed (another branch, another conversation): read it
        again if the bar is open, else when it opens."""
        self.index = None
        self.hits = Matches([])
        self.current = -1
        self._pending = None
        self._set_current_cell(None)
        if self.is_open:
            self._start_reading()
            self._mark()
            self._show_count()

    def _start_reading(self) -> None:
        self._generation += 1
        self.index = FindIndex()
        self._read = self._total = 0
        self._screen.session.finding.read_all(self._generation)

    # --- what is read ----------------------------------------------------------------------

    def texts_read(self, message: msg.FindTexts) -> None:
        """A stretch of the conversation was read: index it, and count again."""
        index = self.index
        if index is None or message.generation != self._generation:
            return
        for position, found in message.texts:
            index.add(position, found.text, found.call, found.answers)
        self._read, self._total = message.read, message.total
        index.complete = message.done
        if self.term:
            self._recount()

    def event_added(self, event: Any, position: int) -> None:
        """An event was recorded (shown) at `position`: index it, and count again."""
        index = self.index
        if index is None:
            return
        from ohtui.tui.widgets.find_text import searchable

        found = searchable(event)
        if found is None:
            return
        index.add(position, found.text, found.call, found.answers)
        if self.term and index.count_in(self.term.lower(), position):
            self._recount()

    # --- searching -------------------------------------------------------------------------

    def typed(self, term: str) -> None:
        """The term in the bar changed: search for it once the typing pauses."""
        if self._typing is not None:
            self._typing.stop()
        self._typing = self._screen.set_timer(TYPING_PAUSE, lambda: self.search(term))

    def search(self, term: str) -> None:
        """Search for `term` (typed in the bar): count, and go to the hit nearest the view."""
        self.term = term
        self.current = -1
        self._pending = None
        self._set_current_cell(None)
        self._mark()  # before going to a hit, which marks its line as the current one
        self._recount()

    def _recount(self) -> None:
        """Find the hits again (more was read, or the term changed), keeping the current
        one; with none chosen yet, choose the one nearest the view and go there."""
        index = self.index
        kept = self.hits.hit(self.current) if 0 <= self.current < len(self.hits) else None
        self.hits = index.matches(self.term) if index is not None else Matches([])
        if kept is not None:
            number = self.hits.number(kept)
            self.current = -1 if number is None else number
        if self.current < 0 and self.hits:
            self.current = self._nearest()
            self._go(self.hits.hit(self.current))
        self._show_count()

    def _nearest(self) -> int:
        """The last hit at or above the bottom of the view (the first hit if none is)."""
        return self.hits.last_at_or_before(self._bottom_position())

    def _bottom_position(self) -> int:
        """The position of the lowest cell in sight."""
        view = self.view
        visible = view.region
        lowest = -1
        for cell in view.children:
            if isinstance(cell, Cell) and cell.event_index >= 0 and cell.region.overlaps(visible):
                lowest = max(lowest, cell.event_index)
        return lowest if lowest >= 0 else view.window[1] - 1

    def step(self, direction: int) -> None:
        """Go to the next (1) or the previous (-1) hit, wrapping around at either end."""
        bar = self.bar
        if bar is not None and bar.term != self.term:  # typed, and not searched yet
            if self._typing is not None:
                self._typing.stop()
            self.search(bar.term)  # goes to the hit nearest the view: that is the step
            return
        if not self.hits:
            self._show_count()
            return
        if self.current < 0:
            self.current = self._nearest()
        else:
            moved = self.current + direction
            if not 0 <= moved < len(self.hits):
                self._note = "from the top" if direction > 0 else "from the bottom"
            self.current = moved % len(self.hits)
        self._go(self.hits.hit(self.current))
        self._show_count()

    def _show_count(self) -> None:
        bar = self.bar
        if bar is None:
            return
        reading = self.index is not None and not self.index.complete
        note, self._note = self._note, ""
        if not self.term:
            bar.show_count("")
        elif self.hits:
            text = f"{self.current + 1:,} of {len(self.hits):,}" if self.current >= 0 else ""
            if reading:
                share = 100 * self._read // self._total if self._total else 0
                text = f"{text}+ · {READING} {share}%"
            bar.show_count(f"{text} · {note}" if note else text)
        else:
            bar.show_count(READING if reading else NO_MATCHES, missing=not reading)

    # --- going to a hit --------------------------------------------------------------------

    def _go(self, hit: Hit) -> None:
        """Show the cell of `hit`: read its page first if the view does not hold it."""
        oldest, newest = self.view.window
        if oldest <= hit.position < newest and self._cells_at(hit.position):
            self._pending = None
            self._reveal(hit)
            return
        self._pending = hit
        self._screen.session.finding.load_page_at(hit.position)

    def page_shown(self, target: int) -> None:
        """The page asked for is on screen: go to the hit waiting for it, once laid out."""
        hit = self._pending
        if hit is None or hit.position != target:
            return
        self._pending = None
        self.view.call_after_refresh(self._reveal, hit)

    def _cells_at(self, position: int) -> list[Cell]:
        return [c for c in self.view.children if isinstance(c, Cell) and c.event_index == position]

    def _reveal(self, hit: Hit) -> None:
        """Pick the cell and the occurrence in it; unfold the cell if that is folded away."""
        cells = self._cells_at(hit.position)
        if not cells or not self.term:
            return
        nth = self._nth_in_cell(hit)
        cell, local = cells[0], 0
        for candidate in cells:  # the thought before an action is another cell of one event
            count = len(spans(candidate.copy_text(), self.term))
            if nth < count:
                cell, local = candidate, nth
                break
            nth -= count
        if cell.can_expand() and not cell.expanded and len(self._lines_with(cell)) <= local:
            cell.expanded = True
            self.view.call_after_refresh(self._place, cell, local)
            return
        self._place(cell, local)

    def _nth_in_cell(self, hit: Hit) -> int:
        """Which occurrence in its cell `hit` is (the hits of one cell are in a row)."""
        number = self.hits.number(hit)
        return 0 if number is None else number - self.hits.first_in(hit.position)

    def _lines_with(self, cell: Cell) -> list[int]:
        """The cell's lines (as drawn now) that hold the term, once per occurrence."""
        found: list[int] = []
        for y in range(cell.content_size.height):
            found.extend([y] * len(spans(cell.render_line(y).text, self.term)))
        return found

    def _place(self, cell: Cell, local: int) -> None:
        """Mark `cell`'s `local`-th occurrence as current and scroll its line into the
        middle of the view."""
        if not cell.is_attached:
            return
        lines = self._lines_with(cell)
        line = lines[min(local, len(lines) - 1)] if lines else 0
        self._set_current_cell(cell)
        self._mark(cell, line)
        view = self.view
        top = cell.virtual_region.y + cell.styles.gutter.top + line
        view.scroll_to_region(Region(0, top, 1, 1), center=True, animate=False, immediate=True)

    def _set_current_cell(self, cell: Cell | None) -> None:
        before, self._current_cell = self._current_cell, cell
        if before is not None and before is not cell:
            before.remove_class("-find-current")
        if cell is not None:
            cell.add_class("-find-current")

    def _mark(self, cell: Cell | None = None, line: int = -1) -> None:
        self.view.mark_found(FindMarks(self.term, cell, line) if self.term else None)
