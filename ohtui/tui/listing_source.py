"""Where the picker lists conversations from: the local store, or an agent server.

Both answer the same questions (a page of summaries or of search hits, how many there are,
a run of a conversation's events, its cost), so the picker does not care where conversations
live. Every call blocks: the picker makes them on a worker thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ohtui.sdk import RemoteWorkspace
    from ohtui.sdk.conversation import ConversationSummary
    from ohtui.sdk.conversation.listing import EventPage
    from ohtui.sdk.conversation.summary import PageCursor, SummaryPage

EVENTS_PER_REQUEST = 100
"""The most events an agent server returns in one events/search reply."""


class ListingSource(Protocol):
    """What the picker asks about saved conversations."""

    searches: str
    """What a search looks through, for the search box: "all messages", "titles"."""

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

    def rename(self, conversation_id: str, title: str) -> None:
        """Retitle a conversation that is not open here."""
        ...

    def delete(self, conversation_id: str) -> None:
        """Delete a conversation that is not open here, with its events."""
        ...


class LocalListing:
    """The conversations saved in a local folder."""

    searches = "all messages"

    def __init__(self, directory: Path) -> None:
        self.directory = directory

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
        from ohtui.sdk.conversation.listing import conversations_page

        return conversations_page(
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
        from ohtui.sdk.conversation.listing import count_conversations

        return count_conversations(
            self.directory, workspace=workspace, query=query, keep=keep, index_first=False
        )

    def index(
        self, done: Callable[[], object], failed: Callable[[str], object], stop: threading.Event
    ) -> None:
        """Index what was saved since the last search, on a low-priority thread."""
        from ohtui.tui.search_index import index_in_background

        index_in_background(self.directory, done, failed, stop)

    def events(self, conversation_id: str, limit: int, before: int | None) -> EventPage:
        """Read without opening the conversation: only those events are parsed."""
        from ohtui.sdk.conversation.listing import events_page

        return events_page(self.directory, conversation_id, limit, before)

    def cost(self, conversation_id: str) -> float | None:
        """The saved cost."""
        from ohtui.sdk.conversation.listing import saved_cost

        return saved_cost(self.directory, conversation_id)

    def rename(self, conversation_id: str, title: str) -> None:
        """In the store (ConversationLockedError when another ohtui has it open)."""
        from ohtui.sdk.conversation import rename_conversation

        rename_conversation(self.directory, conversation_id, title)

    def delete(self, conversation_id: str) -> None:
        """From the store (ConversationLockedError when another ohtui has it open)."""
        from ohtui.sdk.conversation import delete_conversation

        delete_conversation(self.directory, conversation_id)


class RemoteListing:
    """The conversations an agent server keeps (`conversations/search`).

    A server lists conversations a page at a time by its own cursor and has no full-text
    search, so each listing reads the server's list once and pages and filters it here.
    """

    searches = "titles"

    def __init__(self, workspace: RemoteWorkspace | Callable[[], RemoteWorkspace]) -> None:
        """`workspace`, or a function making it (called on the first, worker-thread, use:
        finding the server's key may ask the keyring)."""
        self._workspace = workspace

    @property
    def workspace(self) -> RemoteWorkspace:
        """The server's workspace (made on first use)."""
        if callable(self._workspace):
            self._workspace = self._workspace()
        return self._workspace

    def _matching(
        self, workspace: str | None, query: str, keep: str | None
    ) -> list[ConversationSummary]:
        """Every row the listing holds, newest first: in `workspace`, with every word of
        `query` in the title or id, something said in it (or `keep`)."""
        from ohtui.opening.remote import list_remote

        words = query.lower().split()
        rows = []
        for row in (_summary(item) for item in list_remote(self.workspace)):
            if workspace is not None and row.workspace != workspace:
                continue
            if not (row.event_count or row.id == keep):
                continue
            text = f"{row.title or ''} {row.id}".lower()
            if all(word in text for word in words):
                rows.append(row)
        rows.sort(key=lambda row: (row.updated_at.timestamp(), row.id), reverse=True)
        return rows

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
        """The rows after `after` (by updated time, then id), `limit` of them."""
        from ohtui.sdk.conversation.summary import SummaryPage

        rows = self._matching(workspace, query, keep)
        if after is not None:
            rows = [r for r in rows if (r.updated_at.timestamp(), r.id) < after]
        shown = rows[:limit]
        last = shown[-1] if shown else None
        more = len(rows) > limit and last is not None
        cursor = (last.updated_at.timestamp(), last.id) if more and last is not None else None
        snippets = {row.id: row.title or row.id for row in shown} if query else {}
        return SummaryPage(shown, snippets, cursor)

    def count(self, *, workspace: str | None, query: str, keep: str | None) -> int:
        """Counted over the server's list."""
        return len(self._matching(workspace, query, keep))

    def index(
        self, done: Callable[[], object], failed: Callable[[str], object], stop: threading.Event
    ) -> None:
        """Nothing to index: the search is over titles the server lists."""
        done()

    def events(self, conversation_id: str, limit: int, before: int | None) -> EventPage:
        """Read newest first from the server, a page at a time, returned oldest first."""
        from ohtui.sdk.conversation.impl.rest import request
        from ohtui.sdk.conversation.listing import EventPage
        from ohtui.sdk.wire.events_in import event_from_wire

        base = f"/api/conversations/{conversation_id}/events"
        total = int(request(self.workspace, "GET", base + "/count").json())
        stop = total if before is None else max(0, min(before, total))
        start = max(0, stop - limit)
        wanted = total - start  # the newest events, down to index `start`
        items: list[dict[str, Any]] = []
        page_id: str | None = None
        while len(items) < wanted:
            params: dict[str, Any] = {
                "limit": min(EVENTS_PER_REQUEST, wanted - len(items)),
                "sort_order": "TIMESTAMP_DESC",
            }
            if page_id:
                params["page_id"] = page_id
            body = request(self.workspace, "GET", base + "/search", params=params).json()
            items += body.get("items", [])
            page_id = body.get("next_page_id")
            if not page_id:
                break
        # items[k] is event number total-1-k: keep numbers start..stop-1, oldest first.
        run = [event_from_wire(item) for item in reversed(items[total - stop : total - start])]
        events = [e for e in run if e.kind != "ConversationStateUpdateEvent"]
        return EventPage(events, start, total)

    def cost(self, conversation_id: str) -> float | None:
        """The cost the server counted."""
        from ohtui.sdk.conversation.impl.rest import request
        from ohtui.sdk.wire.state_in import stats_from_wire

        info = request(self.workspace, "GET", f"/api/conversations/{conversation_id}").json()
        stats = stats_from_wire(info.get("stats"))
        return stats.get_combined_metrics().accumulated_cost

    def rename(self, conversation_id: str, title: str) -> None:
        """PATCH its title on the server."""
        from ohtui.sdk.conversation.impl.rest import request

        path = f"/api/conversations/{conversation_id}"
        request(self.workspace, "PATCH", path, json={"title": title})

    def delete(self, conversation_id: str) -> None:
        """DELETE it on the server."""
        from ohtui.sdk.conversation.impl.rest import request

        request(self.workspace, "DELETE", f"/api/conversations/{conversation_id}")


def _summary(item: dict[str, Any]) -> ConversationSummary:
    from ohtui.sdk.conversation import ConversationSummary

    agent = _table(item, "agent")
    llm = _table(agent, "llm")
    workspace = _table(item, "workspace")
    created = _time(item.get("created_at"))
    return ConversationSummary(
        id=str(item["id"]).replace("-", ""),
        title=item.get("title") or None,
        first_user_message=None,
        created_at=created,
        updated_at=_time(item.get("updated_at")) if item.get("updated_at") else created,
        # The server says only whether anything was said: how much is not known (-1).
        event_count=-1 if item.get("last_user_message_id") or item.get("title") else 0,
        status=item.get("execution_status"),
        workspace=workspace.get("working_dir"),
        model=llm.get("model"),
    )


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _time(value: Any) -> datetime:
    """A server timestamp (naive local, or with an offset) as an aware datetime."""
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return datetime.now().astimezone()
    return moment if moment.tzinfo else moment.astimezone()
