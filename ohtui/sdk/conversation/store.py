"""ConversationStore: the one owner of persisted conversations, a SQLite database.

All conversations under one persistence base directory share `<base>/conversations.db`
(WAL mode, synchronous=FULL): every append is part of a committed transaction, so a `kill -9`
at any instant leaves nothing half-written and loses nothing committed (an EventLog commits
at once, or, for events written behind, a moment later with those after it); listing and
full-text search over thousands of conversations are single queries. Each conversation's
own directory `<base>/<id hex>/` holds only files tools chose to save (e.g. long outputs);
`<base>/leases/` holds the lease file of each conversation a process has open (lease.py).

Its parts: the file's schema and checks (store_schema.py), listing and search
(store_listing.py), the conversation tree's queries and the fork (store_tree.py); here,
opening the file, transactions, conversations, events and leases.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ohtui.sdk.conversation.exceptions import (
    ConversationNotFoundError,
    ConversationReadOnlyError,
    PersistenceError,
    StorageReadOnlyError,
)
from ohtui.sdk.conversation.lease import ConversationLease, LeaseHolder, holder_of
from ohtui.sdk.conversation.store_listing import SummaryQueries, fts_query
from ohtui.sdk.conversation.store_schema import (
    APPLICATION_ID,
    LOCK_TIMEOUT_SECONDS,
    SCHEMA_VERSION,
    check_readable,
    db_errors,
    is_current,
    key_of,
    make_schema,
    summary_values,
)
from ohtui.sdk.conversation.store_tree import TreeQueries
from ohtui.sdk.utils.valid_text import valid_text

logger = logging.getLogger(__name__)

DB_NAME = "conversations.db"
LEASES_DIR = "leases"
LEASE_SUFFIX = ".lock"

__all__ = [
    "APPLICATION_ID",
    "DB_NAME",
    "LEASES_DIR",
    "LEASE_SUFFIX",
    "LOCK_TIMEOUT_SECONDS",
    "SCHEMA_VERSION",
    "ConversationStore",
    "StoredConversation",
    "StoredEvent",
    "fts_query",
]


@dataclass(frozen=True, slots=True)
class StoredConversation:
    """A saved conversation's row: its key, state JSON, number of events and HEAD (the
    leaf of its tree; None: its newest event, or an empty HEAD)."""

    key: int
    state_json: str
    event_count: int
    leaf: str | None = None


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One event as it is appended: its id, kind, JSON, and what search and the summary
    take from it."""

    id: str
    kind: str
    data: str
    search_text: str | None = None
    first_user_message: str | None = None
    parent: int | None = None
    """The index of its parent in the tree; -1: a root; None: the event before (a root at 0)."""
    head: bool = True
    """Whether it becomes the conversation's HEAD (all but state-sync artifacts do)."""


