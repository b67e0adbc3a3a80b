"""The conversation store's listing and search queries: summaries, pages, id prefixes and
full-text search over every saved conversation (`SummaryQueries`, a part of ConversationStore).
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ohtui.sdk.conversation.lease import LeaseHolder
from ohtui.sdk.conversation.store_schema import db_errors
from ohtui.sdk.conversation.summary import (
    ConversationSummary,
    PageCursor,
    SearchHit,
    SummaryPage,
)

logger = logging.getLogger(__name__)

_PREFIX_WORDS = 16
"""A search's last word, as a prefix, is looked up as up to this many whole words."""


class SummaryQueries(ABC):
    """Listing and search over the `conversations` table and the `message_search` index."""

    _lock: threading.RLock
    _conn: sqlite3.Connection

    @abstractmethod
    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """The rows a read-only statement returns, under the store's lock."""

    @abstractmethod
    def holders(self) -> dict[str, LeaseHolder]:
        """The conversations open somewhere now, by id, with who has each open."""

    @abstractmethod
    def _index_pending(self) -> None:
        """Add the searchable text of events appended since the last search to the index."""

    @property
    @abstractmethod
    def read_only(self) -> bool:
        """Whether the store refuses every write."""

    _SUMMARY_COLUMNS = (
        "c.id, c.title, c.first_user_message, c.created_at, c.updated_at, c.event_count, "
        "c.status, c.workspace, c.model, c.forked_from, c.forked_at"
    )
    _SUMMARY_WIDTH = 11
    """How many columns `_SUMMARY_COLUMNS` selects."""

    @db_errors
    def list_summaries(
        self, workspace: str | None = None, limit: int | None = None, offset: int = 0
    ) -> list[ConversationSummary]:
        """Summaries, most recently updated first, optionally of one workspace only."""
        where, params = ("WHERE c.workspace = ?", (workspace,)) if workspace else ("", ())
        rows = self._query(
            f"SELECT {self._SUMMARY_COLUMNS} FROM conversations c {where} "
            "ORDER BY c.updated_at DESC LIMIT ? OFFSET ?",
            (*params, -1 if limit is None else limit, offset),
        )
        held = self.holders()
        return [_summary(r, held) for r in rows]

    @db_errors
    def find(self, id_prefix: str) -> list[ConversationSummary]:
        """Summaries of conversations whose id starts with `id_prefix` (dashes ignored)."""
        prefix = id_prefix.replace("-", "").lower()
        if not re.fullmatch(r"[0-9a-f]+", prefix):
            return []
        rows = self._query(
            f"SELECT {self._SUMMARY_COLUMNS} FROM conversations c WHERE c.id >= ? AND c.id < ? "
            "ORDER BY c.updated_at DESC",
            (prefix, prefix + "g"),
        )
        held = self.holders()
        return [_summary(r, held) for r in rows]

    @db_errors
    def search(self, query: str, workspace: str | None = None, limit: int = 50) -> list[SearchHit]:
        """Conversations whose messages or title match every word of `query`, best first."""
        match = fts_query(query)
        if not match:
            return []
        self._index_pending()
        ws_clause, ws_params = ("AND c.workspace = ?", (workspace,)) if workspace else ("", ())
        rows = self._query(
            f"SELECT {self._SUMMARY_COLUMNS}, "
            "snippet(message_search, 0, '[', ']', '…', 12) FROM message_search m "
            "JOIN conversations c ON c.key = (m.rowid >> 32) "
            f"WHERE message_search MATCH ? {ws_clause} ORDER BY m.rank",
            (match, *ws_params),
        )
        held = self.holders()
        hits: dict[str, SearchHit] = {}
        for row in rows:
            summary = _summary(row[: self._SUMMARY_WIDTH], held)
            hits.setdefault(summary.id, SearchHit(summary, row[self._SUMMARY_WIDTH]))
        words = query.split()
        title_clause = " AND ".join("c.title LIKE ? ESCAPE '\\'" for _ in words)
        for row in self._query(
            f"SELECT {self._SUMMARY_COLUMNS} FROM conversations c WHERE {title_clause} {ws_clause}",
            (*(f"%{_like_escape(w)}%" for w in words), *ws_params),
        ):
            hits.setdefault(row[0], SearchHit(_summary(row, held), row[1] or ""))
        ordered = sorted(hits.values(), key=lambda h: h.summary.updated_at, reverse=True)
        return ordered[:limit]

    @db_errors
    def summaries_page(
        self,
        *,
        workspace: str | None = None,
        query: str = "",
        after: PageCursor | None = None,
        limit: int = 50,
        keep: str | None = None,
        index_first: bool = True,
    ) -> SummaryPage:
        """A page of summaries, most recently updated first, after the cursor `after`.

        Conversations without events are left out, except `keep`. With a `query`, only those
        whose title or messages match every word (as `search`), with a snippet each.
        `index_first`: index the messages saved since the last search before searching
        (else events not indexed yet are not found).
        """
        where, params, match = self._page_filter(workspace, query, after, keep, index_first)
        rows = self._query(
            f"SELECT {self._SUMMARY_COLUMNS}, c.key FROM conversations c "
            f"WHERE {where} ORDER BY c.updated_at DESC, c.id DESC LIMIT ?",
            (*params, limit + 1),
        )
        more = len(rows) > limit
        rows = rows[:limit]
        held = self.holders()
        width = self._SUMMARY_WIDTH
        summaries = [_summary(r[:width], held) for r in rows]
        snippets = self._snippets(match, [r[width] for r in rows]) if match else {}
        by_key = {r[width]: r[0] for r in rows}
        last = rows[-1] if rows else None
        return SummaryPage(
            rows=summaries,
            snippets={by_key[key]: text for key, text in snippets.items()},
            next=(float(last[4]), str(last[0])) if more and last is not None else None,
        )

    @db_errors
    def count_summaries(
        self,
        *,
        workspace: str | None = None,
        query: str = "",
        keep: str | None = None,
        index_first: bool = True,
    ) -> int:
        """How many rows all pages of `summaries_page` with these arguments hold."""
        where, params, _ = self._page_filter(workspace, query, None, keep, index_first)
        return int(
            self._query(f"SELECT count(*) FROM conversations c WHERE {where}", tuple(params))[0][0]
        )

    def _page_filter(
        self,
        workspace: str | None,
        query: str,
        after: PageCursor | None,
        keep: str | None,
        index_first: bool,
    ) -> tuple[str, list[Any], str]:
        """(WHERE clause, its parameters, the FTS query) of a page of summaries."""
        clauses = ["(c.event_count > 0 OR c.id = ?)"]
        params: list[Any] = [keep]
        if workspace:
            clauses.append("c.workspace = ?")
            params.append(workspace)
        if after is not None:
            clauses.append("(c.updated_at, c.id) < (?, ?)")
            params += after
        match = ""
        if query.strip():
            if index_first and not self.read_only and fts_query(query):
                self._index_pending()
            match = fts_query(query, self._prefix_words)
            words = query.split()
            # The matching keys are read from the index once per query (a temporary b-tree),
            # then the newest rows are walked on conversations_by_update until the page is full.
            titles = " AND ".join("c.title LIKE ? ESCAPE '\\'" for _ in words)
            found = "c.key IN (SELECT rowid >> 32 FROM message_search WHERE message_search MATCH ?)"
            clauses.append(f"({found} OR ({titles}))" if match else f"({titles})")
            params += ([match] if match else []) + [f"%{_like_escape(w)}%" for w in words]
        return " AND ".join(clauses), params, match

    def _snippets(self, match: str, keys: list[int]) -> dict[int, str]:
        """The first matching passage of each conversation's messages, by key (if any)."""
        # Not the best-ranked one: ranking reads every matching message of the whole index
        # (word frequencies) on each call, ~4 ms at 60,000 messages; the first is found by rowid.
        snippets: dict[int, str] = {}
        for key in keys:
            rows = self._query(
                "SELECT snippet(message_search, 0, '[', ']', '…', 12) FROM message_search "
                "WHERE message_search MATCH ? AND rowid BETWEEN ? AND ? LIMIT 1",
                (match, key << 32, (key << 32) | 0xFFFFFFFF),
            )
            if rows:
                snippets[key] = rows[0][0]
        return snippets

    def _prefix_words(self, prefix: str) -> list[str] | None:
        """The indexed words starting with `prefix` (None: more than a few, or unknown)."""
        with self._lock:
            try:
                self._conn.execute(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.message_words "
                    "USING fts5vocab(main, 'message_search', 'row')"
                )
                rows = self._conn.execute(
                    "SELECT term FROM temp.message_words WHERE term >= ? AND term < ? LIMIT ?",
                    (prefix.lower(), prefix.lower() + "\U0010ffff", _PREFIX_WORDS + 1),
                ).fetchall()
            except sqlite3.Error:
                logger.debug("no word list of %s", self, exc_info=True)
                return None
        return [r[0] for r in rows] if 0 < len(rows) <= _PREFIX_WORDS else None


