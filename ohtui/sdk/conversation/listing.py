"""Saved conversations under a base directory: list, search, preview, find, rename, delete."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ohtui.sdk.conversation.branch_tips import ConversationTree, read_tree
from ohtui.sdk.conversation.event_store import EventLog
from ohtui.sdk.conversation.exceptions import ConversationNotFoundError, StorageReadOnlyError
from ohtui.sdk.conversation.store import DB_NAME, ConversationStore
from ohtui.sdk.conversation.summary import (
    ConversationSummary,
    EventPage,
    PageCursor,
    SearchHit,
    SummaryPage,
)
from ohtui.sdk.event.base import Event


def _open(persistence_dir: str | Path, *, to_read: bool = True) -> ConversationStore | None:
    """The store (None: no database yet). `to_read`: in a folder that cannot be written,
    a read-only store, so saved conversations can still be listed, searched and shown."""
    if not (Path(persistence_dir).expanduser() / DB_NAME).exists():
        return None
    try:
        return ConversationStore(persistence_dir)
    except StorageReadOnlyError:
        if not to_read:
            raise
        return ConversationStore(persistence_dir, read_only=True)


def list_conversations(
    persistence_dir: str | Path, workspace: str | None = None, limit: int | None = None
) -> list[ConversationSummary]:
    """Summaries of the saved conversations, most recently updated first."""
    store = _open(persistence_dir)
    if store is None:
        return []
    try:
        return store.list_summaries(workspace=workspace, limit=limit)
    finally:
        store.close()


def conversations_page(
    persistence_dir: str | Path,
    *,
    workspace: str | None = None,
    query: str = "",
    after: PageCursor | None = None,
    limit: int = 50,
    keep: str | None = None,
    index_first: bool = True,
) -> SummaryPage:
    """One page of the saved conversations (or of those matching `query`), newest first.

    `after` is the previous page's `next`. Conversations nothing was said in are left out,
    except `keep`. `index_first=False` searches only the messages already indexed (see
    `index_for_search`), so it never waits for indexing.
    """
    store = _open(persistence_dir)
    if store is None:
        return SummaryPage([], {}, None)
    try:
        return store.summaries_page(
            workspace=workspace,
            query=query,
            after=after,
            limit=limit,
            keep=keep,
            index_first=index_first,
        )
    finally:
        store.close()


def count_conversations(
    persistence_dir: str | Path,
    *,
    workspace: str | None = None,
    query: str = "",
    keep: str | None = None,
    index_first: bool = True,
) -> int:
    """How many rows all pages of `conversations_page` with these arguments hold."""
    store = _open(persistence_dir)
    if store is None:
        return 0
    try:
        return store.count_summaries(
            workspace=workspace, query=query, keep=keep, index_first=index_first
        )
    finally:
        store.close()


def index_for_search(persistence_dir: str | Path, conversations: int = 200) -> bool:
    """Index the messages of up to `conversations` conversations saved since the last search;
    returns whether any are left. Each call is one short transaction."""
    store = _open(persistence_dir)
    if store is None:
        return False
    try:
        return False if store.read_only else store.index_pending(conversations)
    finally:
        store.close()


def search_conversations(
    persistence_dir: str | Path, query: str, workspace: str | None = None, limit: int = 50
) -> list[SearchHit]:
    """Conversations whose messages or title contain every word of `query`."""
    store = _open(persistence_dir)
    if store is None:
        return []
    try:
        return store.search(query, workspace=workspace, limit=limit)
    finally:
        store.close()


def recent_events(
    persistence_dir: str | Path, conversation_id: str, limit: int = 12
) -> list[Event]:
    """The last `limit` events of a saved conversation, oldest first, without opening it.

    Only those events are read and parsed. Raises ConversationNotFoundError if there is none.
    """
    return history_tail(persistence_dir, conversation_id, limit)[0]


def saved_cost(persistence_dir: str | Path, conversation_id: str) -> float | None:
    """What a saved conversation's LLM calls cost in all (None: not known), without opening it."""
    store = _open(persistence_dir)
    try:
        stored = None if store is None else store.load(conversation_id)
    finally:
        if store is not None:
            store.close()
    if stored is None:
        return None
    try:
        metrics = json.loads(stored.state_json).get("stats", {}).get("usage_to_metrics", {})
        return float(sum(m.get("accumulated_cost") or 0.0 for m in metrics.values()))
    except (ValueError, AttributeError, TypeError):
        return None  # a state this version cannot read: the preview just leaves cost out


