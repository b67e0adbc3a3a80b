"""ConversationView: the conversation as cells, with a bounded number mounted.

At most MAX_MOUNTED cells are mounted: a window onto the conversation's events. While the
user follows the bottom, new cells come in below and the oldest leave above. Scrolling to
the top reads the page of events before the window back from the store (off the UI thread)
and the newest cells leave below; scrolling back down reads the pages after it again, until
the window reaches the newest event and follows it once more. Nothing else keeps events or
cells. So a conversation of any length costs the same to show, to scroll and to stream into.
This module imports no engine code: it is on screen in the first frame. Events become cells
in `cell_factory`, imported once the engine has loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

if TYPE_CHECKING:
    from ohtui.tui.widgets.cells import (
        ActionCell,
        Cell,
        FinishCell,
        ResultView,
        StreamingCell,
        UserCell,
    )
    from ohtui.tui.widgets.find_marks import FindMarks

WELCOME = """\
Tell the agent what to do in this workspace: it reads, edits and runs things for you.
Actions it wants to take appear here; risky ones wait for your approval.
Type / for commands, @ to mention a file, Ctrl+P for the palette, /help for keys."""
MAX_MOUNTED = 150
"""The most widgets (cells) ever mounted."""
TRIM_TO = 110
"""A window grown past MAX_MOUNTED is cut back to this many at once: one relayout of the
view every ~40 events, not one per event."""
MAX_ORPHANS = 2 * MAX_MOUNTED
"""Results kept for actions not on screen (they come back when their page is read again)."""


class ConversationView(VerticalScroll, can_focus=False):
    """Shows engine events as cells, newest at the bottom."""

    class NeedOlder(Message):
        """The user scrolled to the top and older events exist before `before`."""

        def __init__(self, view: ConversationView, before: int) -> None:
            super().__init__()
            self.view = view
            self.before = before

        @property
        def control(self) -> ConversationView:
            """The ConversationView older events are wanted from."""
            return self.view

    class NeedNewer(Message):
        """The user scrolled to the bottom of a window that stops short of the newest
        event: the events from `after` on are wanted."""

        def __init__(self, view: ConversationView, after: int) -> None:
            super().__init__()
            self.view = view
            self.after = after

        @property
        def control(self) -> ConversationView:
            """The ConversationView newer events are wanted from."""
            return self.view

    class NeedPage(Message):
        """The window is to show a page at one end of the conversation instead: the first
        events (`newest` False) or the newest (`newest` True)."""

        def __init__(self, view: ConversationView, newest: bool) -> None:
            super().__init__()
            self.view = view
            self.newest = newest

        @property
        def control(self) -> ConversationView:
            """The ConversationView a page is wanted from."""
            return self.view

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._actions: dict[str, ActionCell | FinishCell] = {}
        self._orphans: dict[str, ResultView] = {}
        self._streaming: StreamingCell | None = None
        self._queued: list[UserCell] = []
        self._next_index = 0
        """How many events the conversation has (the index of the next one)."""
        self._oldest_index = 0
        """The index of the oldest event the window shows."""
        self._newest_index = 0
        """One past the newest event the window shows (== _next_index: it follows along)."""
        self._has_older = False
        self._loading_older = False
        self._loading_newer = False
        self._catching_up = False
        """A jump to the newest events reads on until the window reaches the newest."""
        self._paging = False
        """Cells are being made for a page read back, not for events as they happen."""
        self._welcome: Static | None = None
        self._branches: dict[int, int] = {}
        """Position → branches leaving the event there, for the pages read so far."""
        self.expand_outputs = False
        """Whether tool outputs show expanded (read by the cell factory)."""
        self.find_marks: FindMarks | None = None
        """The hits of a transcript search, marked in every cell (read by the cells)."""

    def set_expand_outputs(self, expand: bool) -> None:
        """Show tool outputs expanded (or folded) by default, from now and on screen now."""
        if expand == self.expand_outputs:
            return
        self.expand_outputs = expand
        for cell in self._actions.values():
            cell.expanded = expand

    def on_mount(self) -> None:
        self.anchor()

    def mark_found(self, marks: FindMarks | None) -> None:
        """Mark the hits of a transcript search in the cells (None: no search)."""
        from ohtui.tui.widgets.cells import Cell

        before, self.find_marks = self.find_marks, marks
        if before == marks:
            return
        for cell in self.children:
            if isinstance(cell, Cell):
                cell.refresh()

    def compose(self) -> ComposeResult:
        self._welcome = Static(WELCOME, classes="welcome")
        yield self._welcome

    def _hide_welcome(self) -> None:
        # Called for every event: a query would walk every mounted cell each time.
        welcome, self._welcome = self._welcome, None
        if welcome is not None:
            welcome.remove()

    def reset(self) -> None:
        """Forget everything shown (the children are removed by the caller)."""
        self._actions.clear()
        self._orphans.clear()
        self._streaming = None
        self._queued = []
        self._welcome = Static(WELCOME, classes="welcome")
        self.mount(self._welcome)
        self._next_index = self._oldest_index = self._newest_index = 0
        self._has_older = self._loading_older = self._loading_newer = False
        self._catching_up = False
        self._branches = {}

    @property
    def detached(self) -> bool:
        """Whether the window stops short of the newest event (the user is reading back)."""
        return self._newest_index < self._next_index

    @property
    def next_index(self) -> int:
        """How many events the conversation has, as far as the view knows."""
        return self._next_index

    @property
    def window(self) -> tuple[int, int]:
        """The indexes of the events the window shows: (oldest, one past the newest)."""
        return self._oldest_index, self._newest_index

    # --- loading ---------------------------------------------------------------------------

    def load_history(
        self,
        events: list[Any],
        total: int,
        has_older: bool,
        waiting: bool = False,
        branches: dict[int, int] | None = None,
    ) -> None:
        """Show the newest events of a conversation just opened. `waiting`: it was saved
        waiting for approval, so its unanswered actions wait (none of them runs);
        `branches`: where other branches leave these events (position → how many)."""
        from ohtui.tui.widgets.cells import ActionCell

        self._branches.update(branches or {})
        self._oldest_index = total - len(events)
        self._next_index = self._newest_index = total
        self._has_older = has_older
        cells = self._cells_for(events, self._oldest_index, paging=True)
        for cell in cells:
            if waiting and isinstance(cell, ActionCell) and cell.result is None:
                cell.set_waiting(True)
        if cells:
            self._hide_welcome()
            self.mount_all(cells, before=self._queued[0] if self._queued else None)
        self.anchor()

    def show_page(
        self,
        events: list[Any],
        start: int,
        has_older: bool,
        newest: bool = False,
        branches: dict[int, int] | None = None,
        home: bool = True,
    ) -> None:
        """Show the page of events from index `start` instead of the window (a jump to the
        first or, `newest`, the newest events); following the bottom if it is the newest.
        Events recorded while the newest page was read are read after it, the view staying
        at the bottom (a message sent while reading back shows, and what answers it).
        `home` False: the caller scrolls to a cell of the page (a search's hit); scrolling to
        its top first would read the page before it."""
        self._loading_older = self._loading_newer = False
        self._catching_up = newest
        self._branches.update(branches or {})
        self._drop([w for w in self.children if not (w in self._queued or w is self._welcome)])
        self._streaming = None
        self._orphans.clear()
        self._oldest_index = start
        self._newest_index = start + len(events)
        self._next_index = max(self._next_index, self._newest_index)
        self._has_older = has_older
        cells = self._cells_for(events, start, paging=True)
        if cells:
            self._hide_welcome()
            self.mount_all(cells, before=self._queued[0] if self._queued else None)
        if not self.detached or newest:
            self.anchor()
            self._catch_up()
        else:
            self.anchor(False)
            if home:
                self.call_after_refresh(lambda: self.scroll_home(animate=False, immediate=True))

    def _catch_up(self) -> None:
        """After a jump to the newest events: read what came since, until there is none."""
        if not self.detached:
            self._catching_up = False
        elif self._catching_up:
            self._maybe_load_newer()

    async def prepend_older(
        self, events: list[Any], has_older: bool, branches: dict[int, int] | None = None
    ) -> None:
        """Show a page of older events above the oldest shown, keeping the view still; the
        newest cells leave the window below if it grows past MAX_MOUNTED."""
        self._loading_older = False
        self._branches.update(branches or {})
        start = self._oldest_index - len(events)
        if start < 0:
            return  # the window moved meanwhile (a jump): this page is not next to it
        self._oldest_index = start
        self._has_older = has_older
        cells = self._cells_for(events, start, paging=True)
        if not cells:
            return
        first = self.children[0] if self.children else None
        await self.mount_all(cells, before=first)
        self._trim_bottom()

        def keep_position(tries: int = 5) -> None:
            added = sum(cell.outer_size.height for cell in cells)
            if not added and tries:  # not laid out yet (a removal below came first)
                self.call_after_refresh(keep_position, tries - 1)
                return
            self.scroll_to(y=self.scroll_y + added, animate=False, immediate=True)

        self.call_after_refresh(keep_position)

    async def append_newer(
        self, events: list[Any], after: int, branches: dict[int, int] | None = None
    ) -> None:
        """Show a page of newer events below the window (read back as the user scrolls
        down), keeping the view still; the oldest cells leave the window above. Once the
        window reaches the newest event, it follows along again from the bottom."""
        self._loading_newer = False
        if after != self._newest_index:
            return  # the window moved meanwhile: this page is not next to it
        self._branches.update(branches or {})
        self._newest_index = after + len(events)
        self._next_index = max(self._next_index, self._newest_index)
        cells = self._cells_for(events, after, paging=True)
        kept_y = self.scroll_y
        if cells:
            await self.mount_all(cells, before=self._queued[0] if self._queued else None)
        removed = self._trim_top()
        if self._catching_up:
            self._catch_up()  # the view stays anchored at the bottom
            return
        if not self.detached:
            self.anchor()  # re-anchored: the view follows once the user is at the bottom
        self.call_after_refresh(
            lambda: self.scroll_to(y=kept_y - removed, animate=False, immediate=True)
        )

    def on_scroll_up(self) -> None:
        self._maybe_load_older()

    def on_scroll_down(self) -> None:
        self._maybe_load_newer()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 1 and old > new:
            self._maybe_load_older()
        elif new >= self.max_scroll_y - 1 and new > old:
            self._maybe_load_newer()

    def _maybe_load_older(self) -> None:
        if self._has_older and not self._loading_older:
            self._loading_older = True
            self.post_message(self.NeedOlder(self, self._oldest_index))

    def _maybe_load_newer(self) -> None:
        if self.detached and not self._loading_newer:
            self._loading_newer = True
            self.post_message(self.NeedNewer(self, self._newest_index))

    def jump(self, newest: bool) -> None:
        """Show the first events of the conversation, or (`newest`) its newest ones."""
        if newest and not self.detached:
            self.scroll_end(animate=False)
            self.anchor()
        elif not newest and not self._has_older:
            self.scroll_home(animate=False)
        else:
            self.post_message(self.NeedPage(self, newest))

    # --- live events -----------------------------------------------------------------------

    def add_event(self, event: Any, index: int | None = None) -> None:
        """Show a newly recorded event, the one at `index` (None: the one after the last)."""
        if index is None:
            index = self._next_index
        self._next_index = max(self._next_index, index + 1)
        if index != self._newest_index:
            # Before it: a page read from the store showed it already. After it: the user
            # reads further back; it is read from the store on the way down.
            return
        self._newest_index = index + 1
        cells = self._cells_for([event], index)
        if cells:
            self._hide_welcome()
            self.mount_all(cells, before=self._queued[0] if self._queued else None)
            self._trim()

    def add_tokens(self, response_id: str, content: str, reasoning: str) -> None:
        """Stream text into the response being written."""
        from ohtui.tui.widgets.cells import StreamingCell

        if self.detached:
            return  # shown once it is an event, when the user scrolls down to it
        cell = self._streaming
        if cell is None or cell.response_id != response_id:
            self._hide_welcome()
            cell = StreamingCell(response_id)
            self._streaming = cell
            self.mount(cell, before=self._queued[0] if self._queued else None)
        cell.append(content, reasoning)
        self._trim()  # a long answer's paragraphs are widgets too

    def show_queued(self, texts: list[str]) -> None:
        """Show messages waiting to be delivered, at the bottom."""
        from ohtui.tui.widgets.cells import UserCell

        for cell in self._queued[len(texts) :]:
            cell.remove()
        self._queued = self._queued[: len(texts)]
        for cell, text in zip(self._queued, texts, strict=False):
            cell.text = text
            cell.refresh()
        for text in texts[len(self._queued) :]:
            cell = UserCell(text, queued=True)
            self._queued.append(cell)
            self.mount(cell)

    def mark_waiting(self, action_ids: set[str]) -> None:
        """Show which actions wait for approval."""
        from ohtui.tui.widgets.cells import ActionCell

        for cell in self._actions.values():
            if isinstance(cell, ActionCell):
                cell.set_waiting(cell.action_event.id in action_ids and cell.result is None)

    def show_error(self, title: str, detail: str) -> None:
        """Show an error that is not an event (e.g. the conversation failed to open)."""
        from ohtui.tui.widgets.cells import ErrorCell

        self.mount(ErrorCell(title, detail))

    # --- keys -------------------------------------------------------------------------------

    def on_cell_past_newest(self, message: Cell.PastNewest) -> None:
        """Down on the newest cell shown: newer cells load below it, or the focus moves on."""
        message.stop()
        if self.detached:
            self.scroll_by_keys("bottom")
        else:
            self.screen.focus_next()

    def focus_newest(self) -> bool:
        """Focus the newest cell (False when there is none)."""
        from ohtui.tui.widgets.cells import Cell

        newest = next((w for w in reversed(self.children) if isinstance(w, Cell)), None)
        if newest is None:
            return False
        newest.focus()
        return True

    def scroll_by_keys(self, where: str) -> None:
        """Scroll a page "up" or "down", or to the "top" or "bottom" of the window (reading
        the next page in), or jump to the "first" or the "newest" events; focus stays."""
        if where == "up":
            if self.scroll_y <= 1:
                self._maybe_load_older()
            self.scroll_page_up(animate=False)
        elif where == "down":
            if self.is_vertical_scroll_end:
                self._maybe_load_newer()
            self.scroll_page_down(animate=False)
        elif where == "top":
            self.scroll_home(animate=False)
            self._maybe_load_older()
        elif where == "first":
            self.jump(newest=False)
        elif where == "newest":
            self.jump(newest=True)
        else:
            self.scroll_end(animate=False)
            if self.detached:
                self._maybe_load_newer()
            else:
                self.anchor()

    # --- events to cells (the cell factory's host) -------------------------------------------

    def _cells_for(self, events: list[Any], first_index: int, paging: bool = False) -> list[Cell]:
        """Cells for events from index `first_index` on; `paging`: read back from the store
        (a queued message or a streamed response is never theirs)."""
        from ohtui.tui.widgets.cell_factory import cells_for
        from ohtui.tui.widgets.cells import BranchCell

        made: list[Cell] = []
        self._paging = paging
        try:
            for offset, event in enumerate(events):
                new = cells_for(event, self)
                branches = self._branches.get(first_index + offset)
                if branches:
                    new.append(BranchCell(branches))
                for cell in new:
                    cell.event_index = first_index + offset
                made.extend(new)
        finally:
            self._paging = False
        return made

    def claim_queued(self, text: str, event_id: str) -> bool:
        """Mark the queued message `text` as delivered; False if none is shown."""
        if self._paging:
            return False
        for queued in self._queued:
            if queued.text == text:
                self._queued.remove(queued)
                queued.queued = False
                queued.event_id = event_id
                return True
        return False

    def action_cell(self, tool_call_id: str) -> ActionCell | FinishCell | None:
        """The cell on screen for a tool call."""
        return self._actions.get(tool_call_id)

    def track_action(self, cell: ActionCell | FinishCell) -> ResultView | None:
        """Remember a new action cell; the result that arrived before it, if any."""
        self._actions[cell.tool_call_id] = cell
        return self._orphans.pop(cell.tool_call_id, None)

    def keep_orphan(self, tool_call_id: str, result: ResultView) -> None:
        """Keep the result of a call whose action is not on screen (yet); the oldest are let
        go (reading their pages again brings them back)."""
        self._orphans[tool_call_id] = result
        while len(self._orphans) > MAX_ORPHANS:
            del self._orphans[next(iter(self._orphans))]

    def replace_stream(self, response_id: str | None, final: Cell | None) -> bool:
        """Swap the streamed cell of `response_id` for its final cell; False if none streamed."""
        streaming = self._streaming
        # "": streamed from an agent server, which does not say the response (REMOTE_STREAM_ID).
        if self._paging or streaming is None or streaming.response_id not in (response_id, ""):
            return False
        self._streaming = None
        if final is not None:
            final.event_index = streaming.event_index
            self.mount(final, after=streaming)
        streaming.remove()
        self.call_after_refresh(self._trim)
        return True

    def _trim(self) -> None:
        """Keep at most MAX_MOUNTED widgets: the oldest leave while the user follows the
        bottom; else the newest do (read back when the user scrolls down to them)."""
        if len(self.children) <= MAX_MOUNTED:
            return
        if self.is_vertical_scroll_end:
            self._trim_top()
        else:
            self._trim_bottom()

    def _trim_top(self) -> int:
        """Unmount the oldest cells down to TRIM_TO, whole events at a time; their height."""
        from ohtui.tui.widgets.cells import Cell

        excess = len(self.children) - TRIM_TO
        if len(self.children) <= MAX_MOUNTED or excess <= 0:
            return 0
        children = list(self.children)
        cut = _event_boundary(children, excess, Cell)
        doomed = children[:cut]
        if not doomed:
            return 0
        keep = next((w for w in children[cut:] if isinstance(w, Cell) and w.event_index >= 0), None)
        self._oldest_index = keep.event_index if keep is not None else self._newest_index
        self._has_older = self._oldest_index > 0
        height = sum(widget.outer_size.height for widget in doomed)
        self._drop(doomed, keep_results=True)
        return height

    def _trim_bottom(self) -> None:
        """Unmount the newest cells down to TRIM_TO, whole events at a time (the response
        being written too: it shows as an event once the user scrolls down to it)."""
        from ohtui.tui.widgets.cells import Cell

        if len(self.children) <= MAX_MOUNTED:
            return
        children = [w for w in self.children if w not in self._queued]
        cut = _event_boundary(children, TRIM_TO - len(self._queued), Cell)
        doomed = children[cut:]
        indexes = [w.event_index for w in doomed if isinstance(w, Cell) and w.event_index >= 0]
        if indexes:
            self._newest_index = min(indexes)
        if self._streaming in doomed:
            self._streaming = None
        self._drop(doomed)

    def _drop(self, widgets: list[Any], keep_results: bool = False) -> None:
        """Unmount `widgets`, forgetting their actions (`keep_results`: an action's result,
        whose event stays in the window, is kept for when its cell is made again)."""
        from ohtui.tui.widgets.cells import ActionCell, FinishCell

        for widget in widgets:
            if isinstance(widget, ActionCell | FinishCell):
                self._actions.pop(widget.tool_call_id, None)
            if keep_results and isinstance(widget, ActionCell) and widget.result is not None:
                self.keep_orphan(widget.tool_call_id, widget.result)
        if widgets:
            self.remove_children(widgets)


def _event_boundary(widgets: list[Any], at: int, cell_type: type[Cell]) -> int:
    """`at`, moved later until it does not split the cells of one event."""
    at = max(0, min(at, len(widgets)))

    def index(widget: Any) -> int:
        return int(widget.event_index) if isinstance(widget, cell_type) else -1

    while 0 < at < len(widgets) and index(widgets[at]) >= 0:
        if index(widgets[at]) != index(widgets[at - 1]):
            break
        at += 1
    return at
