"""The conversation picker: saved conversations newest first, full-text search, a preview of
the highlighted one; resume, delete, rename, and this workspace / all workspaces.

Every printable key types into the search box, wherever the focus is: commands take keys that
never type text (Ctrl+D, Ctrl+R, Ctrl+W), so typing a search can never delete or rename.

Every database call runs on a worker thread and comes back as a message, so no key press
waits for SQLite. The engine is imported on those threads too: it costs ~0.2 s to import.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from textual import events, on
from textual.app import ComposeResult
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
from ohtui.tui.listing_source import ListingSource, LocalListing
from ohtui.tui.picker_rows import display_title, preview_content, preview_heading, row_prompt
from ohtui.tui.preload import load_engine
from ohtui.tui.saved import DELETE_OPEN, SavedConversations
from ohtui.tui.screens.confirm import ConfirmScreen
from ohtui.tui.screens.text_prompt import TextPromptScreen
from ohtui.tui.widgets.marked import MarkedOptionList

if TYPE_CHECKING:
    from ohtui.sdk.conversation.summary import ConversationSummary

Scope = Literal["workspace", "all"]

SEARCH_DELAY = 0.15
"""Seconds of typing pause before a search runs: one query per burst of keys, not per key."""
PREVIEW_DELAY = 0.05
"""Seconds the highlight must rest before its preview is read (holding ↓ reads none)."""
PREVIEW_EVENTS = 24
SEARCH_LIMIT = 200
_PREVIEW_CACHE = 64


class PickerScreen(Screen[str | None]):
    """Choose a saved conversation to resume."""

    CSS_PATH = "picker.tcss"
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
        """Rows of a listing or search, read and formatted on a worker."""

        generation: int
        query: str
        rows: list[ConversationSummary]
        prompts: list[Content]
        empty_text: str

    @dataclass
    class _PreviewLoaded(Message, bubble=False):
        """The last exchanges of one conversation, read on a worker."""

        conversation_id: str
        content: Content

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
        saved: SavedConversations | None = None,
        now: Callable[[], float] = time.time,
        listing: ListingSource | None = None,
    ) -> None:
        """`saved` renames and deletes (the open conversation through itself); without it,
        no conversation is open. `listing`: where the conversations are listed from (by
        default the local folder; an agent server's when the agent runs there)."""
        super().__init__()
        self._dir = conversations_dir
        self._listing: ListingSource = listing or LocalListing(conversations_dir)
        self._workspace = workspace
        self._current_id = current_id
        self._saved = saved or SavedConversations(conversations_dir, lambda: None)
        self._now = now
        self._home = Path.home()
        self._rows: dict[str, ConversationSummary] = {}
        self._generation = 0
        self._shown_generation = -1
        self._shown_query: str | None = None
        self._asked_query: str | None = None
        self._keep_id: str | None = None
        self._keep_index: int | None = None
        self._search_timer: Timer | None = None
        self._preview_timer: Timer | None = None
        self._previews: dict[str, Content] = {}

    def compose(self) -> ComposeResult:
        """Header, search box, the list beside the preview, and the key legend."""
        with Horizontal(id="header"):
            yield Static("Conversations", id="title")
            yield Static(id="scope", markup=False)
        yield Input(placeholder="Type to search all messages", id="search", select_on_focus=False)
        with Horizontal(id="body"):
            with Vertical(id="list-pane"):
                yield Static("Loading conversations…", id="empty", markup=False)
                yield MarkedOptionList(id="conversations", markup=False)
            with Vertical(id="preview"):
                yield Static(id="preview-head")
                with VerticalScroll(id="preview-body", can_focus=False):
                    yield Static(id="preview-events")
        yield Static(id="legend")

    def on_mount(self) -> None:
        """Focus the list and read it in the background; this frame does not wait for it."""
        self.query_one("#conversations", OptionList).focus()
        self._show_scope(count=None)
        self._update_legend()
        self._reload()

    # --- state -----------------------------------------------------------------------------

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
        self, job: Callable[[], Message], group: str, generation: int | None = None
    ) -> None:
        """Run database work on a thread; post the message it returns, or _Failed."""

        def work() -> None:
            load_engine()  # one thread at a time: see ohtui.tui.preload
            try:
                message = job()
            # Locked or damaged database (TimeoutError, PersistenceError: OSErrors), a
            # conversation deleted meanwhile (LookupError), an unreadable event (ValueError).
            except (OSError, LookupError, ValueError) as exc:
                message = self._Failed(str(exc), generation)
            self.post_message(message)

        self.run_worker(work, group=group, thread=True, exit_on_error=False)

    def _reload(self) -> None:
        """List (or search) again in the current scope, keeping the highlighted conversation."""
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        highlighted = self.highlighted
        if highlighted is not None:
            self._keep_id = highlighted.id
        self._generation += 1
        generation, query, scope = self._generation, self._query(), self.scope
        self._asked_query = query
        self._in_background(lambda: self._read_rows(generation, query, scope), "rows", generation)

    def _read_rows(self, generation: int, query: str, scope: Scope) -> _Listed:
        """On a worker: the rows and their formatted prompts."""
        # The engine stores the resolved working directory: compare like with like.
        workspace = str(self._workspace.expanduser().resolve()) if scope == "workspace" else None
        snippets: dict[str, str] = {}
        if query:
            hits = self._listing.search(query, workspace, SEARCH_LIMIT)
            rows = [hit.summary for hit in hits]
            snippets = {hit.summary.id: hit.snippet for hit in hits}
        else:
            rows = self._listing.summaries(workspace)
        # A conversation nothing was said in (open in another window, or left by a crash)
        # has nothing to go back to.
        rows = [row for row in rows if row.event_count or row.id == self._current_id]
        now = self._now()
        prompts = [
            row_prompt(
                row,
                now=now,
                home=self._home,
                current=row.id == self._current_id,
                snippet=snippets.get(row.id),
            )
            for row in rows
        ]
        empty_text = ""
        if not rows:
            where = " in this workspace" if workspace else ""
            if query:
                empty_text = f"No conversation{where} mentions '{query}'."
            elif workspace and self._listing.summaries(limit=1):
                empty_text = "None in this workspace — press ctrl+w to see all."
            else:
                empty_text = "No saved conversations yet."
        return self._Listed(generation, query, rows, prompts, empty_text)

    @on(_Listed)
    def _listed(self, message: _Listed) -> None:
        if message.generation != self._generation:
            return  # a newer query is on its way
        self._shown_generation = message.generation
        self._previews.clear()  # fresh rows, fresh previews: a conversation may have grown
        self._rows = {row.id: row for row in message.rows}
        self._shown_query = message.query
        option_list = self.option_list
        options: list[Option | None] = []
        for row, prompt in zip(message.rows, message.prompts, strict=True):
            if options:
                options.append(None)  # a thin rule between rows
            options.append(Option(prompt, id=row.id))
        option_list.set_options(options)
        empty = self.query_one("#empty", Static)
        empty.update(message.empty_text)
        empty.display = not message.rows
        ids = list(self._rows)
        keep_index, self._keep_index = self._keep_index, None
        if ids:
            if self._keep_id in ids:
                option_list.highlighted = ids.index(self._keep_id)
            else:
                option_list.highlighted = min(keep_index or 0, len(ids) - 1)
        else:
            self._show_preview(None)
        self._show_scope(count=len(ids))
        self.refresh_bindings()
        self._update_legend()

    @on(_Failed)
    def _failed(self, message: _Failed) -> None:
        self.notify(message.text, title="Saved conversations", severity="error", markup=False)
        if message.generation is not None and message.generation == self._generation:
            self._shown_generation = message.generation
            self._rows = {}
            self.option_list.clear_options()
            self._show_preview(None)
            empty = self.query_one("#empty", Static)
            empty.update("The saved conversations cannot be read right now.")
            empty.display = True
            self._show_scope(count=0)
            self._update_legend()

    # --- preview --------------------------------------------------------------------------------

    @on(OptionList.OptionHighlighted, "#conversations")
    def _highlight_moved(self, event: OptionList.OptionHighlighted) -> None:
        self._show_preview(self._rows.get(event.option.id or ""))
        self.refresh_bindings()
        self._update_legend()

    def _show_preview(self, summary: ConversationSummary | None) -> None:
        """Show what the summary says at once; read the last exchanges after a short pause."""
        head = self.query_one("#preview-head", Static)
        body = self.query_one("#preview-events", Static)
        if self._preview_timer is not None:
            self._preview_timer.stop()
            self._preview_timer = None
        self.set_class(summary is None, "-no-preview")
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
        body.update(cached or "")
        if cached is not None:
            self._scroll_preview_end()
            return
        conversation_id = summary.id
        self._preview_timer = self.set_timer(
            PREVIEW_DELAY,
            lambda: self._in_background(lambda: self._read_preview(conversation_id), "preview"),
        )

    def _read_preview(self, conversation_id: str) -> _PreviewLoaded:
        """On a worker: the last events of a conversation, formatted."""
        events = self._listing.recent_events(conversation_id, PREVIEW_EVENTS)
        cost = self._listing.cost(conversation_id)
        return self._PreviewLoaded(conversation_id, preview_content(events, cost))

    @on(_PreviewLoaded)
    def _preview_loaded(self, message: _PreviewLoaded) -> None:
        if len(self._previews) >= _PREVIEW_CACHE:
            self._previews.pop(next(iter(self._previews)))
        self._previews[message.conversation_id] = message.content
        highlighted = self.highlighted
        if highlighted is not None and highlighted.id == message.conversation_id:
            self.query_one("#preview-events", Static).update(message.content)
            self._scroll_preview_end()

    def _scroll_preview_end(self) -> None:
        body = self.query_one("#preview-body", VerticalScroll)
        self.call_after_refresh(body.scroll_end, animate=False, immediate=True)

    # --- header and legend ---------------------------------------------------------------------

    def _show_scope(self, count: int | None) -> None:
        if self.scope == "all":
            where = "all workspaces"
        else:
            where = f"this workspace: {short_path(str(self._workspace), self._home)}"
        if count is not None and self._shown_query:
            where += f" · {count} match{'' if count == 1 else 'es'}"
        elif count is not None:
            where += f" · {count} conversation{'' if count == 1 else 's'}"
        self.query_one("#scope", Static).update(where)

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
        self.query_one("#legend", Static).update(
            Content(" · ").join(
                Content.assemble(
                    (key, "bold $text-accent" if enabled else "$foreground-disabled"),
                    " ",
                    (text, "" if enabled else "$foreground-disabled"),
                )
                for key, text, enabled in entries
            )
        )

    def watch_scope(self) -> None:
        """Say which conversations are listed and list them."""
        self._show_scope(count=None)
        self._update_legend()
        self._reload()

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
        if not self.pending and len(self._rows) == 1:
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
        self._reload()

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
        self._reload()
