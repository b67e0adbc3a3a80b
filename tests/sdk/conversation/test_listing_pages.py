"""Pages of saved conversations: keyset paging, paged search with snippets for the page only,
indexing in batches, pages of events, and query plans that use the store's indexes."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ohtui.sdk.conversation.store as store_module
from ohtui.sdk import Message, MessageEvent, TextContent
from ohtui.sdk.conversation import EventLog
from ohtui.sdk.conversation.listing import (
    conversations_page,
    count_conversations,
    events_page,
    index_for_search,
)
from ohtui.sdk.conversation.store import ConversationStore
from ohtui.sdk.conversation.summary import SummaryPage

NOW = 1_750_000_000.0


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The store's clock, fixed (so many rows share one updated_at) until changed."""
    now = [NOW]
    monkeypatch.setattr(store_module, "_now", lambda: now[0])
    return now


@pytest.fixture
def store(persistence_dir: Path, clock: list[float]) -> Iterator[ConversationStore]:
    store = ConversationStore(persistence_dir)
    store._conn.execute("PRAGMA synchronous=OFF")  # durability is not what these test
    yield store
    store.close()


def message(text: str, source: str = "user") -> MessageEvent:
    role = "user" if source == "user" else "assistant"
    return MessageEvent(
        source=source,  # type: ignore[arg-type]
        llm_message=Message(role=role, content=[TextContent(text=text)]),
    )


def add(
    store: ConversationStore, *texts: str, workspace: str = "/ws/a", title: str | None = None
) -> str:
    cid = uuid.uuid4().hex
    key = store.create(cid, "{}", {"title": title, "workspace": workspace, "status": "idle"})
    log = EventLog(store, key)
    for text in texts:
        log.append(message(text))
    return cid


def every_page(persistence_dir: Path, limit: int, **kwargs: Any) -> list[SummaryPage]:
    pages = [conversations_page(persistence_dir, limit=limit, **kwargs)]
    while pages[-1].next is not None:
        pages.append(
            conversations_page(persistence_dir, limit=limit, after=pages[-1].next, **kwargs)
        )
    return pages


# --- keyset pages ----------------------------------------------------------------------------


def test_pages_of_rows_with_equal_times_have_no_gaps_or_repeats(
    store: ConversationStore, persistence_dir: Path, clock: list[float]
) -> None:
    ids = [add(store, f"task {i}") for i in range(17)]  # all at the same instant
    clock[0] += 60
    newest = add(store, "the newest")
    pages = every_page(persistence_dir, 5)
    assert [len(p.rows) for p in pages] == [5, 5, 5, 3]
    listed = [row.id for page in pages for row in page.rows]
    # Newest first; ties in time go by id, descending: each row exactly once.
    assert listed == [newest, *sorted(ids, reverse=True)]
    assert pages[-1].next is None


def test_a_row_updated_between_pages_is_not_listed_twice(
    store: ConversationStore, persistence_dir: Path, clock: list[float]
) -> None:
    ids = []
    for i in range(6):
        clock[0] = NOW + i
        ids.append(add(store, f"task {i}"))
    first = conversations_page(persistence_dir, limit=3)
    assert [r.id for r in first.rows] == ids[:2:-1]
    clock[0] = NOW + 100
    EventLog(store, store.load(ids[0]).key).append(message("again"))  # type: ignore[union-attr]
    rest = conversations_page(persistence_dir, limit=3, after=first.next)
    # The moved row went to the top, before the cursor: the next page goes on where it was.
    assert [r.id for r in rest.rows] == [ids[2], ids[1]]


def test_pages_of_one_workspace_and_empty_conversations_left_out(
    store: ConversationStore, persistence_dir: Path
) -> None:
    here = [add(store, f"here {i}") for i in range(4)]
    add(store, "elsewhere", workspace="/ws/b")
    empty = add(store)
    assert {r.id for p in every_page(persistence_dir, 3, workspace="/ws/a") for r in p.rows} == set(
        here
    )
    kept = every_page(persistence_dir, 3, workspace="/ws/a", keep=empty)
    assert empty in {r.id for p in kept for r in p.rows}
    assert count_conversations(persistence_dir, workspace="/ws/a") == 4
    assert count_conversations(persistence_dir, workspace="/ws/a", keep=empty) == 5
    assert count_conversations(persistence_dir) == 5


# --- paged search ---------------------------------------------------------------------------


def test_search_pages_match_every_word_the_last_as_a_prefix(
    store: ConversationStore, persistence_dir: Path
) -> None:
    pie = add(store, "I baked a red apple pie")
    car = add(store, "My red car is fast")
    cards = add(store, "red cards for the team")
    titled = add(store, "nothing here", title="Red carpet")

    def found(query: str) -> set[str]:
        return {r.id for p in every_page(persistence_dir, 2, query=query) for r in p.rows}

    assert found("red") == {pie, car, cards, titled}
    assert found("red ca") == {car, cards, titled}
    assert found("RED Apple") == {pie}
    assert found("app") == {pie}
    assert found("red apple car") == set()
    assert found("carpet") == {titled}
    assert found('"; DROP TABLE x; --') == set()
    assert count_conversations(persistence_dir, query="red ca") == 3