class ConversationStore(SummaryQueries, TreeQueries):
    """The SQLite database of all conversations under one base directory. Thread-safe.

    A read-only store reads as any other and refuses every write (ConversationReadOnlyError).
    """

    def __init__(self, base_dir: str | Path, read_only: bool = False) -> None:
        self.base_dir = Path(base_dir).expanduser()
        self.path = self.base_dir / DB_NAME
        self._refusal = (
            f"{self} is open read-only here: nothing can be saved through it."
            if read_only
            else None
        )
        self._leases = self.base_dir / LEASES_DIR
        self._lock = threading.RLock()
        self._conn = self._connect()

    def __str__(self) -> str:
        return f"the conversation database '{self.path}'"

    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            return self._connect_read_only()
        try:
            self.base_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if self.base_dir.is_dir():  # it exists, but cannot be written
                raise self._read_only_error(exc.strerror or str(exc)) from exc
            raise PersistenceError(
                f"Cannot store conversations in '{self.base_dir}': {exc.strerror or exc}. "
                "Choose another persistence directory or fix its permissions."
            ) from exc
        if not self.base_dir.is_dir():
            raise PersistenceError(f"'{self.base_dir}' is not a directory; conversations need one.")
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=LOCK_TIMEOUT_SECONDS,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            if not os.access(self.base_dir, os.W_OK):
                raise self._read_only_error(str(exc)) from exc
            raise PersistenceError(
                f"Cannot open '{self.path}': {exc}. Check the directory's permissions."
            ) from exc
        try:
            self._check_or_create(conn)
        except BaseException as exc:
            conn.close()
            if isinstance(exc, PersistenceError) and not os.access(self.base_dir, os.W_OK):
                raise self._read_only_error(str(exc)) from exc
            raise
        return conn

    def _connect_read_only(self) -> sqlite3.Connection:
        """Open the database for reading only, even in a folder nobody may write: SQLite
        then cannot make the files a WAL database shares between readers, so the file is
        read as it is (`immutable`), which is true there (nothing can change it)."""
        if not self.path.is_file():
            raise ConversationNotFoundError(
                f"No saved conversations in '{self.base_dir}' to open read-only."
            )
        uri = f"file:{quote(str(self.path))}?mode=ro"
        last: sqlite3.Error | None = None
        for options in ("", "&immutable=1"):
            conn = None
            try:
                conn = sqlite3.connect(
                    uri + options,
                    uri=True,
                    timeout=LOCK_TIMEOUT_SECONDS,
                    isolation_level=None,
                    check_same_thread=False,
                )
                check_readable(conn, self.path)
                return conn
            except sqlite3.Error as exc:
                if conn is not None:
                    conn.close()
                last = exc
        raise PersistenceError(f"Cannot read '{self.path}': {last}.")

    def _read_only_error(self, detail: str) -> StorageReadOnlyError:
        logger.info("%s cannot be written: %s", self.base_dir, detail)
        try:
            on_read_only_fs = bool(os.statvfs(self.base_dir).f_flag & os.ST_RDONLY)
        except OSError:
            on_read_only_fs = False
        reason = "a read-only file system" if on_read_only_fs else "no permission to write it"
        return StorageReadOnlyError(
            f"The conversations folder '{self.base_dir}' cannot be written ({reason}).",
            self.base_dir,
        )

    def _check_or_create(self, conn: sqlite3.Connection) -> None:
        """Refuse files that are not ours; create the schema in a new file.

        The check and the creation happen in one write transaction, so two processes
        opening a new directory at once cannot see each other's half-made schema. A file
        whose schema is whole already is only read: opening it never waits for a writer
        (a preview read while the search index fills would wait out its transactions).
        """
        if not is_current(conn):
            make_schema(conn, self.path, self._open_error)
        self._enable_wal(conn)
        conn.execute("PRAGMA synchronous=FULL")

    def _enable_wal(self, conn: sqlite3.Connection) -> None:
        # Switching the journal mode ignores the busy timeout, so wait for readers here.
        deadline = time.monotonic() + LOCK_TIMEOUT_SECONDS
        while True:
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise self._open_error(exc) from exc
                time.sleep(0.02)

    @property
    def read_only(self) -> bool:
        """Whether this store refuses every write."""
        return self._refusal is not None

    def refuse_writes(self, reason: str) -> None:
        """Refuse every write from now on with ConversationReadOnlyError(`reason`).

        A write under way finishes first: once this returns, nothing more is written.
        """
        with self._lock:
            self._refusal = reason

    def _open_error(self, exc: sqlite3.OperationalError) -> PersistenceError | TimeoutError:
        text = str(exc)
        if "readonly" in text or "read-only" in text:
            return self._read_only_error(f"'{self.path}' is read-only")
        if "locked" in text or "busy" in text:
            return TimeoutError(f"{self} stayed locked for {LOCK_TIMEOUT_SECONDS:g} s")
        return PersistenceError(f"Cannot prepare '{self.path}': {exc}")

    def check_writable(self) -> None:
        """Raise ConversationReadOnlyError if this store refuses writes (see refuse_writes)."""
        refusal = self._refusal
        if refusal is not None:
            raise ConversationReadOnlyError(refusal)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if not self._lock.acquire(timeout=LOCK_TIMEOUT_SECONDS):
            raise TimeoutError(f"{self} stayed locked for {LOCK_TIMEOUT_SECONDS:g} s")
        try:
            if self._refusal is not None:  # checked under the lock: see refuse_writes
                raise ConversationReadOnlyError(self._refusal)
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
        finally:
            self._lock.release()

    def _clock(self) -> float:
        return _now()

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    # --- conversations -------------------------------------------------------------------

    @db_errors
    def load(self, conversation_id: str) -> StoredConversation | None:
        """The saved row of a conversation, or None if it was never saved."""
        rows = self._query(
            "SELECT c.key, s.state, c.event_count, c.leaf FROM conversations c "
            "JOIN states s ON s.conversation = c.key WHERE c.id = ?",
            (conversation_id,),
        )
        return StoredConversation(*rows[0]) if rows else None

    @db_errors
    def create(self, conversation_id: str, state_json: str, summary: dict[str, Any]) -> int:
        """Save a new conversation; returns its key."""
        now = _now()
        with self._transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO conversations (id, created_at, updated_at, title, status, "
                "workspace, model) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (conversation_id, now, now, *summary_values(summary)),
            )
            key = int(cursor.lastrowid or 0)
            conn.execute(
                "INSERT INTO states (conversation, state) VALUES (?, ?)", (key, state_json)
            )
            return key

    @db_errors
    def save_state(
        self, key: int, state_json: str, summary: dict[str, Any], leaf: str | None
    ) -> None:
        """Replace a conversation's saved state, its summary columns and its HEAD (`leaf`;
        None: an empty HEAD, told apart by the state, or a log older than the tree), in one
        transaction."""
        with self._transaction() as conn:
            self._write_state(conn, key, state_json, summary)
            conn.execute("UPDATE conversations SET leaf = ? WHERE key = ?", (leaf, key))

    @staticmethod
    def _write_state(
        conn: sqlite3.Connection, key: int, state_json: str, summary: dict[str, Any]
    ) -> None:
        conn.execute(
            "UPDATE conversations SET title = ?, status = ?, workspace = ?, model = ?, "
            "updated_at = ? WHERE key = ?",
            (*summary_values(summary), _now(), key),
        )
        conn.execute("UPDATE states SET state = ? WHERE conversation = ?", (state_json, key))

    @db_errors
    def delete(self, conversation_id: str) -> bool:
        """Delete a conversation and its events; False if there was none."""
        with self._transaction() as conn:
            key = key_of(conn, conversation_id)
            if key is None:
                return False
            conn.execute("DELETE FROM events WHERE conversation = ?", (key,))
            conn.execute(
                "DELETE FROM message_search WHERE rowid BETWEEN ? AND ?",
                (key << 32, (key << 32) | 0xFFFFFFFF),
            )
            conn.execute("DELETE FROM states WHERE conversation = ?", (key,))
            conn.execute("DELETE FROM conversations WHERE key = ?", (key,))
            return True

    @db_errors
    def rename(self, conversation_id: str, title: str) -> bool:
        """Set a conversation's title in its summary and saved state."""
        title = valid_text(title)  # SQLite cannot store a lone surrogate
        with self._transaction() as conn:
            key = key_of(conn, conversation_id)
            if key is None:
                return False
            conn.execute("UPDATE conversations SET title = ? WHERE key = ?", (title, key))
            conn.execute(
                "UPDATE states SET state = json_set(state, '$.title', ?) WHERE conversation = ?",
                (title, key),
            )
            return True

    # --- events --------------------------------------------------------------------------

    def append(
        self,
        key: int,
        event_id: str,
        kind: str,
        data: str,
        search_text: str | None = None,
        first_user_message: str | None = None,
        state: tuple[str, dict[str, Any]] | None = None,
    ) -> int:
        """Durably append one event; returns its index. ValueError if the id exists.

        `state` (JSON, summary), if given, is saved in the same transaction.
        """
        row = StoredEvent(event_id, kind, data, search_text, first_user_message)
        return self.append_many(key, [row], state)[0]

    @db_errors
    def append_many(
        self,
        key: int,
        events: Sequence[StoredEvent],
        state: tuple[str, dict[str, Any]] | None = None,
    ) -> list[int]:
        """Durably append events, in order, in one transaction (one disk sync); returns
        their indexes. ValueError if an id exists (then none is appended).

        `state` (JSON, summary), if given, is saved in the same transaction.
        """
        indexes = []
        with self._transaction() as conn:
            for event in events:
                try:
                    row = conn.execute(
                        "INSERT INTO events (conversation, seq, id, kind, data, search_text, "
                        "parent) SELECT ?, event_count, ?, ?, ?, ?, ? FROM conversations "
                        "WHERE key = ? RETURNING seq",
                        (
                            key,
                            event.id,
                            event.kind,
                            event.data,
                            event.search_text,
                            event.parent,
                            key,
                        ),
                    ).fetchone()
                except sqlite3.IntegrityError as exc:
                    raise ValueError(
                        f"an event with id '{event.id}' is already in the log"
                    ) from exc
                if row is None:
                    raise PersistenceError(f"conversation key {key} is not in {self}")
                conn.execute(
                    "UPDATE conversations SET event_count = event_count + 1, updated_at = ?, "
                    "first_user_message = coalesce(first_user_message, ?), "
                    "leaf = CASE WHEN ? THEN ? ELSE leaf END WHERE key = ?",
                    (_now(), event.first_user_message, event.head, event.id, key),
                )
                indexes.append(int(row[0]))
            if state is not None:
                self._write_state(conn, key, *state)
        return indexes

    @db_errors
    def event_count(self, key: int) -> int:
        """How many events a conversation has."""
        rows = self._query("SELECT event_count FROM conversations WHERE key = ?", (key,))
        return int(rows[0][0]) if rows else 0

    @db_errors
    def read_events(self, key: int, start: int, stop: int) -> list[tuple[int, str]]:
        """(index, JSON) of the events with start <= index < stop."""
        return self._query(
            "SELECT seq, data FROM events WHERE conversation = ? AND seq >= ? AND seq < ? "
            "ORDER BY seq",
            (key, start, stop),
        )

    @db_errors
    def event_index(self, key: int, event_id: str) -> int | None:
        """The index of an event by id, or None."""
        rows = self._query(
            "SELECT seq FROM events WHERE conversation = ? AND id = ?", (key, event_id)
        )
        return int(rows[0][0]) if rows else None

    @db_errors
    def event_ids(self, key: int, start: int, stop: int) -> list[str]:
        """The ids of events start <= index < stop, in order."""
        return [
            r[0]
            for r in self._query(
                "SELECT id FROM events WHERE conversation = ? AND seq >= ? AND seq < ? "
                "ORDER BY seq",
                (key, start, stop),
            )
        ]

    def _index_pending(self) -> None:
        """Add the searchable text of events appended since the last search to the index."""
        while self.index_pending():
            pass

    @db_errors
    def index_pending(self, conversations: int | None = None) -> bool:
        """Index the events appended since the last search of at most `conversations`
        conversations (None: all) in one transaction; returns whether any are left.

        A few hundred at a time keep each transaction (which holds up appends) short.
        The most recently updated conversations are indexed first.
        """
        # Newest first: a search made before the rest is indexed finds what it lists first.
        pending = (
            "SELECT key FROM conversations WHERE indexed_count < event_count "
            "ORDER BY updated_at DESC LIMIT ?"
        )
        limit = -1 if conversations is None else conversations
        if not self._query(pending, (1,)):
            return False  # nothing new: no write transaction, no fsync
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO message_search (rowid, text) "
                "SELECT (e.conversation << 32) | e.seq, e.search_text FROM conversations c "
                "JOIN events e ON e.conversation = c.key AND e.seq >= c.indexed_count "
                f"WHERE c.key IN ({pending}) AND e.search_text IS NOT NULL",
                (limit,),
            )
            conn.execute(
                f"UPDATE conversations SET indexed_count = event_count WHERE key IN ({pending})",
                (limit,),
            )
        return conversations is not None and bool(self._query(pending, (1,)))

    # --- leases: which process runs which conversation ----------------------------------

    def lease(self, conversation_id: str, take_over: bool = False) -> ConversationLease:
        """Take the conversation for this process until the lease is released.

        ConversationLockedError names the holder when another open (in any process) has it;
        with `take_over`, a holder in this process that allows it hands it over instead.
        """
        if not re.fullmatch(r"[0-9a-f]{32}", conversation_id):
            raise ValueError(f"'{conversation_id}' is not a conversation id (32 hex digits)")
        return ConversationLease.take(
            self._leases / f"{conversation_id}{LEASE_SUFFIX}", conversation_id, take_over
        )

    def holders(self) -> dict[str, LeaseHolder]:
        """The conversations open somewhere now, by id, with who has each open."""
        try:
            names = os.listdir(self._leases)
        except FileNotFoundError:
            return {}
        held: dict[str, LeaseHolder] = {}
        for name in names:
            if name.endswith(LEASE_SUFFIX):
                holder = holder_of(self._leases / name)
                if holder is not None:
                    held[name.removesuffix(LEASE_SUFFIX)] = holder
        return held

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            try:
                self._conn.close()
            except sqlite3.Error:
                logger.debug("closing %s failed", self, exc_info=True)


def _now() -> float:
    """The store's clock (a seam tests fix)."""
    return time.time()
