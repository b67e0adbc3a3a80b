"""The conversation picker: saved conversations newest first, full-text search, a preview of
the highlighted one; resume, delete, rename, and this workspace / all workspaces.

Every printable key types into the search box, wherever the focus is: commands take keys that
never type text (Ctrl+D, Ctrl+R, Ctrl+W), so typing a search can never delete or rename.

Every database call runs on a worker thread and comes back as a message, so no key press
waits for SQLite. The engine is imported on those threads too: it costs ~0.2 s to import.
Rows come a page at a time (keyset pages from the store, formatted on the worker); the UI
applies each page in one step, and reaching the end of the list reads the next. A newer
listing or search makes every older one's result stale: it is dropped, never shown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ohtui.tui.display import short_path
from ohtui.tui.engine_import import load_engine
from ohtui.tui.picker_rows import display_title, preview_content, preview_heading, row_prompt
from ohtui.tui.screens.confirm import ConfirmScreen
from ohtui.tui.screens.text_prompt import TextPromptScreen
from ohtui.tui.style_preload import preload_styles
from ohtui.tui.widgets.marked import MarkedOptionList

if TYPE_CHECKING:
    from ohtui.sdk.conversation.base import BaseConversation
    from ohtui.sdk.conversation.catalog import ConversationCatalog
    from ohtui.sdk.conversation.saved import SavedConversations
    from ohtui.sdk.conversation.summary import ConversationSummary, PageCursor, SummaryPage

Scope = Literal["workspace", "all"]

SEARCH_DELAY = 0.15
"""Seconds of typing pause before a search runs: one query per burst of keys, not per key."""
PREVIEW_DELAY = 0.05
"""Seconds the highlight must rest before its preview is read (holding ↓ reads none); the
highlight a listing places is read at once."""
PREVIEW_EVENTS = 24
"""Events read for a preview at a time: the last ones, then earlier ones as it is scrolled up."""
PAGE_ROWS = 50
"""Rows read at a time: a few screens' worth."""
SEARCH_PAGE_ROWS = 20
"""Search results read at a time (each with a snippet, which costs a lookup)."""
LOCAL_SEARCHES = "all messages"
"""What the local catalogue's search looks through (its `searches`), known before the engine
is imported: the search box shows it in the picker's first frame."""
_PREVIEW_CACHE = 64
_WIDGET_TYPES = (Horizontal, Static, Input, Vertical, MarkedOptionList, VerticalScroll)
"""The widget classes `compose` mounts: their DEFAULT_CSS is preloaded with the picker's."""


@dataclass
class _Preview:
    """What the preview shows of one conversation: its events from `start` on."""

    body: Content
    start: int
    cost: float | None

    def content(self) -> Content:
        """The cost, a line saying how many earlier events there are, then the events."""
        lines: list[Content] = []
        if self.cost is not None:
            lines.append(Content.assemble(("cost      ", "$foreground-muted"), f"${self.cost:.2f}"))
        if self.start:
            earlier = f"↑ {self.start} earlier event{'' if self.start == 1 else 's'}: scroll up"
            lines.append(Content.styled(earlier, "$foreground-muted"))
        if lines:
            lines.append(Content(""))
        return Content("\n").join([*lines, self.body])


def _plain(content: object) -> str | None:
    return content.plain if isinstance(content, Content) else None


def _show(widget: Static, content: Content | str, *, same_size: bool = False) -> None:
    """Show `content` in `widget` unless it shows that already (a repaint and, unless
    `same_size`, a layout of the whole screen, for nothing)."""
    shown = widget.content
    if isinstance(shown, Content) and isinstance(content, Content):
        if shown.plain == content.plain and shown.spans == content.spans:
            return  # (Content's == compares the text only)
    elif type(shown) is type(content) and shown == content:
        return
    widget.update(content, layout=not same_size)


