"""The conversation store's reads and writes of the conversation tree: the fork (a copy of a
conversation's events made inside the database), where the tree branches, and the user's
messages and the events' kinds read from the rows without parsing an event (`TreeQueries`, a
part of ConversationStore).
"""

from __future__ import annotations

import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from ohtui.sdk.conversation.exceptions import ConversationIdTakenError
from ohtui.sdk.conversation.store_schema import PARENT_JUMP, db_errors, key_of, summary_values


class TreeQueries(ABC):
    """The tree's queries over the `events` and `conversations` tables."""

    _lock: threading.RLock

    @abstractmethod
    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """The rows a read-only statement returns, under the store's lock."""

    @abstractmethod
    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """A write transaction, committed when the block ends without an exception."""

    @abstractmethod
    def _clock(self) -> float:
        """The store's time (Unix seconds) for the rows it writes."""

    @db_errors
    def fork(
        self,
        source_key: int,
        conversation_id: str,
        state_json: str,
        summary: dict[str, Any],
        indexes: Sequence[int] | None,
        leaf: str | None,
        origin: tuple[str, str | None],
    ) -> int:
        """Save a new conversation `conversation_id` holding a copy of the source's events,
        in one transaction; returns its key. Without `indexes` every event is copied as it
        is (the tree too); with them, those events (a branch, root first) become a linear
        log. `origin` is the source's id and the event forked at (None: its HEAD).
        ConversationIdTakenError (a ValueError) when `conversation_id` is already saved."""
        now = self._clock()
        with self._transaction() as conn:
            if key_of(conn, conversation_id) is not None:
                raise ConversationIdTakenError(f"conversation {conversation_id} already exists")
            key = int(
                conn.execute(
                    "INSERT INTO conversations (id, created_at, updated_at, title, status, "
                    "workspace, model, leaf, forked_from, forked_at, first_user_message) "
                    "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, first_user_message "
                    "FROM conversations WHERE key = ?",
                    (
                        conversation_id,
                        now,
                        now,
                        *summary_values(summary),
                        leaf,
                        *origin,
                        source_key,
                    ),
                ).lastrowid
                or 0
            )
            conn.execute(
                "INSERT INTO states (conversation, state) VALUES (?, ?)", (key, state_json)
            )
            if indexes is None:
                conn.execute(
                    "INSERT INTO events (conversation, seq, id, kind, data, search_text, "
                    "parent) SELECT ?, seq, id, kind, data, search_text, parent FROM events "
                    "WHERE conversation = ?",
                    (key, source_key),
                )
            else:  # a branch is linear: each event's parent is the one before (NULL)
                conn.executemany(
                    "INSERT INTO events (conversation, seq, id, kind, data, search_text) "
                    "SELECT ?, ?, id, kind, data, search_text FROM events "
                    "WHERE conversation = ? AND seq = ?",
                    ((key, seq, source_key, index) for seq, index in enumerate(indexes)),
                )
            count = conn.execute(
                "SELECT count(*) FROM events WHERE conversation = ?", (key,)
            ).fetchone()[0]
            conn.execute("UPDATE conversations SET event_count = ? WHERE key = ?", (count, key))
            return key

    @db_errors
    def fork_origin(self, conversation_id: str) -> tuple[str, str | None] | None:
        """The conversation (and event) this one was forked from; None if not a fork."""
        rows = self._query(
            "SELECT forked_from, forked_at FROM conversations WHERE id = ?", (conversation_id,)
        )
        return (rows[0][0], rows[0][1]) if rows and rows[0][0] else None

    @db_errors
    def parent_jumps(self, key: int) -> list[tuple[int, int]]:
        """(index, parent index) of the events whose parent is not the event before them
        (-1: a root), ascending: the few places a conversation's tree branches."""
        return [
            (int(row[0]), int(row[1]))
            for row in self._query(
                "SELECT seq, parent FROM events WHERE conversation = ? AND "
                f"{PARENT_JUMP} ORDER BY seq",
                (key,),
            )
        ]

    @db_errors
    def kind_indexes(self, key: int, kinds: tuple[str, ...]) -> list[int]:
        """The indexes of a conversation's events of these kinds, in order (from the rows'
        kind column, no event parsed)."""
        marks = ", ".join("?" for _ in kinds)
        return [
            row[0]
            for row in self._query(
                f"SELECT seq FROM events WHERE conversation = ? AND kind IN ({marks}) ORDER BY seq",
                (key, *kinds),
            )
        ]

    @db_errors
    def user_messages(self, key: int) -> list[tuple[int, str, str, str]]:
        """(index, id, timestamp, text) of each of the user's messages, in order: read out
        of the rows' JSON by SQLite, no event parsed (the text as Message.text joins it)."""
        return [
            (row[0], row[1], row[2] or "", row[3] or "")
            for row in self._query(
                "SELECT e.seq, e.id, json_extract(e.data, '$.timestamp'), "
                "(SELECT group_concat(json_extract(c.value, '$.text'), '') "
                "FROM json_each(e.data, '$.llm_message.content') AS c "
                "WHERE json_extract(c.value, '$.type') = 'text') "
                "FROM events AS e WHERE e.conversation = ? AND e.kind = 'MessageEvent' "
                "AND json_extract(e.data, '$.source') = 'user' ORDER BY e.seq",
                (key,),
            )
        ]

    @db_errors
    def user_message_indexes(self, key: int) -> list[int]:
        """The indexes of the user's messages in a conversation's log, in order (read from
        the rows, no event parsed)."""
        return [
            row[0]
            for row in self._query(
                "SELECT seq FROM events WHERE conversation = ? AND kind = 'MessageEvent' "
                "AND json_extract(data, '$.source') = 'user' ORDER BY seq",
                (key,),
            )
        ]

    @db_errors
    def event_shape(self, key: int) -> list[tuple[int | None, str]]:
        """(stored parent, kind) of each event, in order: the shape of a conversation's tree
        in one read of its rows (no event parsed)."""
        return [
            (row[0], row[1])
            for row in self._query(
                "SELECT parent, kind FROM events WHERE conversation = ? ORDER BY seq", (key,)
            )
        ]

    @db_errors
    def user_messages_among(self, key: int, indexes: Sequence[int]) -> list[int]:
        """Which of these events of a conversation are the user's messages."""
        if not indexes:
            return []
        marks = ", ".join("?" * len(indexes))
        return [
            row[0]
            for row in self._query(
                f"SELECT seq FROM events WHERE conversation = ? AND seq IN ({marks}) "
                "AND kind = 'MessageEvent' AND json_extract(data, '$.source') = 'user'",
                (key, *indexes),
            )
        ]
