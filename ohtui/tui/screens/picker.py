"""The conversation picker: saved conversations newest first, full-text search, a preview of
the highlighted one; resume, delete, rename, and this workspace / all workspaces.

Every printable key types into the search box, wherever the focus is: commands take keys that
never type text (Ctrl+D, Ctrl+R, Ctrl+W), so typing a search can never delete or rename.

Every database call runs on a worker thread and comes back as a message, so no key press
waits for SQLite (opened from the app, the first page is read on a thread before the screen
shows, so its opening frame has it: `read_ahead`). The engine is imported on those threads
too: it costs ~0.2 s to import.
Rows come a page at a time (keyset pages from the store, formatted on the worker); the UI
applies each page in one step, and reaching the end of the list reads the next. A newer
listing or search makes every older one's result stale: it is dropped, never shown.

The conversations come from a catalogue (`ohtui.sdk.conversation.catalog`: the local folder's
or an agent server's). Its parts: reading the rows (picker_listing.py), the preview pane
(picker_preview.py), delete and rename (picker_changes.py), the scope line and key legend
(picker_header.py), forks and branches (picker_family.py); here, the screen that ties them
together: its keys and the messages its parts post, which is why it stays one module.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ohtui.tui.display import short_path
from ohtui.tui.picker_rows import display_title, preview_heading
from ohtui.tui.screens.picker_changes import ConversationChanges, Deleted, Renamed
from ohtui.tui.screens.picker_family import BRANCHES_KEY, BranchesScreen, OpenBranch
from ohtui.tui.screens.picker_header import scope_line, show, show_legend
from ohtui.tui.screens.picker_listing import Counted, Listed, RowsReader
from ohtui.tui.screens.picker_preview import PreviewLoaded, PreviewPane
from ohtui.tui.style_preload import preload_styles
from ohtui.tui.widgets.engine_import import load_engine
from ohtui.tui.widgets.marked import MarkedOptionList

if TYPE_CHECKING:
    from ohtui.sdk.conversation.base import BaseConversation
    from ohtui.sdk.conversation.branch_tips import BranchTip
    from ohtui.sdk.conversation.catalog import ConversationCatalog
    from ohtui.sdk.conversation.saved import SavedConversations
    from ohtui.sdk.conversation.summary import ConversationSummary, PageCursor

Scope = Literal["workspace", "all"]

SEARCH_DELAY = 0.15
"""Seconds of typing pause before a search runs: one query per burst of keys, not per key."""
PAGE_ROWS = 50
"""Rows read at a time: a few screens' worth."""
SEARCH_PAGE_ROWS = 20
"""Search results read at a time (each with a snippet, which costs a lookup)."""
READ_AHEAD_WAIT = 0.05
"""Seconds the picker waits for its first rows before it shows without them (see read_ahead)."""
FRAMES_HELD_LIMIT = 1.0
"""Seconds at most that the app draws nothing while the picker is on its way (see read_ahead)."""
LOCAL_SEARCHES = "all messages"
"""What the local catalogue's search looks through (its `searches`), known before the engine
is imported: the search box shows it in the picker's first frame."""
_WIDGET_TYPES = (Horizontal, Static, Input, Vertical, MarkedOptionList, VerticalScroll)
"""The widget classes `compose` mounts: their DEFAULT_CSS is preloaded with the picker's."""