class PickerScreen(Screen[str | None]):
    """Choose a saved conversation to resume."""

    CSS_PATH = "picker.tcss"
    AUTO_FOCUS = "#conversations"  # focused as it mounts: the search box is never focused first
    # Priority: the search box would otherwise take Ctrl+D and Ctrl+W to edit its text.
    BINDINGS = [
        Binding("ctrl+d", "delete", "Delete", priority=True),
        Binding("delete", "delete", "Delete", show=False),  # on the list; in the box it edits
        Binding("ctrl+r,f2", "rename", "Rename"),
        Binding("ctrl+w", "toggle_scope", "Workspaces", priority=True),
        Binding("down", "focus_list", "Results", show=False),
        Binding("escape", "back", "Back"),
    ]

    scope: var[Scope] = var[Scope]("workspace", init=False)

    @dataclass
    class Deleted(Message):
        """A saved conversation was deleted from the picker."""

        conversation_id: str
        title: str

    @dataclass
    class Renamed(Message):
        """A saved conversation was renamed from the picker (its open copy may need it too)."""

        conversation_id: str
        title: str

    @dataclass
    class _Listed(Message, bubble=False):
        """A page of rows of a listing or search, read and formatted on a worker."""

        generation: int
        query: str
        rows: list[ConversationSummary]
        prompts: list[Content]
        next: PageCursor | None
        partial: bool
        """A search made before every message was indexed: more may match."""
        first: bool
        """The listing's first page (else the next page after the rows shown)."""
        empty_text: str = ""

    @dataclass
    class _Counted(Message, bubble=False):
        """How many rows all pages of a listing or search hold."""

        generation: int
        count: int

    @dataclass
    class _Indexed(Message, bubble=False):
        """Every saved message is in the search index now."""

    @dataclass
    class _PreviewLoaded(Message, bubble=False):
        """A page of one conversation's events, read and formatted on a worker."""

        conversation_id: str
        content: Content
        start: int
        """How many earlier events there are (0: the preview reaches the beginning)."""
        cost: float | None
        earlier: bool
        """A page before the one shown (else the last events)."""

    @dataclass
    class _Failed(Message, bubble=False):
        """Database work failed; the text says why and what to do."""

        text: str
        generation: int | None = None

    def __init__(
        self,
        conversations_dir: Path,
        workspace: Path,
        *,
        current_id: str | None = None,
        open_conversation: Callable[[], BaseConversation | None] = lambda: None,
        now: Callable[[], float] = time.time,
        catalog: ConversationCatalog | None = None,
    ) -> None:
        """`open_conversation` gives the conversation open now (renamed through itself,
        never deleted; None: none is). `catalog`: where the conversations are listed from
        (by default the local folder; an agent server's when the agent runs there)."""
        super().__init__()
        self._conversations_dir = conversations_dir
        self._given_catalog = catalog
        self._searches = catalog.searches if catalog is not None else LOCAL_SEARCHES
        self._open_conversation = open_conversation
        self._saved_conversations: SavedConversations | None = None
        self._workspace = workspace
        self._current_id = current_id
        self._now = now
        self._home = Path.home()
        self._rows: dict[str, ConversationSummary] = {}
        self._next: PageCursor | None = None
        self._more_asked = False
        self._partial = False
        self._indexed = False
        self._index_started = False
        self._stop_indexing = threading.Event()
        self._count: int | None = None
        self._generation = 0
        self._shown_generation = -1
        self._shown_query: str | None = None
        self._asked_query: str | None = None
        self._keep_id: str | None = None
        self._keep_index: int | None = None
        self._search_timer: Timer | None = None
        self._preview_timer: Timer | None = None
        self._previews: dict[str, _Preview] = {}
        self._preview_id: str | None = None
        self._preview_asked = False
        self._preview_at_once = False
        """The next highlight's preview is read at once (one the listing placed)."""
        self._shown_before = False

    @classmethod
    async def preload_styles(cls, app: App[object]) -> bool:
        """Parse the picker's styles into the app's stylesheet a little at a time (while the
        app is idle), so its first push parses none; True when there was anything to do."""
        return await preload_styles(app, cls, _WIDGET_TYPES)

    def compose(self) -> ComposeResult:
        """Header, search box, the list beside the preview, and the key legend."""
        with Horizontal(id="header"):
            yield Static("Conversations", id="title")
            yield Static(id="scope", markup=False)
        yield Input(
            placeholder=f"Type to search {self._searches}",
            id="search",
            select_on_focus=False,
        )
        with Horizontal(id="body"):
            with Vertical(id="list-pane"):
                yield Static("Loading conversations…", id="empty", markup=False)
                yield MarkedOptionList(id="conversations", markup=False)
            with Vertical(id="preview", classes="-loading"):
                yield Static(id="preview-head")
                with VerticalScroll(id="preview-body", can_focus=False):
                    yield Static(id="preview-events")
        yield Static(id="legend")

    def on_mount(self) -> None:
        """Fill in what is known before the rows: the list is read once the screen shows."""
        self._show_scope()
        self._update_legend()
        self.watch(self.option_list, "scroll_y", self._load_more_if_near_end, init=False)
        preview = self.query_one("#preview-body", VerticalScroll)
        self.watch(preview, "scroll_y", self._preview_scrolled, init=False)

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        """Shown for the first time, its widgets have the styles they mounted with: restyling
        them all again would be a quarter of the opening frame's work, for nothing (this runs
        before Screen's own handler, which restyles when asked to and draws the frame).

        The list is read from here, not on mount: the reading thread starts once the opening
        frame is drawn, so it no longer holds the GIL in the middle of it (~6 ms of the frame's
        ~20) and its rows no longer come in just behind it, in the same stall."""
        if not self._shown_before:
            self._shown_before = True
            event.refresh_styles = False
            self._reload()

    def on_resize(self, event: events.Resize) -> None:
        """A screen is told it was resized when it is first laid out, at the size it was just
        laid out at: Screen's own handler would lay it out again, and the chat screen below it,
        a fifth of the opening frame's work for nothing. A real resize (a new size, or
        breakpoint classes to set) is left to Screen."""
        app = self.app
        breakpoints = (
            self.HORIZONTAL_BREAKPOINTS
            or self.VERTICAL_BREAKPOINTS
            or app.HORIZONTAL_BREAKPOINTS
            or app.VERTICAL_BREAKPOINTS
        )
        if event.size == self.outer_size and not breakpoints:
            event.stop()
            event.prevent_default()

    def on_unmount(self) -> None:
        """Stop filling the search index (between two of its transactions)."""
        self._stop_indexing.set()

    # --- state -----------------------------------------------------------------------------

    @property
    def _catalog(self) -> ConversationCatalog:
        """Where the conversations are listed from; the local one is made on first use, on
        a worker (its module is the engine's)."""
        if self._given_catalog is None:
            from ohtui.sdk.conversation.catalog import LocalCatalog

            self._given_catalog = LocalCatalog(self._conversations_dir)
        return self._given_catalog

    @property
    def _saved(self) -> SavedConversations:
        """Renames and deletes, made on first use (a row is listed: the engine is loaded)."""
        if self._saved_conversations is None:
            from ohtui.sdk.conversation.saved import SavedConversations

            self._saved_conversations = SavedConversations(
                self._conversations_dir, self._open_conversation, self._catalog
            )
        return self._saved_conversations

    @property
    def option_list(self) -> OptionList:
        """The list of conversations."""
        return self.query_one("#conversations", OptionList)

    @property
    def search_input(self) -> Input:
        """The search box."""
        return self.query_one("#search", Input)

    @property
    def rows(self) -> list[ConversationSummary]:
        """The conversations listed, in order."""
        return list(self._rows.values())

    @property
    def highlighted(self) -> ConversationSummary | None:
        """The conversation under the cursor, if any."""
        option = self.option_list.highlighted_option
        return self._rows.get(option.id or "") if option is not None else None

    @property
    def pending(self) -> bool:
        """A listing or search was asked for and its rows are not shown yet."""
        return self._search_timer is not None or self._shown_generation != self._generation

    def _query(self) -> str:
        return self.search_input.value.strip()

    # --- loading in the background ---------------------------------------------------------------

    def _in_background(
        self, job: Callable[[], Message | None], group: str, generation: int | None = None
    ) -> None:
        """Run database work on a thread; post the message it returns (if any), or _Failed."""

        def work() -> None:
            load_engine()  # one thread at a time: see ohtui.tui.preload
            try:
                message = job()
            # Locked or damaged database (TimeoutError, PersistenceError: OSErrors), a
            # conversation deleted meanwhile (LookupError), an unreadable event (ValueError).
            except (OSError, LookupError, ValueError) as exc:
                message = self._Failed(str(exc), generation)
            if message is not None:
                self.post_message(message)

        self.run_worker(work, group=group, thread=True, exit_on_error=False)

    def _stale(self, generation: int) -> bool:
        """A newer listing or search was asked for since `generation` (safe on any thread)."""
        return generation != self._generation

    def _workspace_filter(self, scope: Scope) -> str | None:
        # The engine stores the resolved working directory: compare like with like.
        return str(self._workspace.expanduser().resolve()) if scope == "workspace" else None

    def _reload(self, keep_loaded: bool = False) -> None:
        """List (or search) again in the current scope, keeping the highlighted conversation;
        `keep_loaded`: as many rows as are loaded now (after a change, not a new query)."""
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        highlighted = self.highlighted
        if highlighted is not None:
            self._keep_id = highlighted.id
        self._generation += 1
        generation, query, scope = self._generation, self._query(), self.scope
        limit = SEARCH_PAGE_ROWS if query else PAGE_ROWS
        if keep_loaded:
            limit = max(limit, len(self._rows))
        self._asked_query = query
        self._more_asked = False
        self._in_background(
            lambda: self._read_first_page(generation, query, scope, limit), "rows", generation
        )

    def _read_page(
        self, query: str, scope: Scope, after: PageCursor | None, limit: int
    ) -> tuple[SummaryPage, bool]:
        """On a worker: a page of rows, and whether it is a search of a part of the index."""
        partial = bool(query) and not self._indexed
        page = self._catalog.page(
            workspace=self._workspace_filter(scope),
            query=query,
            after=after,
            limit=limit,
            keep=self._current_id,
            index_first=not partial,
        )
        return page, partial

    def _prompts(self, page: SummaryPage) -> list[Content]:
        """On a worker: the rows of a page as the list shows them."""
        now = self._now()
        return [
            row_prompt(
                row,
                now=now,
                home=self._home,
                current=row.id == self._current_id,
                snippet=page.snippets.get(row.id),
            )
            for row in page.rows
        ]

    def _any_saved(self) -> bool:
        """On a worker: whether any conversation is listed, in any workspace."""
        page = self._catalog.page(
            workspace=None, query="", after=None, limit=1, keep=None, index_first=False
        )
        return bool(page.rows)

    def _read_first_page(self, generation: int, query: str, scope: Scope, limit: int) -> None:
        """On a worker: post the first page of rows, then how many there are in all."""
        if self._stale(generation):
            return  # typed on: a newer search is coming
        page, partial = self._read_page(query, scope, None, limit)
        if self._stale(generation):
            return
        workspace = self._workspace_filter(scope)
        empty_text = ""
        if not page.rows:
            where = " in this workspace" if workspace else ""
            if query:
                empty_text = f"No conversation{where} mentions '{query}'."
                if partial:
                    empty_text += " Still indexing: more may match in a moment."
            elif workspace and self._any_saved():
                empty_text = "None in this workspace — press ctrl+w to see all."
            else:
                empty_text = "No saved conversations yet."
        prompts = self._prompts(page)
        self.post_message(
            self._Listed(
                generation, query, page.rows, prompts, page.next, partial, True, empty_text
            )
        )
        if page.next is not None and not self._stale(generation):
            count = self._catalog.count(workspace=workspace, query=query, keep=self._current_id)
            self.post_message(self._Counted(generation, count))

    def _read_next_page(self, generation: int, after: PageCursor) -> _Listed | None:
        """On a worker: the page after the rows shown."""
        if self._stale(generation):
            return None
        query = self._shown_query or ""
        page, partial = self._read_page(
            query, self.scope, after, SEARCH_PAGE_ROWS if query else PAGE_ROWS
        )
        if self._stale(generation):
            return None
        return self._Listed(
            generation, query, page.rows, self._prompts(page), page.next, partial, False
        )

    @on(_Indexed)
    def _index_ready(self) -> None:
        self._indexed = True
        if self._partial and self._shown_generation == self._generation:
            self._reload(keep_loaded=True)  # the search again, over every message

    def _load_more_if_near_end(self) -> None:
        """Read the next page once the list is scrolled (or moved) within a screen of its end."""
        if self._next is None or self._more_asked or self.pending:
            return
        option_list = self.option_list
        height = option_list.scrollable_content_region.height
        bottom = option_list.scroll_y + height
        highlighted = option_list.highlighted
        near_end = bottom >= option_list.virtual_size.height - height or (
            highlighted is not None and highlighted >= option_list.option_count - 5
        )
        if near_end:
            self._more_asked = True
            generation, after = self._generation, self._next
            self._in_background(lambda: self._read_next_page(generation, after), "more")

    @on(_Listed)
    def _listed(self, message: _Listed) -> None:
        if message.generation != self._generation:
            return  # a newer query is on its way
        if message.first:
            self._show_first_page(message)
        else:
            self._show_next_page(message)
        self._next = message.next
        self._partial = message.partial
        self._more_asked = False
        self._show_scope()
        self.refresh_bindings()
        self._update_legend()
        self.call_after_refresh(self._load_more_if_near_end)  # a page shorter than the view

    def _options(self, message: _Listed) -> list[Option | None]:
        """A page's options, a thin rule after each but the last row of the listing."""
        options: list[Option | None] = []
        for row, prompt in zip(message.rows, message.prompts, strict=True):
            options += [Option(prompt, id=row.id), None]
        if options and message.next is None:
            options.pop()
        return options

    def _show_first_page(self, message: _Listed) -> None:
        if not self._index_started:  # the database reads: fill the search index meanwhile
            self._index_started = True
            self._catalog.index(
                lambda: self.post_message(self._Indexed()),
                lambda why: self.post_message(self._Failed(why)),
                self._stop_indexing,
            )
        preview = self.query_one("#preview")
        if preview.has_class("-loading"):
            # The preview's parts are first drawn in the frame after the rows, not with them:
            # two lighter frames rather than one. The class is on the pane, not the screen:
            # restyling every widget of the screen cost a third of applying the first page.
            self.call_after_refresh(preview.remove_class, "-loading")
        self._shown_generation = message.generation
        self._previews.clear()  # fresh rows, fresh previews: a conversation may have grown
        self._rows = {row.id: row for row in message.rows}
        self._shown_query = message.query
        self._count = None if message.next is not None else len(message.rows)
        option_list = self.option_list
        option_list.set_options(self._options(message))
        empty = self.query_one("#empty", Static)
        _show(empty, message.empty_text)
        empty.display = not message.rows
        ids = list(self._rows)
        keep_index, self._keep_index = self._keep_index, None
        # The listing puts the highlight there, not a key held down: no pause to wait out.
        self._preview_at_once = bool(ids)
        if ids:
            if self._keep_id in ids:
                option_list.highlighted = ids.index(self._keep_id)
            else:
                option_list.highlighted = min(keep_index or 0, len(ids) - 1)
        else:
            self._show_preview(None)

    def _show_next_page(self, message: _Listed) -> None:
        rows = [row for row in message.rows if row.id not in self._rows]
        if len(rows) != len(message.rows):  # changed meanwhile: the list is read afresh
            self._reload(keep_loaded=True)
            return
        self._rows.update((row.id, row) for row in rows)
        self.option_list.add_options(self._options(message))
        if message.next is None:
            self._count = len(self._rows)

    @on(_Counted)
    def _counted(self, message: _Counted) -> None:
        if message.generation == self._generation:
            self._count = message.count
            self._show_scope()

    @on(_Failed)
    def _failed(self, message: _Failed) -> None:
        if message.generation is not None and message.generation != self._generation:
            return  # about a listing nobody waits for any more
        self.notify(message.text, title="Saved conversations", severity="error", markup=False)
        if message.generation is not None:
            self._shown_generation = message.generation
            self._rows = {}
            self._next = None
            self._count = 0
            self.option_list.clear_options()
            self._show_preview(None)
            empty = self.query_one("#empty", Static)
            empty.update("The saved conversations cannot be read right now.")
            empty.display = True
            self._show_scope()
            self._update_legend()

    # --- preview --------------------------------------------------------------------------------

    @on(OptionList.OptionHighlighted, "#conversations")
    def _highlight_moved(self, event: OptionList.OptionHighlighted) -> None:
        self._show_preview(self._rows.get(event.option.id or ""))
        self.refresh_bindings()
        self._update_legend()
        self._load_more_if_near_end()

    def _show_preview(self, summary: ConversationSummary | None) -> None:
        """Show what the summary says at once; read the last exchanges after a short pause."""
        head = self.query_one("#preview-head", Static)
        body = self.query_one("#preview-events", Static)
        if self._preview_timer is not None:
            self._preview_timer.stop()
            self._preview_timer = None
        self.set_class(summary is None, "-no-preview")
        self._preview_id = None if summary is None else summary.id
        self._preview_asked = False
        if summary is None:
            head.update("")
            body.update("")
            return
        head.update(
            preview_heading(
                summary, now=self._now(), home=self._home, current=summary.id == self._current_id
            )
        )
        cached = self._previews.get(summary.id)
        body.update(cached.content() if cached is not None else "")
        if cached is not None:
            self._scroll_preview_end()
            return
        conversation_id = summary.id

        def read() -> None:
            self._in_background(lambda: self._read_preview(conversation_id), "preview")

        if self._preview_at_once:
            self._preview_at_once = False
            read()
        else:
            self._preview_timer = self.set_timer(PREVIEW_DELAY, read)

    def _read_preview(self, conversation_id: str, before: int | None = None) -> _PreviewLoaded:
        """On a worker: the last events of a conversation (or those `before` an index)."""
        page = self._catalog.events(conversation_id, PREVIEW_EVENTS, before)
        cost = self._catalog.cost(conversation_id) if before is None else None
        return self._PreviewLoaded(
            conversation_id, preview_content(page.events), page.start, cost, before is not None
        )

    @on(_PreviewLoaded)
    def _preview_loaded(self, message: _PreviewLoaded) -> None:
        cached = self._previews.pop(message.conversation_id, None)
        if message.earlier:
            if cached is None:
                return  # dropped from the cache meanwhile: the next highlight reads it again
            preview = _Preview(
                Content("\n").join([message.content, Content(""), cached.body]),
                message.start,
                cached.cost,
            )
        else:
            preview = _Preview(message.content, message.start, message.cost)
        if len(self._previews) >= _PREVIEW_CACHE:
            self._previews.pop(next(iter(self._previews)))
        self._previews[message.conversation_id] = preview
        if self._preview_id != message.conversation_id:
            return
        self._preview_asked = False
        scroller = self.query_one("#preview-body", VerticalScroll)
        below = scroller.virtual_size.height - scroller.scroll_y
        self.query_one("#preview-events", Static).update(preview.content())
        if message.earlier:
            # Keep the lines read in place: the earlier events appear above them.
            def keep_place() -> None:
                scroller.scroll_to(
                    y=max(0, scroller.virtual_size.height - below), animate=False, immediate=True
                )
                self._preview_scrolled(scroller.scroll_y)

            self.call_after_refresh(keep_place)
        else:
            self._scroll_preview_end()

    def _scroll_preview_end(self) -> None:
        scroller = self.query_one("#preview-body", VerticalScroll)

        def to_end() -> None:
            scroller.scroll_end(animate=False, immediate=True)
            self._preview_scrolled(scroller.scroll_y)  # it may not fill the pane yet

        self.call_after_refresh(to_end)

    def _preview_scrolled(self, scroll_y: float) -> None:
        """Read the events before those shown once the preview is scrolled to its top (or
        while they all fit in it)."""
        cached = self._previews.get(self._preview_id or "")
        if scroll_y > 0 or cached is None or cached.start == 0 or self._preview_asked:
            return
        self._preview_asked = True
        conversation_id, before = self._preview_id or "", cached.start
        self._in_background(lambda: self._read_preview(conversation_id, before), "preview")

    # --- header and legend ---------------------------------------------------------------------

    def _show_scope(self) -> None:
        if self.scope == "all":
            where = "all workspaces"
        else:
            where = f"this workspace: {short_path(str(self._workspace), self._home)}"
        if self._shown_generation == self._generation:
            count = self._count
            shown = f"{count:,}" if count is not None else f"{len(self._rows):,}+"
            if self._shown_query:
                where += f" · {shown} match{'' if count == 1 else 'es'}"
                if self._partial:
                    where += " so far, indexing…"
            else:
                where += f" · {shown} conversation{'' if count == 1 else 's'}"
        # One line that fills what the title leaves: a new text never changes the layout.
        _show(self.query_one("#scope", Static), where, same_size=True)

    def _update_legend(self) -> None:
        # Keys that do nothing right now are dimmed rather than hidden, so the legend stays put.
        row = self.highlighted is not None
        entries = (
            ("↑↓", "move", len(self._rows) > 1),
            ("enter", "resume", row),
            ("type", "to search", True),
            ("ctrl+d", "delete", row),
            ("ctrl+r", "rename", row),
            ("ctrl+w", "this workspace" if self.scope == "all" else "all workspaces", True),
            ("esc", "clear search" if self._query() else "back", True),
        )
        legend = Content(" · ").join(
            Content.assemble(
                (key, "bold $text-accent" if enabled else "$foreground-disabled"),
                " ",
                (text, "" if enabled else "$foreground-disabled"),
            )
            for key, text, enabled in entries
        )
        widget = self.query_one("#legend", Static)
        # Keys dimmed or lit again wrap as before: only new words can change its height.
        _show(widget, legend, same_size=legend.plain == _plain(widget.content))

    def watch_scope(self) -> None:
        """Say which conversations are listed and list them."""
        self._reload()
        self._show_scope()
        self._update_legend()

    # --- keys -----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Dim delete and rename when no conversation is highlighted."""
        if action in ("delete", "rename"):
            return True if self.highlighted is not None else None
        return True

    def on_key(self, event: events.Key) -> None:
        """A printable key typed anywhere but the search box goes on in the search box."""
        search = self.search_input
        character = event.character
        if search.has_focus or character is None or not event.is_printable:
            return
        event.stop()
        event.prevent_default()
        search.focus()
        search.insert_text_at_cursor(character)

    @on(Input.Changed, "#search")
    def _query_changed(self) -> None:
        self._update_legend()
        if self._search_timer is None and self._query() == self._asked_query:
            return  # e.g. Esc cleared the box and listed again already
        if self._search_timer is not None:
            self._search_timer.stop()
        self._search_timer = self.set_timer(SEARCH_DELAY, self._reload)

    @on(Input.Submitted, "#search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not self.pending and len(self._rows) == 1 and self._next is None:
            self.dismiss(next(iter(self._rows)))
            return
        self.action_focus_list()

    @on(OptionList.OptionSelected, "#conversations")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.dismiss(event.option.id)

    def action_focus_list(self) -> None:
        """Move from the search box to the results."""
        self.option_list.focus()

    def action_toggle_scope(self) -> None:
        """Switch between this workspace's conversations and all of them."""
        self.scope = "all" if self.scope == "workspace" else "workspace"

    def action_back(self) -> None:
        """Clear the search if there is one; otherwise leave the picker."""
        search = self.search_input
        if search.value:
            search.value = ""
            self.action_focus_list()
            self._reload()
            self._update_legend()
            return
        self.dismiss(None)

    def action_delete(self) -> None:
        """Delete the highlighted conversation after asking (never the open one)."""
        summary = self.highlighted
        if summary is None:
            return
        if summary.id == self._current_id or self._saved.is_open(summary.id):
            from ohtui.sdk.conversation.saved import DELETE_OPEN

            self.notify(
                DELETE_OPEN,
                title="Not deleted",
                severity="warning",
                markup=False,
            )
            return
        if self._refuse_held(summary, "Not deleted"):
            return
        title = display_title(summary)

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._in_background(lambda: self._delete(summary.id, title), "change")

        self.app.push_screen(
            ConfirmScreen(
                f"Delete '{title}'?",
                "Its events and files are removed. This cannot be undone.",
                confirm_label="Delete",
                danger=True,
            ),
            confirmed,
        )

    def _delete(self, conversation_id: str, title: str) -> Deleted:
        self._saved.delete(conversation_id)
        return self.Deleted(conversation_id, title)

    @on(Deleted)
    def _deleted(self, message: Deleted) -> None:
        if message.conversation_id in self._rows:
            # The row that moves up into the deleted one's place gets the highlight.
            self._keep_index = list(self._rows).index(message.conversation_id)
        self.notify(f"Deleted '{message.title}'.", markup=False)
        self._reload(keep_loaded=True)

    def action_rename(self) -> None:
        """Give the highlighted conversation a new title."""
        summary = self.highlighted
        if summary is None or self._refuse_held(summary, "Not renamed"):
            return

        def renamed(title: str | None) -> None:
            if title is not None and title != summary.title:
                self._in_background(lambda: self._rename(summary.id, title), "change")

        self.app.push_screen(
            TextPromptScreen(
                "Rename conversation",
                summary.title or "",
                placeholder=display_title(summary),
                empty_message="A title cannot be empty: type one, or press esc to keep it.",
            ),
            renamed,
        )

    def _rename(self, conversation_id: str, title: str) -> Renamed:
        self._saved.rename(conversation_id, title)
        return self.Renamed(conversation_id, title.strip())

    def _refuse_held(self, summary: ConversationSummary, title: str) -> bool:
        """Say so when another ohtui has the conversation open (it alone may change it)."""
        if summary.held_by is None or summary.id == self._current_id:
            return False
        self.notify(
            f"Another ohtui has this conversation open ({summary.held_by.describe()}). "
            "Close it there first.",
            title=title,
            severity="warning",
            markup=False,
        )
        return True

    @on(Renamed)
    def _renamed(self, message: Renamed) -> None:
        self.notify(f"Renamed to '{message.title}'.", markup=False)
        self._reload(keep_loaded=True)