def fts_query(text: str, prefix_words: Callable[[str], list[str] | None] | None = None) -> str:
    """An FTS5 query matching every word of `text`, the last one as a prefix.

    `prefix_words` may name the words the last one stands for (None: use a prefix query).
    """
    words = re.findall(r"\w+", text, flags=re.UNICODE)
    if not words:
        return ""
    quoted = [f'"{w}"' for w in words]
    expanded = prefix_words(words[-1]) if prefix_words is not None else None
    if not expanded:
        quoted[-1] += "*"
        return " ".join(quoted)
    quoted[-1] = "(" + " OR ".join(f'"{w}"' for w in expanded) + ")"
    return " AND ".join(quoted)  # FTS5 takes no implicit AND before a parenthesis


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _summary(row: tuple[Any, ...], held: dict[str, LeaseHolder]) -> ConversationSummary:
    return ConversationSummary(
        id=row[0],
        title=row[1],
        first_user_message=row[2],
        created_at=datetime.fromtimestamp(row[3], UTC),
        updated_at=datetime.fromtimestamp(row[4], UTC),
        event_count=int(row[5]),
        status=row[6],
        workspace=row[7],
        model=row[8],
        held_by=held.get(row[0]),
        forked_from=row[9],
        forked_at=row[10],
    )
