"""The conversation database's file: its schema, the check that a file is ours and current,
and how SQLite's failures are told (`db_errors`). Parts of ConversationStore (store.py).
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from ohtui.sdk.conversation.exceptions import PersistenceError
from ohtui.sdk.utils.valid_text import valid_data

APPLICATION_ID = 0x6F687475  # "ohtu"
SCHEMA_VERSION = 2
LOCK_TIMEOUT_SECONDS = 30.0

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
    model TEXT,
    leaf TEXT,  -- HEAD of the conversation tree (NULL: the newest event, or an empty HEAD)
    forked_from TEXT,  -- the conversation this one was forked from, and at which event
    forked_at TEXT
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
    parent INTEGER,  -- seq of its parent in the tree (-1: a root, NULL: seq - 1 or a root at 0)
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
CREATE INDEX IF NOT EXISTS events_parent_jumps ON events(conversation, seq, parent)
    WHERE parent IS NOT NULL AND parent <> seq - 1;
"""
PARENT_JUMP = "parent IS NOT NULL AND parent <> seq - 1"
"""An event whose parent is not the event before it (a branch or a root begins): the rows
of the partial index `events_parent_jumps`, which a query finds with these very words."""
# Schema 1 -> 2 (the conversation tree): columns added; every old row keeps its meaning (a
# NULL parent is the event before, a NULL leaf the newest event).
_UPGRADES = {
    1: """
ALTER TABLE conversations ADD COLUMN leaf TEXT;
ALTER TABLE conversations ADD COLUMN forked_from TEXT;
ALTER TABLE conversations ADD COLUMN forked_at TEXT;
ALTER TABLE events ADD COLUMN parent INTEGER;
""",
}
_INDEX_NAMES = tuple(re.findall(r"CREATE INDEX IF NOT EXISTS (\w+)", _INDEXES))


P = ParamSpec("P")
R = TypeVar("R")


def db_errors(method: Callable[P, R]) -> Callable[P, R]:
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


def check_readable(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a file that is not ours, or not of this schema (it cannot be upgraded)."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if app_id != APPLICATION_ID:
        raise PersistenceError(f"'{path}' is not an ohtui conversation database.")
    if version != SCHEMA_VERSION:
        raise PersistenceError(
            f"'{path}' has schema {version}, this ohtui reads {SCHEMA_VERSION}, and it "
            "cannot be upgraded while it is read-only."
        )


def make_schema(
    conn: sqlite3.Connection,
    path: Path,
    open_error: Callable[[sqlite3.OperationalError], Exception],
) -> None:
    """In one write transaction: refuse a file that is not ours, else make what is
    missing of the schema and its indexes."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise open_error(exc) from exc
    except sqlite3.DatabaseError as exc:
        raise PersistenceError(
            f"'{path}' is not an ohtui conversation database ({exc}). Nothing was "
            "changed; move the file away or choose another persistence directory."
        ) from exc
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        has_tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0
        if has_tables and app_id != APPLICATION_ID:
            raise PersistenceError(
                f"'{path}' is a database of another program. Nothing was changed; "
                "move it away or choose another persistence directory."
            )
        if version > SCHEMA_VERSION:
            raise PersistenceError(
                f"'{path}' was written by a newer ohtui (schema {version}, this one "
                f"reads {SCHEMA_VERSION}). Upgrade ohtui to open it."
            )
        if has_tables and version < SCHEMA_VERSION:
            for old in range(version, SCHEMA_VERSION):
                for statement in _UPGRADES.get(old, "").split(";"):
                    if statement.strip():
                        conn.execute(statement)
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
            raise open_error(exc) from exc
        if isinstance(exc, sqlite3.DatabaseError):
            raise PersistenceError(f"'{path}' cannot be read: {exc}") from exc
        raise


def is_current(conn: sqlite3.Connection) -> bool:
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
    return app_id == APPLICATION_ID and version == SCHEMA_VERSION and indexes == len(_INDEX_NAMES)


def key_of(conn: sqlite3.Connection, conversation_id: str) -> int | None:
    """The row key of a conversation, or None if there is none."""
    row = conn.execute("SELECT key FROM conversations WHERE id = ?", (conversation_id,)).fetchone()
    return None if row is None else int(row[0])


def summary_values(summary: dict[str, Any]) -> tuple[Any, ...]:
    """A summary's title, status, workspace and model, made storable."""
    return tuple(valid_data(summary.get(k)) for k in ("title", "status", "workspace", "model"))
