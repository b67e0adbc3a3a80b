"""ConversationStore: the one owner of persisted conversations, a SQLite database.

All conversations under one persistence base directory share `<base>/conversations.db`
(WAL mode, synchronous=FULL): every append is part of a committed transaction, so a `kill -9`
at any instant leaves nothing half-written and loses nothing committed (an EventLog commits
at once, or, for events written behind, a moment later with those after it); listing and
full-text search over thousands of conversations are single queries. Each conversation's
own directory `<base>/<id hex>/` holds only files tools chose to save (e.g. long outputs);
`<base>/leases/` holds the lease file of each conversation a process has open (lease.py).
"""

from __future__ import annotations

import functools
import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar
from urllib.parse import quote

from ohtui.sdk.conversation.exceptions import (
    ConversationNotFoundError,
    ConversationReadOnlyError,
    PersistenceError,
    StorageReadOnlyError,
)
from ohtui.sdk.conversation.lease import ConversationLease, LeaseHolder, holder_of
from ohtui.sdk.conversation.summary import (
    ConversationSummary,
    PageCursor,
    SearchHit,
    SummaryPage,
)
from ohtui.sdk.utils.valid_text import valid_data, valid_text

logger = logging.getLogger(__name__)

DB_NAME = "conversations.db"
LEASES_DIR = "leases"
LEASE_SUFFIX = ".lock"
APPLICATION_ID = 0x6F687475  # "ohtu"
SCHEMA_VERSION = 1
LOCK_TIMEOUT_SECONDS = 30.0
_PREFIX_WORDS = 16
"""A search's last word, as a prefix, is looked up as up to this many whole words."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    key INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL,  -- Unix time
    updated_at REAL NOT NULL,
    event_count INTEGER NOT NULL DEFAULT 0,
    indexed_count INTEGER NOT NULL DEFAULT 0,  -- events already in message_search
    title TEXT,
    first_user_message TEXT,
    status TEXT,
    workspace TEXT,
    model TEXT
);
-- Apart from the summary row, which every append updates: rewriting a row rewrites all of it.
CREATE TABLE IF NOT EXISTS states (
    conversation INTEGER PRIMARY KEY,
    state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    conversation INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL,
    search_text TEXT,  -- what full-text search should find in this event, if anything
    PRIMARY KEY (conversation, seq)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS events_by_id ON events(conversation, id);
-- Filled lazily, before each search: indexing on every append would double its cost.
-- rowid = conversation key << 32 | event index: no extra columns to store or index.
CREATE VIRTUAL TABLE IF NOT EXISTS message_search USING fts5(text, tokenize = 'unicode61');
"""

# Made on every writable open (an index is no change of schema: older versions ignore it).
# Listings page newest first by keyset on (updated_at, id), of all workspaces or of one.
_INDEXES = """
CREATE INDEX IF NOT EXISTS conversations_by_update ON conversations(updated_at, id);
CREATE INDEX IF NOT EXISTS conversations_by_workspace ON conversations(workspace, updated_at, id);
"""
_INDEX_NAMES = tuple(re.findall(r"CREATE INDEX IF NOT EXISTS (\w+)", _INDEXES))

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class StoredConversation:
    """A saved conversation's row: its key, state JSON and number of events."""

    key: int
    state_json: str
    event_count: int


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One event as it is appended: its id, kind, JSON, and what search and the summary
    take from it."""

    id: str
    kind: str
    data: str
    search_text: str | None = None
    first_user_message: str | None = None


def _db_errors(method: Callable[P, R]) -> Callable[P, R]:
    """Translate SQLite failures into TimeoutError (locked) or PersistenceError (corrupt)."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except sqlite3.OperationalError as exc:
            store = args[0]
            if "locked" in str(exc) or "busy" in str(exc):
                raise TimeoutError(
                    f"{store} stayed locked by another writer for {LOCK_TIMEOUT_SECONDS:g} s"
                ) from exc
            raise PersistenceError(f"{store}: {exc}") from exc
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as exc:
            raise PersistenceError(
                f"{args[0]} is damaged ({exc}). Nothing was changed; move it away to start afresh."
            ) from exc

    return wrapper


