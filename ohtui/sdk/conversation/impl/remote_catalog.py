"""RemoteCatalog: the conversations an agent server keeps (`conversations/search`).

A server lists conversations a page at a time by its own cursor and has no full-text search,
so each listing reads the server's list once and pages and filters it here. Every call
blocks; the RemoteServerError family when the server refuses or cannot be reached.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ohtui.sdk.conversation.branch_tips import ConversationTree, tree_of_events
from ohtui.sdk.conversation.exceptions import ConversationNotFoundError
from ohtui.sdk.conversation.impl.paging import search_pages
from ohtui.sdk.conversation.impl.rest import request
from ohtui.sdk.conversation.summary import ConversationSummary, EventPage, SummaryPage
from ohtui.sdk.wire.events_in import event_from_wire
from ohtui.sdk.wire.state_in import stats_from_wire

if TYPE_CHECKING:
    from ohtui.sdk.conversation.summary import PageCursor
    from ohtui.sdk.workspace.remote import RemoteWorkspace

CONVERSATIONS_PER_REQUEST = 100
"""Conversations asked for in one conversations/search request."""
EVENTS_PER_REQUEST = 100
"""The most events an agent server returns in one events/search reply."""


def list_server_conversations(workspace: RemoteWorkspace) -> list[dict[str, Any]]:
    """The server's conversations (ConversationInfo dicts), most recently updated first."""
    items = search_pages(
        workspace,
        "/api/conversations/search",
        {"sort_order": "UPDATED_AT_DESC"},
        page_size=CONVERSATIONS_PER_REQUEST,
    )
    infos = [i for i in items if isinstance(i, dict) and i.get("id")]
    infos.sort(key=lambda i: str(i.get("updated_at") or i.get("created_at") or ""), reverse=True)
    return infos


class RemoteCatalog:
    """The conversations an agent server keeps."""

    searches = "titles"

    def __init__(self, workspace: RemoteWorkspace | Callable[[], RemoteWorkspace]) -> None:
        """`workspace`, or a function making it (called on the first use, off the UI
        thread: finding the server's key may ask the keyring)."""
        self._workspace = workspace

    @property
    def workspace(self) -> RemoteWorkspace:
        """The server's workspace (made on first use)."""
        if callable(self._workspace):
            self._workspace = self._workspace()
        return self._workspace

    def summaries(self) -> list[ConversationSummary]:
        """Every conversation on the server, most recently updated first."""
        return [summary_from_wire(item) for item in list_server_conversations(self.workspace)]

    def _matching(
        self, workspace: str | None, query: str, keep: str | None
    ) -> list[ConversationSummary]:
        """Every row the listing holds, newest first: in `workspace`, with every word of
        `query` in the title or id, something said in it (or `keep`)."""
        words = query.lower().split()
        rows = []
        for row in self.summaries():
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
        base = f"/api/conversations/{conversation_id}/events"
        total = int(request(self.workspace, "GET", base + "/count").json())
        stop = total if before is None else max(0, min(before, total))
        start = max(0, stop - limit)
        items = search_pages(
            self.workspace,
            base + "/search",
            {"sort_order": "TIMESTAMP_DESC"},
            page_size=EVENTS_PER_REQUEST,
            wanted=total - start,  # the newest events, down to index `start`
        )
        # items[k] is event number total-1-k: keep numbers start..stop-1, oldest first.
        run = [event_from_wire(item) for item in reversed(items[total - stop : total - start])]
        events = [e for e in run if e.kind != "ConversationStateUpdateEvent"]
        return EventPage(events, start, total)

    def cost(self, conversation_id: str) -> float | None:
        """The cost the server counted."""
        info = request(self.workspace, "GET", f"/api/conversations/{conversation_id}").json()
        stats = stats_from_wire(info.get("stats"))
        return stats.get_combined_metrics().accumulated_cost

    def tree(self, conversation_id: str, forked_at: str | None) -> ConversationTree:
        """From every event of the conversation (a server lists no tree: read in full, a
        page of EVENTS_PER_REQUEST at a time) and the HEAD its info names."""
        base = f"/api/conversations/{conversation_id}"
        info = request(self.workspace, "GET", base).json()
        items = search_pages(
            self.workspace,
            base + "/events/search",
            {"sort_order": "TIMESTAMP"},
            page_size=EVENTS_PER_REQUEST,
        )
        events = [event_from_wire(item) for item in items]
        leaf = info.get("leaf_event_id") if isinstance(info, dict) else None
        return tree_of_events(events, leaf if isinstance(leaf, str) else None, forked_at)

    def find(self, id_prefix: str) -> ConversationSummary:
        """The one conversation on the server whose id (dashes or not) starts with
        `id_prefix`; ConversationNotFoundError when none or several do."""
        wanted = id_prefix.replace("-", "").lower()
        matches = [row for row in self.summaries() if row.id.lower().startswith(wanted)]
        if len(matches) == 1:
            return matches[0]
        host = self.workspace.display_host
        if not matches:
            raise ConversationNotFoundError(
                f"No conversation {id_prefix} on the agent server at {host}. "
                "Pick one with `ohtui --server ... --resume`."
            )
        raise ConversationNotFoundError(
            f"'{id_prefix}' matches {len(matches)} conversations on {host}: give more of the id."
        )

    def latest(self, workspace: str) -> ConversationSummary | None:
        """The most recently updated one working in `workspace` on the server."""
        return next((row for row in self.summaries() if row.workspace == workspace), None)

    def rename(self, conversation_id: str, title: str) -> None:
        """PATCH its title on the server."""
        path = f"/api/conversations/{conversation_id}"
        request(self.workspace, "PATCH", path, json={"title": title})

    def delete(self, conversation_id: str) -> None:
        """DELETE it on the server."""
        request(self.workspace, "DELETE", f"/api/conversations/{conversation_id}")


def summary_from_wire(item: dict[str, Any]) -> ConversationSummary:
    """What a listing shows of a server's ConversationInfo."""
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
        forked_from=_hex_id(item.get("forked_from_conversation_id")),
        forked_at=str(item["forked_from_event_id"]) if item.get("forked_from_event_id") else None,
    )


def _hex_id(value: Any) -> str | None:
    """A conversation id as the server wrote it (dashed or not) in hex, or None."""
    return str(value).replace("-", "").lower() if value else None


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