class PickerScreen(Screen[str | OpenBranch | None]):
    """Choose a saved conversation to resume (its id), or one of its branches (OpenBranch)."""

    CSS_PATH = "picker.tcss"
    AUTO_FOCUS = "#conversations"  # focused as it mounts: the search box is never focused first
    # Priority: the search box would otherwise take Ctrl+D and Ctrl+W to edit its text.
    BINDINGS = [
        Binding("ctrl+d", "delete", "Delete", priority=True),
        Binding("delete", "delete", "Delete", show=False),  # on the list; in the box it edits
        Binding("ctrl+r,f2", "rename", "Rename"),
        Binding("ctrl+w", "toggle_scope", "Workspaces", priority=True),
        Binding(BRANCHES_KEY, "branches", "Branches", priority=True),
        Binding("down", "focus_list", "Results", show=False),
        Binding("escape", "back", "Back"),
    ]

    scope: var[Scope] = var[Scope]("workspace", init=False)

    @dataclass
    class _Indexed(Message, bubble=False):
        """Every saved message is in the search index now."""

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
        self._reader = RowsReader(
            lambda: self._catalog,
            self.post_message,
            self._stale,
            lambda: self._indexed,
            now,
            self._home,
            current_id,
        )
        self._preview = PreviewPane(
            self,
            self._in_background,
            lambda: self._catalog,
            self._rows_get,
            self._reader.title_of,
            now,
        )
        self._changes = ConversationChanges(
            self, self._in_background, lambda: self._saved, current_id
        )
        self._shown_before = False
        self._legend_has_branches = False
        self._read_ahead: list[Message] = []
        """The first page of rows (and its count) read before the screen showed."""
        self._frames_held = ExitStack()
        """The app's frames, held from /resume until the screen shows (see read_ahead)."""

    def read_ahead(self, app: App[Any], show: Callable[[], object]) -> None:
        """Read the first page of rows on a thread, then `show` this screen (on the UI
        thread): its opening frame has them, with no "Loading" frame before them. The rows
        are read in a few milliseconds once the engine is loaded; after READ_AHEAD_WAIT s
        without them (or from an agent server, or before the engine loaded) it shows at once
        and reads them as it always did."""
        if self._given_catalog is not None or "ohtui.sdk.conversation.catalog" not in sys.modules:
            show()
            return
        self._generation += 1
        generation, workspace = self._generation, self._workspace_filter(self.scope)
        posted: list[Message] = []
        reader = replace(self._reader, post=posted.append)
        shown = False
        # Nothing is drawn meanwhile: the screen below would be, only to be covered (the
        # command's own changes to it, a frame's work before the picker's).
        held = ExitStack()
        held.enter_context(app.batch_update())

        def show_once(read: list[Message]) -> None:  # on the UI thread: the first call shows
            nonlocal shown
            if shown or not app.is_running:
                return
            shown = True
            self._read_ahead = read
            # Held until the screen shows with its rows (on_screen_resume): no frame of it
            # without them, nor of its widgets half mounted.
            self._frames_held = held
            app.set_timer(FRAMES_HELD_LIMIT, held.close)
            show()

        def read() -> None:
            try:
                reader.first_page(generation, "", workspace, PAGE_ROWS)
            except Exception:  # noqa: BLE001 -- the screen reads them again, and says why
                posted.clear()
            with suppress(RuntimeError):  # the app ended meanwhile
                app.call_from_thread(show_once, posted)

        app.set_timer(READ_AHEAD_WAIT, lambda: show_once([]))
        threading.Thread(target=read, name="ohtui-picker-rows", daemon=True).start()

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
        try:
            self._show_scope()
            self._update_legend()
            self.watch(self.option_list, "scroll_y", self._load_more_if_near_end, init=False)
            preview = self.query_one("#preview-body", VerticalScroll)
        except NoMatches:  # removed as it mounted (one made ahead, thrown away): nothing to do
            return
        self.watch(preview, "scroll_y", self._preview.scrolled, init=False)

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
            for message in self._read_ahead:  # in the opening frame
                if isinstance(message, Listed):
                    self._listed(message)
                elif isinstance(message, Counted):
                    self._counted(message)
            if not self._read_ahead:
                self._reload()
            self._frames_held.close()  # Screen's own handler, next, lays out and draws it

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

    def _rows_get(self, conversation_id: str) -> ConversationSummary | None:
        return self._rows.get(conversation_id)

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
            load_engine()  # one thread at a time: see ohtui.tui.widgets.engine_import
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
        workspace = self._workspace_filter(scope)
        self._in_background(
            lambda: self._reader.first_page(generation, query, workspace, limit), "rows", generation
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
            query = self._shown_query or ""
            workspace = self._workspace_filter(self.scope)
            limit = SEARCH_PAGE_ROWS if query else PAGE_ROWS

            def read() -> Listed | None:
                return self._reader.next_page(generation, query, workspace, after, limit)

            self._in_background(read, "more")

    @on(Listed)
    def _listed(self, message: Listed) -> None:
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

    def _start_indexing(self) -> None:
        """Fill the search index in the background, once the rows are drawn: its thread
        started with them held the GIL in the middle of their frame."""
        if not self._stop_indexing.is_set():
            self._catalog.index(
                lambda: self.post_message(self._Indexed()),
                lambda why: self.post_message(self._Failed(why)),
                self._stop_indexing,
            )

    def _options(self, message: Listed) -> list[Option | None]:
        """A page's options, a thin rule after each but the last row of the listing."""
        options: list[Option | None] = []
        for row, prompt in zip(message.rows, message.prompts, strict=True):
            options += [Option(prompt, id=row.id), None]
        if options and message.next is None:
            options.pop()
        return options

    def _show_first_page(self, message: Listed) -> None:
        if not self._index_started:
            self._index_started = True
            self.call_after_refresh(self._start_indexing)
        preview = self.query_one("#preview")
        if preview.has_class("-loading"):
            # The preview's parts are first drawn in the frame after the rows, not with them:
            # two lighter frames rather than one. The class is on the pane, not the screen:
            # restyling every widget of the screen cost a third of applying the first page.
            self.call_after_refresh(preview.remove_class, "-loading")
        self._shown_generation = message.generation
        self._preview.forget()  # fresh rows, fresh previews: a conversation may have grown
        self._rows = {row.id: row for row in message.rows}
        self._shown_query = message.query
        self._count = None if message.next is not None else len(message.rows)
        option_list = self.option_list
        option_list.set_options(self._options(message))
        empty = self.query_one("#empty", Static)
        show(empty, message.empty_text)
        empty.display = not message.rows
        ids = list(self._rows)
        keep_index, self._keep_index = self._keep_index, None
        # The listing puts the highlight there, not a key held down: no pause to wait out.
        self._preview.at_once = bool(ids)
        if ids:
            if self._keep_id in ids:
                option_list.highlighted = ids.index(self._keep_id)
            else:
                option_list.highlighted = min(keep_index or 0, len(ids) - 1)
        else:
            self._show_preview(None)

    def _show_next_page(self, message: Listed) -> None:
        rows = [row for row in message.rows if row.id not in self._rows]
        if len(rows) != len(message.rows):  # changed meanwhile: the list is read afresh
            self._reload(keep_loaded=True)
            return
        self._rows.update((row.id, row) for row in rows)
        self.option_list.add_options(self._options(message))
        if message.next is None:
            self._count = len(self._rows)

    @on(Counted)
    def _counted(self, message: Counted) -> None:
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
        self.set_class(summary is None, "-no-preview")
        head = self.query_one("#preview-head", Static)
        if summary is None:
            head.update("")
        else:
            current = summary.id == self._current_id
            head.update(preview_heading(summary, now=self._now(), home=self._home, current=current))
        self._preview.show(None if summary is None else summary.id)

    @on(PreviewLoaded)
    def _preview_loaded(self, message: PreviewLoaded) -> None:
        self._preview.loaded(message)
        if bool(self._branch_tips()) != self._legend_has_branches:
            self.refresh_bindings()
            self._update_legend()  # its branches are known now

    def _branch_tips(self) -> list[BranchTip]:
        """The highlighted conversation's branches, when it has more than one."""
        summary = self.highlighted
        tree = self._preview.tree(summary.id) if summary is not None else None
        return list(tree.tips) if tree is not None and len(tree.tips) > 1 else []

    # --- header and legend ---------------------------------------------------------------------

    def _show_scope(self) -> None:
        if self.scope == "all":
            where = "all workspaces"
        else:
            where = f"this workspace: {short_path(str(self._workspace), self._home)}"
        if self._shown_generation == self._generation:
            where = scope_line(
                where,
                count=self._count,
                rows=len(self._rows),
                query=self._shown_query,
                partial=self._partial,
            )
        # One line that fills what the title leaves: a new text never changes the layout.
        show(self.query_one("#scope", Static), where, same_size=True)

    def _update_legend(self) -> None:
        row = self.highlighted is not None
        entries = [
            ("↑↓", "move", len(self._rows) > 1),
            ("enter", "resume", row),
            ("type", "to search", True),
            ("ctrl+d", "delete", row),
            ("ctrl+r", "rename", row),
            ("ctrl+w", "this workspace" if self.scope == "all" else "all workspaces", True),
            ("esc", "clear search" if self._query() else "back", True),
        ]
        self._legend_has_branches = bool(self._branch_tips())
        if self._legend_has_branches:  # only then: most conversations have one branch
            entries.insert(5, (BRANCHES_KEY, "branches", True))
        show_legend(self.query_one("#legend", Static), entries)

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
        if action == "branches":
            return True if self._branch_tips() else None
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
        if summary is not None:
            self._changes.delete(summary)

    @on(Deleted)
    def _deleted(self, message: Deleted) -> None:
        if message.conversation_id in self._rows:
            # The row that moves up into the deleted one's place gets the highlight.
            self._keep_index = list(self._rows).index(message.conversation_id)
        self.notify(f"Deleted '{message.title}'.", markup=False)
        self._reload(keep_loaded=True)

    def action_branches(self) -> None:
        """List the highlighted conversation's branches; open it on the one chosen (HEAD
        moved there)."""
        summary = self.highlighted
        tips = self._branch_tips()
        if summary is None or not tips:
            return
        conversation_id = summary.id

        def chosen(leaf_event_id: str | None) -> None:
            if leaf_event_id is not None:
                self.dismiss(OpenBranch(conversation_id, leaf_event_id))

        screen = BranchesScreen(display_title(summary), tips, now=self._now())
        self.app.push_screen(screen, chosen)

    def action_rename(self) -> None:
        """Give the highlighted conversation a new title."""
        summary = self.highlighted
        if summary is not None:
            self._changes.rename(summary)

    @on(Renamed)
    def _renamed(self, message: Renamed) -> None:
        self.notify(f"Renamed to '{message.title}'.", markup=False)
        self._reload(keep_loaded=True)