def history_tail(
    persistence_dir: str | Path, conversation_id: str, limit: int
) -> tuple[list[Event], int]:
    """(the last `limit` events, oldest first; how many events there are in all)."""
    store = _open(persistence_dir)
    try:
        stored = None if store is None else store.load(conversation_id)
        if store is None or stored is None:
            raise ConversationNotFoundError(f"No saved conversation {conversation_id}.")
        # A read-only EventLog parses events exactly as a resumed conversation would.
        events = EventLog(store, stored.key)
        total = len(events)
        return (events[max(0, total - limit) :] if limit > 0 else []), total
    finally:
        if store is not None:
            store.close()


def events_page(
    persistence_dir: str | Path, conversation_id: str, limit: int, before: int | None = None
) -> EventPage:
    """Up to `limit` events of a saved conversation's active branch (root to HEAD) just
    before position `before` on it (None: its last ones), without opening it: only those
    are read and parsed (and the events' parents, when the conversation has branches).

    Raises ConversationNotFoundError if there is none.
    """
    store = _open(persistence_dir)
    try:
        stored = None if store is None else store.load(conversation_id)
        if store is None or stored is None:
            raise ConversationNotFoundError(f"No saved conversation {conversation_id}.")
        if stored.leaf is None:  # a log older than the tree, or an emptied HEAD
            total = 0 if _head_is_empty(stored.state_json) else store.event_count(stored.key)
            stop = total if before is None else max(0, min(before, total))
            start = max(0, stop - limit)
            rows = store.read_events(stored.key, start, stop) if stop > start else []
            return EventPage([Event.model_validate_json(data) for _, data in rows], start, total)
        log = EventLog(store, stored.key)
        branch = log.branch_indexes(stored.leaf)
        total = len(branch)
        stop = total if before is None else max(0, min(before, total))
        start = max(0, stop - limit)
        return EventPage(log.events_at(branch[start:stop]), start, total)
    finally:
        if store is not None:
            store.close()


def conversation_tree(
    persistence_dir: str | Path, conversation_id: str, forked_at: str | None = None
) -> ConversationTree:
    """The branches of a saved conversation, newest first, without opening it (and the time
    of `forked_at`, the event a fork was made at). ConversationNotFoundError if none."""
    store = _open(persistence_dir)
    try:
        stored = None if store is None else store.load(conversation_id)
        if store is None or stored is None:
            raise ConversationNotFoundError(f"No saved conversation {conversation_id}.")
        return read_tree(store, stored.key, stored.leaf, forked_at)
    finally:
        if store is not None:
            store.close()


def _head_is_empty(state_json: str) -> bool:
    """Whether a saved state says its HEAD was emptied on purpose (navigate_to(None))."""
    try:
        return bool(json.loads(state_json).get("head_is_empty"))
    except (ValueError, AttributeError):
        return False  # a state this version cannot read: shown as the log it has


def find_conversation(persistence_dir: str | Path, id_prefix: str) -> ConversationSummary:
    """The one saved conversation whose id starts with `id_prefix`.

    Raises ConversationNotFoundError when none or several match, saying which.
    """
    store = _open(persistence_dir)
    matches = [] if store is None else store.find(id_prefix)
    if store is not None:
        store.close()
    if not matches:
        raise ConversationNotFoundError(
            f"No saved conversation has an id starting with '{id_prefix}' in "
            f"'{persistence_dir}'. List them to see the ids."
        )
    if len(matches) > 1:
        ids = ", ".join(m.id[:12] for m in matches[:5])
        raise ConversationNotFoundError(
            f"'{id_prefix}' matches {len(matches)} conversations ({ids}…); type more of the id."
        )
    return matches[0]


def rename_conversation(persistence_dir: str | Path, conversation_id: str, title: str) -> None:
    """Set the title of a saved conversation that nobody has open.

    ConversationLockedError names the holder of an open one: its title is set through it.
    """
    with _taken(persistence_dir, conversation_id) as store:
        store.rename(conversation_id, title)


def delete_conversation(persistence_dir: str | Path, conversation_id: str) -> None:
    """Delete a saved conversation that nobody has open, its events and its files.

    ConversationLockedError names the holder of an open one.
    """
    with _taken(persistence_dir, conversation_id) as store:
        store.delete(conversation_id)
        shutil.rmtree(Path(persistence_dir).expanduser() / conversation_id, ignore_errors=True)


@contextmanager
def _taken(persistence_dir: str | Path, conversation_id: str) -> Iterator[ConversationStore]:
    """The store, with the saved conversation's lease held (ConversationNotFoundError if none)."""
    store = _open(persistence_dir, to_read=False)
    try:
        if store is None or store.load(conversation_id) is None:
            raise ConversationNotFoundError(f"No saved conversation {conversation_id}.")
        with store.lease(conversation_id):
            yield store
    finally:
        if store is not None:
            store.close()
