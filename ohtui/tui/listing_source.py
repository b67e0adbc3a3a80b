"""Where the picker lists conversations from: the local store, or an agent server.

Both answer the same four questions (summaries, search, a preview's last events, the cost), so the
picker does not care where conversations live. Every call blocks: the picker makes them on a
worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ohtui.sdk import Event, RemoteWorkspace
    from ohtui.sdk.conversation import ConversationSummary, SearchHit


class ListingSource(Protocol):
    """What the picker asks about saved conversations."""

    def summaries(
        self, workspace: str | None = None, limit: int | None = None
    ) -> list[ConversationSummary]:
        """Summaries, most recently updated first (`workspace`: only those working there)."""
        ...

    def search(self, query: str, workspace: str | None, limit: int) -> list[SearchHit]:
        """Conversations matching every word of `query`."""
        ...

    def recent_events(self, conversation_id: str, limit: int) -> list[Event]:
        """The last `limit` events, oldest first."""
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

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def summaries(
        self, workspace: str | None = None, limit: int | None = None
    ) -> list[ConversationSummary]:
        """Summaries, most recently updated first."""
        from ohtui.sdk.conversation import list_conversations

        return list_conversations(self.directory, workspace=workspace, limit=limit)

    def search(self, query: str, workspace: str | None, limit: int) -> list[SearchHit]:
        """Full-text search of the messages and titles."""
        from ohtui.sdk.conversation import search_conversations

        return search_conversations(self.directory, query, workspace=workspace, limit=limit)

    def recent_events(self, conversation_id: str, limit: int) -> list[Event]:
        """The last events, read without opening the conversation."""
        from ohtui.sdk.conversation.listing import recent_events

        return recent_events(self.directory, conversation_id, limit=limit)

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
    """The conversations an agent server keeps (`conversations/search`)."""

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

    def summaries(
        self, workspace: str | None = None, limit: int | None = None
    ) -> list[ConversationSummary]:
        """The server's conversations as summaries, most recently updated first."""
        from ohtui.remote_opening import list_remote

        rows = [_summary(item) for item in list_remote(self.workspace)]
        rows = [r for r in rows if workspace is None or r.workspace == workspace]
        return rows[:limit] if limit is not None else rows

    def search(self, query: str, workspace: str | None, limit: int) -> list[SearchHit]:
        """Conversations whose title or id has every word of `query` (the server has no
        full-text search)."""
        from ohtui.sdk.conversation import SearchHit

        words = query.lower().split()
        hits = []
        for row in self.summaries(workspace):
            text = f"{row.title or ''} {row.id}".lower()
            if all(word in text for word in words):
                hits.append(SearchHit(row, row.title or row.id))
        return hits[:limit]

    def recent_events(self, conversation_id: str, limit: int) -> list[Event]:
        """The last events, newest-first from the server, returned oldest first."""
        from ohtui.sdk.conversation.impl.rest import request
        from ohtui.sdk.wire.events_in import event_from_wire

        path = f"/api/conversations/{conversation_id}/events/search"
        params = {"limit": max(1, min(limit, 100)), "sort_order": "TIMESTAMP_DESC"}
        body = request(self.workspace, "GET", path, params=params).json()
        events = [event_from_wire(item) for item in body.get("items", [])]
        return [e for e in reversed(events) if e.kind != "ConversationStateUpdateEvent"]

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
        event_count=1 if item.get("last_user_message_id") or item.get("title") else 0,
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
