"""ConversationView: the conversation as cells, with a bounded number mounted.

Only the newest MAX_MOUNTED cells stay mounted while the user follows the bottom; older
ones are read back (a page of events at a time, off the UI thread) when the user scrolls
to the top. So a conversation of any length costs the same to show and to stream into.
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
    from ohtui.tui.widgets.cells import ActionCell, Cell, FinishCell, StreamingCell, UserCell

WELCOME = """\
Tell the agent what to do in this workspace: it reads, edits and runs things for you.
Actions it wants to take appear here; risky ones wait for your approval.
Type / for commands, @ to mention a file, Ctrl+P for the palette, /help for keys."""
MAX_MOUNTED = 150
"""Cells kept mounted while following the bottom."""


class ConversationView(VerticalScroll, can_focus=False):
    """Shows engine events as cells, newest at the bottom."""

    class NeedOlder(Message):
        """The user scrolled to the top and older events exist before `before`."""

        def __init__(self, before: int) -> None:
            super().__init__()
            self.before = before

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self._actions: dict[str, ActionCell | FinishCell] = {}
        self._orphans: dict[str, Any] = {}
        self._streaming: StreamingCell | None = None
        self._queued: list[UserCell] = []
        self._next_index = 0
        self._oldest_index = 0
        self._has_older = False
        self._loading_older = False
        self.expand_outputs = False
        """Whether tool outputs show expanded (read by the cell factory)."""

    def set_expand_outputs(self, expand: bool) -> None:
        """Show tool outputs expanded (or folded) by default, from now and on screen now."""
        if expand == self.expand_outputs:
            return
        self.expand_outputs = expand
        for cell in self._actions.values():
            cell.expanded = expand

    def on_mount(self) -> None:
        self.anchor()

    def compose(self) -> ComposeResult:
        yield Static(WELCOME, classes="welcome")

    def _hide_welcome(self) -> None:
        for welcome in self.query(".welcome"):
            welcome.remove()

    def reset(self) -> None:
        """Forget everything shown (the children are removed by the caller)."""
        self._actions.clear()
        self._orphans.clear()
        self._streaming = None
        self._queued = []
        self.mount(Static(WELCOME, classes="welcome"))
        self._next_index = self._oldest_index = 0
        self._has_older = self._loading_older = False

    # --- loading ---------------------------------------------------------------------------

    def load_history(
        self, events: list[Any], total: int, has_older: bool, waiting: bool = False
    ) -> None:
        """Show the newest events of a conversation just opened. `waiting`: it was saved
        waiting for approval, so its unanswered actions wait (none of them runs)."""
        from ohtui.tui.widgets.cells import ActionCell

        self._oldest_index = total - len(events)
        self._next_index = total
        self._has_older = has_older
        cells = self._cells_for(events, self._oldest_index)
        for cell in cells:
            if waiting and isinstance(cell, ActionCell) and cell.result is None:
                cell.set_waiting(True)
        if cells:
            self._hide_welcome()
            self.mount_all(cells)
        self.anchor()

    def prepend_older(self, events: list[Any], has_older: bool) -> None:
        """Show a page of older events above the oldest shown, keeping the view still."""
        self._loading_older = False
        start = self._oldest_index - len(events)
        self._oldest_index = start
        self._has_older = has_older
        cells = self._cells_for(events, start)
        if not cells:
            return
        first = self.children[0] if self.children else None
        self.mount_all(cells, before=first)

        def keep_position() -> None:
            added = sum(cell.outer_size.height for cell in cells)
            self.scroll_to(y=self.scroll_y + added, animate=False, immediate=True)

        self.call_after_refresh(keep_position)

    def on_scroll_up(self) -> None:
        self._maybe_load_older()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 1 and old > new:
            self._maybe_load_older()

    def _maybe_load_older(self) -> None:
        if self._has_older and not self._loading_older:
            self._loading_older = True
            self.post_message(self.NeedOlder(self._oldest_index))

    # --- live events -----------------------------------------------------------------------

    def add_event(self, event: Any) -> None:
        """Show a newly recorded event."""
        index = self._next_index
        self._next_index += 1
        cells = self._cells_for([event], index)
        if cells:
            self._hide_welcome()
            self.mount_all(cells)
            self._trim()

    def add_tokens(self, response_id: str, content: str, reasoning: str) -> None:
        """Stream text into the response being written."""
        from ohtui.tui.widgets.cells import StreamingCell

        cell = self._streaming
        if cell is None or cell.response_id != response_id:
            self._hide_welcome()
            cell = StreamingCell(response_id)
            self._streaming = cell
            self.mount(cell, before=self._queued[0] if self._queued else None)
        cell.append(content, reasoning)

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

    def focus_newest(self) -> bool:
        """Focus the newest cell (False when there is none)."""
        from ohtui.tui.widgets.cells import Cell

        newest = next((w for w in reversed(self.children) if isinstance(w, Cell)), None)
        if newest is None:
            return False
        newest.focus()
        return True

    def scroll_by_keys(self, where: str) -> None:
        """Scroll a page "up" or "down", or to the "top" or "bottom", without taking focus."""
        if where == "up":
            self.scroll_page_up(animate=False)
        elif where == "down":
            self.scroll_page_down(animate=False)
        elif where == "top":
            self.scroll_home(animate=False)
            self._maybe_load_older()
        else:
            self.scroll_end(animate=False)
            self.anchor()

    # --- events to cells (the cell factory's host) -------------------------------------------

    def _cells_for(self, events: list[Any], first_index: int) -> list[Cell]:
        from ohtui.tui.widgets.cell_factory import cells_for

        made: list[Cell] = []
        for offset, event in enumerate(events):
            new = cells_for(event, self)
            for cell in new:
                cell.event_index = first_index + offset
            made.extend(new)
        return made

    def claim_queued(self, text: str, event_id: str) -> bool:
        """Mark the queued message `text` as delivered; False if none is shown."""
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

    def track_action(self, cell: ActionCell | FinishCell) -> Any:
        """Remember a new action cell; the result that arrived before it, if any."""
        self._actions[cell.tool_call_id] = cell
        return self._orphans.pop(cell.tool_call_id, None)

    def keep_orphan(self, result: Any) -> None:
        """Keep a result whose action is not on screen (yet)."""
        self._orphans[result.tool_call_id] = result

    def replace_stream(self, response_id: str | None, final: Cell | None) -> bool:
        """Swap the streamed cell of `response_id` for its final cell; False if none streamed."""
        streaming = self._streaming
        # "": streamed from an agent server, which does not say the response (REMOTE_STREAM_ID).
        if streaming is None or streaming.response_id not in (response_id, ""):
            return False
        self._streaming = None
        if final is not None:
            final.event_index = streaming.event_index
            self.mount(final, after=streaming)
        self.remove_children([*streaming.parts, streaming])
        self.call_after_refresh(self._trim)
        return True

    def _trim(self) -> None:
        """Unmount the oldest cells beyond MAX_MOUNTED while the user follows the bottom."""
        excess = len(self.children) - MAX_MOUNTED
        if excess <= 0 or not self.is_vertical_scroll_end:
            return
        from ohtui.tui.widgets.cells import ActionCell, Cell, FinishCell

        doomed = list(self.children[:excess])
        # The oldest cell kept (a response's finished paragraphs are parts, not cells).
        keep = next((w for w in self.children[excess:] if isinstance(w, Cell)), None)
        if keep is not None:
            self._oldest_index = keep.event_index
        self._has_older = True
        for widget in doomed:
            if isinstance(widget, ActionCell | FinishCell):
                self._actions.pop(widget.tool_call_id, None)
        self.remove_children(doomed)