def test_snippets_only_for_the_rows_of_the_page(
    store: ConversationStore, persistence_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [add(store, f"fix the parser, part {i}") for i in range(12)]
    asked: list[int] = []
    snippets = ConversationStore._snippets

    def spy(self: ConversationStore, match: str, keys: list[int]) -> dict[int, str]:
        asked.append(len(keys))
        return snippets(self, match, keys)

    monkeypatch.setattr(ConversationStore, "_snippets", spy)
    page = conversations_page(persistence_dir, query="parser", limit=4)
    assert asked == [4]
    assert [r.id for r in page.rows] == sorted(ids, reverse=True)[:4]  # one instant: by id
    assert set(page.snippets) == {r.id for r in page.rows}
    assert all("[parser]" in text for text in page.snippets.values())
    assert page.next is not None


def test_unindexed_messages_are_found_only_once_indexed(
    store: ConversationStore, persistence_dir: Path
) -> None:
    ids = [add(store, f"zanzibar {i}") for i in range(5)]
    assert conversations_page(persistence_dir, query="zanzibar", index_first=False).rows == []
    batches = 0
    while index_for_search(persistence_dir, conversations=2):
        batches += 1
    assert batches == 2  # 2 + 2 + 1
    page = conversations_page(persistence_dir, query="zanzibar", index_first=False)
    assert {r.id for r in page.rows} == set(ids)
    assert not index_for_search(persistence_dir)  # nothing new: nothing to do


# --- pages of events -----------------------------------------------------------------------


def test_events_page_reads_the_last_events_then_earlier_ones(
    store: ConversationStore, persistence_dir: Path
) -> None:
    cid = add(store, *[f"message {i}" for i in range(10)])
    last = events_page(persistence_dir, cid, 4)
    assert (last.start, last.total) == (6, 10)
    assert [e.llm_message.text for e in last.events] == [  # type: ignore[attr-defined]
        f"message {i}" for i in range(6, 10)
    ]
    earlier = events_page(persistence_dir, cid, 4, before=last.start)
    assert earlier.start == 2 and len(earlier.events) == 4
    first = events_page(persistence_dir, cid, 4, before=earlier.start)
    assert first.start == 0
    assert [e.llm_message.text for e in first.events] == ["message 0", "message 1"]  # type: ignore[attr-defined]


# --- query plans ----------------------------------------------------------------------------


def test_every_page_query_walks_an_index_and_sorts_nothing(
    store: ConversationStore, persistence_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(3):
        add(store, f"fix {i}", title=f"Fix {i}")
        add(store, f"fix {i}", workspace="/ws/b")
    plans: list[str] = []
    query = ConversationStore._query

    def explained(self: ConversationStore, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        if "FROM conversations c" in sql and "ORDER BY" in sql:
            rows = self._conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
            plans.append(" | ".join(row[3] for row in rows))
        return query(self, sql, params)

    monkeypatch.setattr(ConversationStore, "_query", explained)
    for kwargs in (
        {},
        {"workspace": "/ws/a"},
        {"query": "fix"},
        {"query": "fi", "workspace": "/ws/b"},
    ):
        page = conversations_page(persistence_dir, limit=2, **kwargs)  # type: ignore[arg-type]
        conversations_page(persistence_dir, limit=2, after=page.next, **kwargs)  # type: ignore[arg-type]
    assert len(plans) == 8
    for plan in plans:
        assert "USING INDEX conversations_by_" in plan, plan
        assert "TEMP B-TREE" not in plan, plan  # no sort of every row
        assert "SCAN message_search" not in plan or "VIRTUAL TABLE INDEX" in plan, plan


def test_the_indexes_are_added_to_an_existing_database(persistence_dir: Path) -> None:
    ConversationStore(persistence_dir).close()
    db = sqlite3.connect(persistence_dir / "conversations.db")
    db.execute("DROP INDEX conversations_by_update")
    db.commit()
    db.close()
    ConversationStore(persistence_dir).close()
    db = sqlite3.connect(persistence_dir / "conversations.db")
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    db.close()
    assert {"conversations_by_update", "conversations_by_workspace"} <= names


def test_indexing_takes_the_newest_conversations_first(
    store: ConversationStore, persistence_dir: Path, clock: list[float]
) -> None:
    ids = []
    for i in range(5):
        clock[0] = NOW + i
        ids.append(add(store, f"zanzibar {i}"))
    assert index_for_search(persistence_dir, conversations=2)
    page = conversations_page(persistence_dir, query="zanzibar", index_first=False)
    assert [r.id for r in page.rows] == [ids[4], ids[3]]
