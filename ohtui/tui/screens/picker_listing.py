"""Reading the picker's rows, on worker threads: pages of the catalogue's conversations (or of
a search), formatted as the list shows them, each posted to the screen as a message. A page
whose listing is stale (a newer one was asked for) is dropped, never posted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from textual.content import Content
from textual.message import Message

from ohtui.tui.picker_rows import display_title, row_prompt
from ohtui.tui.screens.picker_family import family_order

if TYPE_CHECKING:
    from ohtui.sdk.conversation.catalog import ConversationCatalog
    from ohtui.sdk.conversation.summary import ConversationSummary, PageCursor, SummaryPage


@dataclass
class Listed(Message, bubble=False):
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
class Counted(Message, bubble=False):
    """How many rows all pages of a listing or search hold."""

    generation: int
    count: int


@dataclass(frozen=True)
class RowsReader:
    """Reads the rows a picker lists; every method runs on a worker thread."""

    catalog: Callable[[], ConversationCatalog]
    """Where the rows are read from."""
    post: Callable[[Message], object]
    """Hands a message to the screen (thread-safe)."""
    stale: Callable[[int], bool]
    """Whether a newer listing than `generation` was asked for."""
    indexed: Callable[[], bool]
    """Whether every saved message is searchable now."""
    now: Callable[[], float]
    home: Path
    current_id: str | None
    titles: dict[str, str | None] = field(default_factory=dict)
    """Parents' titles looked up (None: gone), by id."""

    def first_page(self, generation: int, query: str, workspace: str | None, limit: int) -> None:
        """Post the first page of rows (in `workspace`; None: all), then how many there are."""
        if self.stale(generation):
            return  # typed on: a newer search is coming
        self.titles.clear()  # a listing afresh: parents may have been renamed or deleted
        page, partial = self._read(query, workspace, None, limit)
        if self.stale(generation):
            return
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
        rows, prompts = self.prompts(page)
        self.post(Listed(generation, query, rows, prompts, page.next, partial, True, empty_text))
        if page.next is not None and not self.stale(generation):
            count = self.catalog().count(workspace=workspace, query=query, keep=self.current_id)
            self.post(Counted(generation, count))

    def next_page(
        self, generation: int, query: str, workspace: str | None, after: PageCursor, limit: int
    ) -> Listed | None:
        """The page after the rows shown (None: stale)."""
        if self.stale(generation):
            return None
        page, partial = self._read(query, workspace, after, limit)
        if self.stale(generation):
            return None
        rows, prompts = self.prompts(page)
        return Listed(generation, query, rows, prompts, page.next, partial, False)

    def prompts(self, page: SummaryPage) -> tuple[list[ConversationSummary], list[Content]]:
        """The rows of a page in the order the list shows them (each fork under its parent),
        and each as it shows."""
        now = self.now()
        rows: list[ConversationSummary] = []
        prompts: list[Content] = []
        on_page = {row.id: row for row in page.rows}
        for row, depth in family_order(page.rows):
            parent = row.forked_from
            apart = parent is not None and parent not in on_page
            rows.append(row)
            prompts.append(
                row_prompt(
                    row,
                    now=now,
                    home=self.home,
                    current=row.id == self.current_id,
                    snippet=page.snippets.get(row.id),
                    depth=depth,
                    fork_of=self.title_of(parent) if apart and parent is not None else None,
                )
            )
        return rows, prompts

    def title_of(self, conversation_id: str) -> str:
        """A conversation's title as rows show it, for a fork listed apart from its parent
        (looked up once per listing; its short id, "(deleted)", when it is gone)."""
        if conversation_id not in self.titles:
            try:
                found: str | None = display_title(self.catalog().find(conversation_id))
            # Gone (deleted), or not to be read now (a server out of reach: RuntimeError):
            # the row still shows, naming the parent by its id.
            except (LookupError, OSError, ValueError, RuntimeError):
                found = None
            self.titles[conversation_id] = found
        return self.titles[conversation_id] or f"{conversation_id[:8]} (deleted)"

    def _read(
        self, query: str, workspace: str | None, after: PageCursor | None, limit: int
    ) -> tuple[SummaryPage, bool]:
        """A page of rows, and whether it is a search of a part of the index."""
        partial = bool(query) and not self.indexed()
        page = self.catalog().page(
            workspace=workspace,
            query=query,
            after=after,
            limit=limit,
            keep=self.current_id,
            index_first=not partial,
        )
        return page, partial

    def _any_saved(self) -> bool:
        """Whether any conversation is listed, in any workspace."""
        page = self.catalog().page(
            workspace=None, query="", after=None, limit=1, keep=None, index_first=False
        )
        return bool(page.rows)