class ConversationStore:
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
                self._check_readable(conn)
                return conn
            except sqlite3.Error as exc:
                if conn is not None:
                    conn.close()
                last = exc
        raise PersistenceError(f"Cannot read '{self.path}': {last}.")

    def _check_readable(self, conn: sqlite3.Connection) -> None:
        """Refuse a file that is not ours, or not of this schema (it cannot be upgraded)."""
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if app_id != APPLICATION_ID:
            raise PersistenceError(f"'{self.path}' is not an ohtui conversation database.")
        if version != SCHEMA_VERSION:
            raise PersistenceError(
                f"'{self.path}' has schema {version}, this ohtui reads {SCHEMA_VERSION}, and it "
                "cannot be upgraded while it is read-only."
            )

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
        if not self._is_current(conn):
            self._make_schema(conn)
        self._enable_wal(conn)
        conn.execute("PRAGMA synchronous=FULL")

    def _make_schema(self, conn: sqlite3.Connection) -> None:
        """In one write transaction: refuse a file that is not ours, else make what is
        missing of the schema and its indexes."""
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise self._open_error(exc) from exc
        except sqlite3.DatabaseError as exc:
            raise PersistenceError(
                f"'{self.path}' is not an ohtui conversation database ({exc}). Nothing was "
                "changed; move the file away or choose another persistence directory."
            ) from exc
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            has_tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
            if has_tables and app_id != APPLICATION_ID:
                raise PersistenceError(
                    f"'{self.path}' is a database of another program. Nothing was changed; "
                    "move it away or choose another persistence directory."
                )
            if version > SCHEMA_VERSION:
                raise PersistenceError(
                    f"'{self.path}' was written by a newer ohtui (schema {version}, this one "
                    f"reads {SCHEMA_VERSION}). Upgrade ohtui to open it."
                )
            if not has_tables or version < SCHEMA_VERSION:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            for statement in _INDEXES.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException as exc:
            conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError):
                raise self._open_error(exc) from exc
            if isinstance(exc, sqlite3.DatabaseError):
                raise PersistenceError(f"'{self.path}' cannot be read: {exc}") from exc
            raise

    @staticmethod
    def _is_current(conn: sqlite3.Connection) -> bool:
        """Whether the file is ours, of this schema, with every index made (read outside any
        transaction: in WAL mode that never waits for a writer)."""
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            indexes = conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                f"({', '.join('?' * len(_INDEX_NAMES))})",
                _INDEX_NAMES,
            ).fetchone()[0]
        except sqlite3.DatabaseError:
            return False  # the write transaction says what is wrong with the file
        return (
            app_id == APPLICATION_ID and version == SCHEMA_VERSION and indexes == len(_INDEX_NAMES)
        )

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

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    # --- conversations -------------------------------------------------------------------

    @_db_errors
    def load(self, conversation_id: str) -> StoredConversation | None:
        """The saved row of a conversation, or None if it was never saved."""
        rows = self._query(
            "SELECT c.key, s.state, c.event_count FROM conversations c "
            "JOIN states s ON s.conversation = c.key WHERE c.id = ?",
            (conversation_id,),
        )
        return StoredConversation(*rows[0]) if rows else None

    @_db_errors
    def create(self, conversation_id: str, state_json: str, summary: dict[str, Any]) -> int:
        """Save a new conversation; returns its key."""
        now = _now()
        with self._transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO conversations (id, created_at, updated_at, title, status, "
                "workspace, model) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (conversation_id, now, now, *_summary_values(summary)),
            )
            key = int(cursor.lastrowid or 0)
            conn.execute(
                "INSERT INTO states (conversation, state) VALUES (?, ?)", (key, state_json)
            )
            return key

    @_db_errors
    def save_state(self, key: int, state_json: str, summary: dict[str, Any]) -> None:
        """Replace a conversation's saved state and its summary columns."""
        with self._transaction() as conn:
            self._write_state(conn, key, state_json, summary)

    @staticmethod
    def _write_state(
        conn: sqlite3.Connection, key: int, state_json: str, summary: dict[str, Any]
    ) -> None:
        conn.execute(
            "UPDATE conversations SET title = ?, status = ?, workspace = ?, model = ?, "
            "updated_at = ? WHERE key = ?",
            (*_summary_values(summary), _now(), key),
        )
        conn.execute("UPDATE states SET state = ? WHERE conversation = ?", (state_json, key))

    @_db_errors
    def delete(self, conversation_id: str) -> bool:
        """Delete a conversation and its events; False if there was none."""
        with self._transaction() as conn:
            key = _key_of(conn, conversation_id)
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

    @_db_errors
    def rename(self, conversation_id: str, title: str) -> bool:
        """Set a conversation's title in its summary and saved state."""
        title = valid_text(title)  # SQLite cannot store a lone surrogate
        with self._transaction() as conn:
            key = _key_of(conn, conversation_id)
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

    @_db_errors
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
                        "INSERT INTO events (conversation, seq, id, kind, data, search_text) "
                        "SELECT ?, event_count, ?, ?, ?, ? FROM conversations WHERE key = ? "
                        "RETURNING seq",
                        (key, event.id, event.kind, event.data, event.search_text, key),
                    ).fetchone()
                except sqlite3.IntegrityError as exc:
                    raise ValueError(
                        f"an event with id '{event.id}' is already in the log"
                    ) from exc
                if row is None:
                    raise PersistenceError(f"conversation key {key} is not in {self}")
                conn.execute(
                    "UPDATE conversations SET event_count = event_count + 1, updated_at = ?, "
                    "first_user_message = coalesce(first_user_message, ?) WHERE key = ?",
                    (_now(), event.first_user_message, key),
                )
                indexes.append(int(row[0]))
            if state is not None:
                self._write_state(conn, key, *state)
        return indexes

    @_db_errors
    def event_count(self, key: int) -> int:
        """How many events a conversation has."""
        rows = self._query("SELECT event_count FROM conversations WHERE key = ?", (key,))
        return int(rows[0][0]) if rows else 0

    @_db_errors
    def read_events(self, key: int, start: int, stop: int) -> list[tuple[int, str]]:
        """(index, JSON) of the events with start <= index < stop."""
        return self._query(
            "SELECT seq, data FROM events WHERE conversation = ? AND seq >= ? AND seq < ? "
            "ORDER BY seq",
            (key, start, stop),
        )

    @_db_errors
    def event_index(self, key: int, event_id: str) -> int | None:
        """The index of an event by id, or None."""
        rows = self._query(
            "SELECT seq FROM events WHERE conversation = ? AND id = ?", (key, event_id)
        )
        return int(rows[0][0]) if rows else None

    @_db_errors
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

    @_db_errors
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

    # --- listing and search --------------------------------------------------------------

    _SUMMARY_COLUMNS = (
        "c.id, c.title, c.first_user_message, c.created_at, c.updated_at, c.event_count, "
        "c.status, c.workspace, c.model"
    )

    @_db_errors
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

    @_db_errors
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

    @_db_errors
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
            summary = _summary(row[:9], held)
            hits.setdefault(summary.id, SearchHit(summary, row[9]))
        words = query.split()
        title_clause = " AND ".join("c.title LIKE ? ESCAPE '\\'" for _ in words)
        for row in self._query(
            f"SELECT {self._SUMMARY_COLUMNS} FROM conversations c WHERE {title_clause} {ws_clause}",
            (*(f"%{_like_escape(w)}%" for w in words), *ws_params),
        ):
            hits.setdefault(row[0], SearchHit(_summary(row, held), row[1] or ""))
        ordered = sorted(hits.values(), key=lambda h: h.summary.updated_at, reverse=True)
        return ordered[:limit]

    @_db_errors
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
        summaries = [_summary(r[:9], held) for r in rows]
        snippets = self._snippets(match, [r[9] for r in rows]) if match else {}
        by_key = {r[9]: r[0] for r in rows}
        last = rows[-1] if rows else None
        return SummaryPage(
            rows=summaries,
            snippets={by_key[key]: text for key, text in snippets.items()},
            next=(float(last[4]), str(last[0])) if more and last is not None else None,
        )

    @_db_errors
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

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            try:
                self._conn.close()
            except sqlite3.Error:
                logger.debug("closing %s failed", self, exc_info=True)


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


def _key_of(conn: sqlite3.Connection, conversation_id: str) -> int | None:
    """The row key of a conversation, or None if there is none."""
    row = conn.execute("SELECT key FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
    return None if row is None else int(row[0])


def _summary_values(summary: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(valid_data(summary.get(k)) for k in ("title", "status", "workspace", "model"))


def _now() -> float:
    return time.time()


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
    )
