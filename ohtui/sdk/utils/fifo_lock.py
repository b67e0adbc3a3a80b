"""FIFOLock: a re-entrant lock handed to waiting threads in the order they asked."""

from __future__ import annotations

import threading
from collections import deque
from typing import Self


class FIFOLock:
    """A re-entrant lock that is fair: on release it passes straight to the longest waiter.

    A plain lock lets the releasing thread take it straight back, so a loop that releases
    and re-acquires between steps could starve another thread forever (a user message sent
    while the agent runs must get in between two steps).
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._owner: int | None = None
        self._depth = 0
        self._waiters: deque[tuple[int, threading.Event]] = deque()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take the lock; with `blocking`, wait at most `timeout` seconds (-1: forever)."""
        me = threading.get_ident()
        with self._mutex:
            if self._owner == me:
                self._depth += 1
                return True
            if self._owner is None and not self._waiters:
                self._owner, self._depth = me, 1
                return True
            if not blocking:
                return False
            turn = threading.Event()
            self._waiters.append((me, turn))
        got = turn.wait(None if timeout < 0 else timeout)
        with self._mutex:
            if got or turn.is_set():  # handed over, perhaps just as the wait timed out
                return True
            self._waiters.remove((me, turn))
            return False

    def release(self) -> None:
        """Release once; the last release hands the lock to the first waiter, if any."""
        with self._mutex:
            self._check_owned()
            self._depth -= 1
            if not self._depth:
                self._hand_on()

    def release_all(self) -> int:
        """Release every level this thread holds at once; returns how many, for `reacquire`.

        For a wait that must not keep the lock from others even when the caller's callers
        hold it too: the first waiter gets it now, as on a last `release`.
        """
        with self._mutex:
            self._check_owned()
            depth = self._depth
            self._hand_on()
            return depth

    def reacquire(self, depth: int) -> None:
        """Take the lock again, behind the threads already waiting, `depth` levels deep."""
        if depth < 0:
            raise ValueError(f"cannot reacquire a lock {depth} levels deep")
        if depth == 0:
            return
        self.acquire()
        with self._mutex:
            self._depth += depth - 1

    def locked(self) -> bool:
        """Whether any thread holds the lock."""
        return self._owner is not None

    def owned(self) -> bool:
        """Whether the calling thread holds the lock."""
        return self._owner == threading.get_ident()

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def _check_owned(self) -> None:
        if self._owner != threading.get_ident():
            raise RuntimeError(
                "Cannot release lock not owned by the calling thread: release it on the "
                "thread that acquired it."
            )

    def _hand_on(self) -> None:
        """Pass the lock to the first waiter, or free it (the caller holds the mutex)."""
        if self._waiters:
            owner, turn = self._waiters.popleft()
            self._owner, self._depth = owner, 1
            turn.set()
        else:
            self._owner, self._depth = None, 0
