"""The lease: which process runs a conversation. One holder at a time, freed when it dies.

A lease is an OS advisory lock (`flock`, exclusive, non-blocking) on a file of its own. The
kernel drops the lock when the holder's file is closed, on `close()` or when the process
dies (`kill -9` included), so a dead holder needs no detection and a reused pid cannot keep
a lease alive: what the file says (pid, host, process start) is only for messages. flock
locks belong to an open file, not to a process, so a second opener in the same process (on
another thread) is refused too; the file is opened close-on-exec, so commands the agent
starts never inherit it. On NFS, Linux maps flock to NFS byte-range locks.

Within one process a holder may let a later opener take the conversation over
(`allow_takeover`): the lease then passes to the opener without the lock ever being let go,
so no other process can slip in between. This process's leases are kept by file identity
for that; the check and the hand-over happen under one lock, so two threads reopening at
once never both get it.

The holder deletes the file when it lets go; takers check that the file they locked is
still the one at the path (a releaser may have just unlinked it) and retry if not.

A lease nobody can reach any more lets go when it is collected: nothing can write through a
conversation no one holds. A conversation's objects refer to each other, so only the cycle
collector frees them; a taker refused by its own process therefore collects once and tries
again before naming the holder.
"""

from __future__ import annotations

import errno
import fcntl
import gc
import json
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ohtui.sdk.conversation.exceptions import ConversationLockedError, PersistenceError

TAKE_RETRY_SECONDS = 0.1
"""How long a taker retries a lock held for an instant by someone only looking at it."""


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """Who holds a conversation: what its lease file says (None where it says nothing yet)."""

    pid: int | None
    host: str | None
    started: datetime | None
    """When the holding process started."""

    def describe(self) -> str:
        """E.g. "pid 1234 on box, started 2025-06-15 14:02:11"."""
        if self.pid is None:
            return "a process that has not said which yet"
        where = f" on {self.host}" if self.host else ""
        when = f", started {self.started.astimezone():%Y-%m-%d %H:%M:%S}" if self.started else ""
        return f"pid {self.pid}{where}{when}"


class ConversationLease:
    """This process's hold on one conversation, until `release()`."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._file = _identity(fd)
        self._takeover: weakref.WeakMethod[Callable[[], bool]] | None = None
        self._let_go = weakref.finalize(self, _let_go, path, fd, os.getpid())

    @classmethod
    def take(cls, path: Path, conversation_id: str, take_over: bool = False) -> ConversationLease:
        """Take the lease at `path`; ConversationLockedError names the holder if it is taken.

        With `take_over`, a holder in this process that allows it (see `allow_takeover`)
        hands the conversation over instead of refusing.
        """
        deadline = time.monotonic() + TAKE_RETRY_SECONDS
        collected = False
        while True:
            fd = _open_for_lease(path)
            with _HELD_LOCK:
                held = _HELD.get(_identity(fd))
                if held is not None:
                    os.close(fd)
                    successor = held._pass_on() if take_over else None
                    if successor is not None:
                        return successor
                else:
                    lease = cls._lock(path, fd)
                    if lease is not None:
                        return lease
            held = None  # a strong reference would keep an unreachable holder alive
            if time.monotonic() < deadline:
                time.sleep(0.005)  # held for an instant by a looker, or by an opener here
                continue
            holder = read_holder(path)
            if not collected and holder.pid == os.getpid():
                collected = True  # held here: maybe by a conversation nobody holds
                gc.collect()
                continue
            raise ConversationLockedError(conversation_id, holder) from None

    @classmethod
    def _lock(cls, path: Path, fd: int) -> ConversationLease | None:
        """Lock the open lease file `fd` and register it; None (fd closed) if it is held."""
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            return None
        if not _still_at(fd, path):
            os.close(fd)  # its holder unlinked it while letting go: lock the new one
            return None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(_this_process()).encode(), 0)
        lease = cls(path, fd)
        _HELD[lease._file] = lease
        return lease

    def allow_takeover(self, let_go: Callable[[], bool]) -> None:
        """Let a later opener in this process take the conversation over.

        `let_go` (a bound method: the lease does not keep its owner alive) is asked first,
        under this process's lease lock; it returns True once its owner has stopped
        writing for good, False to refuse (e.g. because it is busy).
        """
        self._takeover = weakref.WeakMethod(let_go)

    def _pass_on(self) -> ConversationLease | None:
        """The opener's lease if this holder lets go (the caller holds _HELD_LOCK), or None."""
        let_go = self._takeover() if self._takeover is not None else None
        if let_go is None or not let_go():
            return None
        detached = self._let_go.detach()  # the file stays locked: it is the successor's now
        if detached is None:
            return None
        path, fd, _owner = detached[2]
        successor = ConversationLease(path, fd)
        _HELD[successor._file] = successor
        return successor

    def release(self) -> None:
        """Let go of the conversation (idempotent); the lease file goes with it.

        After a takeover this lets go of nothing: the conversation is the successor's.
        """
        with _HELD_LOCK:
            if _HELD.get(self._file) is self:
                del _HELD[self._file]
            self._let_go()

    def __enter__(self) -> ConversationLease:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


_HELD: weakref.WeakValueDictionary[tuple[int, int], ConversationLease] = (
    weakref.WeakValueDictionary()
)
"""This process's leases by their file's (device, inode); one dropped unreleased leaves."""
_HELD_LOCK = threading.Lock()


def _forget_in_child() -> None:
    """A forked child holds none of its parent's conversations (nor their lock's state)."""
    global _HELD_LOCK
    _HELD_LOCK = threading.Lock()
    _HELD.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def _identity(fd: int) -> tuple[int, int]:
    stat = os.fstat(fd)
    return stat.st_dev, stat.st_ino


def _let_go(path: Path, fd: int, owner: int) -> None:
    try:
        if os.getpid() == owner:  # a forked child exiting must not unlink its parent's lease
            path.unlink()  # while still locked: nobody else can be using this file
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)


def _open_for_lease(path: Path) -> int:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise PersistenceError(
            f"Cannot open '{path}' to take the conversation: {exc.strerror or exc}. Fix the "
            "directory's permissions or choose another persistence directory."
        ) from exc


def holder_of(path: Path) -> LeaseHolder | None:
    """Who holds the lease at `path` now, or None if nobody does. Takes nothing."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        try:
            # Shared: lookers never get in each other's way, only (for an instant) a taker's.
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            return _parse(os.pread(fd, 4096, 0))
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def read_holder(path: Path) -> LeaseHolder:
    """What the lease file at `path` says about its holder."""
    try:
        return _parse(path.read_bytes())
    except OSError:
        return LeaseHolder(None, None, None)


def _parse(data: bytes) -> LeaseHolder:
    try:
        info = json.loads(data)
        pid, host, started = info["pid"], info["host"], info["started"]
        return LeaseHolder(int(pid), str(host), datetime.fromtimestamp(float(started)))
    except (ValueError, TypeError, KeyError, OverflowError, OSError):
        return LeaseHolder(None, None, None)


def _still_at(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def _this_process() -> dict[str, object]:
    return {"pid": os.getpid(), "host": socket.gethostname(), "started": _PROCESS_STARTED}


def _process_start_time() -> float:
    """When this process started (Linux: from /proc; elsewhere: when ohtui's engine loaded)."""
    try:
        stat = Path("/proc/self/stat").read_text()
        ticks = int(stat[stat.rindex(")") + 2 :].split()[19])
        boot = next(
            float(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime ")
        )
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return time.time()


_PROCESS_STARTED = _process_start_time()
