"""The catalogue of saved conversations: what listing them asks, and the local side.

The picker, `--resume`/`--continue` and the agent server's conversation listing ask the
same questions wherever conversations live (a page of summaries or of search hits, how many
there are, a run of a conversation's events, its cost, the one an id prefix names), so none
of them cares whether they are in a local folder (`LocalCatalog`) or on an agent server
(`impl.remote_catalog.RemoteCatalog`). Every call blocks: front ends make them off their
UI thread. The local side calls `listing` and `search_index` through their modules, so a
test can stand in for one of their functions.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ohtui.sdk.conversation import listing, search_index

if TYPE_CHECKING:
    from ohtui.sdk.conversation.branch_tips import ConversationTree
    from ohtui.sdk.conversation.store import ConversationStore
    from ohtui.sdk.conversation.summary import (
        ConversationSummary,
        EventPage,
        PageCursor,
        SummaryPage,
    )


class ConversationCatalog(Protocol):
    """What front ends ask about saved conversations."""

    searches: str
    """What a search looks through, for a search box: "all messages", "titles"."""

    def page(
        self,
        *,
        workspace: str | None,
        query: str,
        after: PageCursor | None,
        limit: int,
        keep: str | None,
        index_first: bool,
    ) -> SummaryPage:
        """One page of the conversations (or of those matching every word of `query`),
        newest first, from `after` (the previous page's `next`). Conversations nothing was
        said in are left out, except `keep`; `index_first=False`: search only what is
        indexed already, never waiting for indexing."""
        ...

    def count(self, *, workspace: str | None, query: str, keep: str | None) -> int:
        """How many rows all pages of `page` with these arguments hold."""
        ...

    def index(
        self, done: Callable[[], object], failed: Callable[[str], object], stop: threading.Event
    ) -> None:
        """Prepare full search in the background; `done()` once every message is searchable."""
        ...

    def events(self, conversation_id: str, limit: int, before: int | None) -> EventPage:
        """Up to `limit` events just before index `before` (None: the last ones)."""
        ...

    def cost(self, conversation_id: str) -> float | None:
        """What the conversation's LLM calls cost (None: not known)."""
        ...

    def tree(self, conversation_id: str, forked_at: str | None) -> ConversationTree:
        """Its branches, newest first, which one is active, and (for a fork) when the event
        `forked_at` it was forked at happened."""
        ...

    def find(self, id_prefix: str) -> ConversationSummary:
        """The one conversation whose id starts with `id_prefix` (`--resume ID`);
        ConversationNotFoundError when none or several match, saying which."""
        ...

    def latest(self, workspace: str) -> ConversationSummary | None:
        """The conversation `--continue` takes up in `workspace` (None: there is none)."""
        ...

    def rename(self, conversation_id: str, title: str) -> None:
        """Retitle a conversation that is not open here."""
        ...

    def delete(self, conversation_id: str) -> None:
        """Delete a conversation that is not open here, with its events."""
        ...


class LocalCatalog:
    """The conversations saved in a local folder."""

    searches = "all messages"

    def __init__(self, directory: str | Path, store: ConversationStore | None = None) -> None:
        """`store`: one the caller keeps open (the agent server's), which `summaries` reads
        without opening another; every other call opens the store under `directory`."""
        self.directory = Path(directory)
        self._store = store

    def summaries(self, workspace: str | None = None) -> list[ConversationSummary]:
        """Every saved conversation (in `workspace`), most recently updated first."""
        if self._store is not None:
            return self._store.list_summaries(workspace=workspace)
        return listing.list_conversations(self.directory, workspace)

    def page(
        self,
        *,
        workspace: str | None,
        query: str,
        after: PageCursor | None,
        limit: int,
        keep: str | None,
        index_first: bool,
    ) -> SummaryPage:
        """A keyset page of the store (search: its full-text index)."""
        return listing.conversations_page(
            self.directory,
            workspace=workspace,
            query=query,
            after=after,
            limit=limit,
            keep=keep,
            index_first=index_first,
        )

    def count(self, *, workspace: str | None, query: str, keep: str | None) -> int:
        """Counted in the store, over what is indexed already."""
        return listing.count_conversations(
            self.directory, workspace=workspace, query=query, keep=keep, index_first=False
        )

    def index(
        self, done: Callable[[], object], failed: Callable[[str], object], stop: threading.Event
    ) -> None:
        """Index what was saved since the last search, on a low-priority thread."""
        search_index.index_in_background(self.directory, done, failed, stop)

    def events(self, conversation_id: str, limit: int, before: int | None) -> EventPage:
        """Read without opening the conversation: only those events are parsed."""
        return listing.events_page(self.directory, conversation_id, limit, before)

    def cost(self, conversation_id: str) -> float | None:
        """The saved cost."""
        return listing.saved_cost(self.directory, conversation_id)

    def tree(self, conversation_id: str, forked_at: str | None) -> ConversationTree:
        """From the store's rows: only the tips and their messages are parsed."""
        return listing.conversation_tree(self.directory, conversation_id, forked_at)

    def find(self, id_prefix: str) -> ConversationSummary:
        """Found in the store by id prefix."""
        return listing.find_conversation(self.directory, id_prefix)

    def latest(self, workspace: str) -> ConversationSummary | None:
        """The most recently updated one in `workspace` that something was said in."""
        said = [s for s in listing.list_conversations(self.directory, workspace) if s.event_count]
        return said[0] if said else None

    def rename(self, conversation_id: str, title: str) -> None:
        """In the store (ConversationLockedError when another ohtui has it open)."""
        listing.rename_conversation(self.directory, conversation_id, title)

    def delete(self, conversation_id: str) -> None:
        """From the store (ConversationLockedError when another ohtui has it open)."""
        listing.delete_conversation(self.directory, conversation_id)
