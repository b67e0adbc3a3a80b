"""events/search paging and filters, on an event log of our own."""

from __future__ import annotations

from pathlib import Path

import pytest

from ohtui.sdk.conversation.event_store import EventLog
from ohtui.sdk.conversation.store import ConversationStore
from ohtui.sdk.event import MessageEvent, PauseEvent, TokenEvent
from ohtui.sdk.llm import Message, TextContent
from ohtui.server.event_search import EventQuery, QueryError, count, parse_limit, search
from ohtui.server.requests import EventSearchRequest


def message(text: str, source: str = "user") -> MessageEvent:
    return MessageEvent(
        source=source,  # type: ignore[arg-type]
        llm_message=Message(
            role="user" if source == "user" else "assistant", content=[TextContent(text=text)]
        ),
    )


@pytest.fixture
def events(tmp_path: Path) -> EventLog:
    store = ConversationStore(tmp_path)
    key = store.create("c" * 32, "{}", {})
    log = EventLog(store, key)
    for n in range(25):
        log.append(message(f"user {n}"))
        log.append(message(f"agent {n}", "agent"))
        if n % 10 == 0:
            log.append(PauseEvent())
    log.append(TokenEvent())  # not sent: never listed
    return log


def all_pages(events: EventLog, query: EventQuery, limit: int) -> list[list[str]]:
    pages, page_id = [], None
    while True:
        page = search(events, query, page_id, limit)
        pages.append([f["id"] for f in page["items"]])
        page_id = page["next_page_id"]
        if page_id is None:
            return pages


def test_pages_cover_everything_once_in_order(events: EventLog) -> None:
    sent = [e.id for e in events if e.kind != "TokenEvent"]
    pages = all_pages(events, EventQuery(), 7)
    assert [i for p in pages for i in p] == sent
    assert all(len(p) == 7 for p in pages[:-1]) and 0 < len(pages[-1]) <= 7
    backwards = all_pages(events, EventQuery(descending=True), 10)
    assert [i for p in backwards for i in p] == sent[::-1]


def test_filters_page_too(events: EventLog) -> None:
    agent = EventQuery(kind="MessageEvent", source="agent")
    ids = [i for p in all_pages(events, agent, 4) for i in p]
    assert len(ids) == 25 and count(events, agent) == 25
    assert count(events, EventQuery(kind="PauseEvent")) == 3
    assert count(events, EventQuery(body="AGENT 1")) == 11  # agent 1, agent 10..19
    assert count(events, EventQuery(kind="TokenEvent")) == 0


def test_unknown_page_id_is_an_empty_page(events: EventLog) -> None:
    assert search(events, EventQuery(), "nope", 10) == {"items": [], "next_page_id": None}


def test_bad_parameters() -> None:
    with pytest.raises(QueryError, match="limit must be from 1 to 100, not 0"):
        parse_limit("0")
    with pytest.raises(QueryError, match="timestamp__gte must be an ISO 8601 time"):
        EventSearchRequest.parse({"timestamp__gte": "yesterday"})
    with pytest.raises(QueryError, match="sort_order must be one of TIMESTAMP, TIMESTAMP_DESC"):
        EventSearchRequest.parse({"sort_order": "SIDEWAYS"})
    naive = EventSearchRequest.parse({"timestamp__gte": "2026-01-01T00:00:00"}).query()
    aware = EventSearchRequest.parse({"timestamp__gte": "2026-01-01T00:00:00+00:00"}).query()
    assert naive.gte is not None and aware.gte is not None and aware.gte.tzinfo is None
