"""FIFOLock: re-entrant, owned, and fair to waiting threads."""

from __future__ import annotations

import threading
import time

import pytest

from ohtui.sdk.utils.fifo_lock import FIFOLock


def test_reentrant_and_owned() -> None:
    lock = FIFOLock()
    assert not lock.locked()
    assert lock.acquire()
    assert lock.acquire()
    assert lock.locked() and lock.owned()
    lock.release()
    assert lock.locked()
    lock.release()
    assert not lock.locked() and not lock.owned()


def test_release_by_another_thread_is_refused() -> None:
    lock = FIFOLock()
    lock.acquire()
    errors: list[BaseException] = []

    def other() -> None:
        try:
            lock.release()
        except RuntimeError as exc:
            errors.append(exc)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert len(errors) == 1
    lock.release()


def test_non_blocking_and_timeout() -> None:
    lock = FIFOLock()
    lock.acquire()
    results: list[bool] = []

    def other() -> None:
        results.append(lock.acquire(blocking=False))
        start = time.monotonic()
        results.append(lock.acquire(timeout=0.2))
        results.append(time.monotonic() - start >= 0.19)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert results == [False, False, True]
    lock.release()
    assert lock.acquire(blocking=False)  # the timed-out waiter left no ghost in the queue


def test_a_waiter_gets_the_lock_from_a_loop_that_releases_and_retakes_it() -> None:
    lock = FIFOLock()
    stop = threading.Event()
    steps_while_waiting: list[int] = []
    waiter_started = threading.Event()
    got_it = threading.Event()

    def busy_loop() -> None:
        steps = 0
        while not stop.is_set():
            with_lock_step(lock)
            steps += 1
            if waiter_started.is_set() and not got_it.is_set():
                steps_while_waiting.append(steps)

    def with_lock_step(lock: FIFOLock) -> None:
        lock.acquire()
        time.sleep(0.005)
        lock.release()

    loop = threading.Thread(target=busy_loop)
    loop.start()
    time.sleep(0.05)
    waiter_started.set()
    assert lock.acquire(timeout=2)
    got_it.set()
    lock.release()
    stop.set()
    loop.join()
    # Handed over at the next release: the loop got at most a couple of steps in between.
    assert len(steps_while_waiting) <= 2


@pytest.mark.parametrize("waiters", [3])
def test_waiters_are_served_in_order(waiters: int) -> None:
    lock = FIFOLock()
    lock.acquire()
    order: list[int] = []
    threads = []
    for n in range(waiters):
        thread = threading.Thread(
            target=lambda n=n: (lock.acquire(), order.append(n), lock.release())
        )
        thread.start()
        threads.append(thread)
        time.sleep(0.05)  # so they queue in this order
    lock.release()
    for thread in threads:
        thread.join()
    assert order == list(range(waiters))


def test_it_is_a_reentrant_context_manager() -> None:
    lock = FIFOLock()
    with lock as held:
        assert held is lock
        with lock:
            assert lock.owned()
        assert lock.owned()
    assert not lock.locked()


def test_the_context_manager_lets_go_when_the_block_raises() -> None:
    lock = FIFOLock()
    with pytest.raises(ZeroDivisionError), lock:
        _ = 1 / 0
    assert not lock.locked()


def test_releasing_a_lock_not_held_says_so() -> None:
    with pytest.raises(RuntimeError, match="Cannot release lock not owned by the calling thread"):
        FIFOLock().release()


def test_release_all_drops_every_level_and_reacquire_restores_them() -> None:
    lock = FIFOLock()
    for _ in range(3):
        lock.acquire()
    depth = lock.release_all()
    assert depth == 3 and not lock.locked()
    lock.reacquire(depth)
    for _ in range(depth - 1):
        lock.release()
        assert lock.owned()
    lock.release()
    assert not lock.locked()


def test_release_all_by_a_thread_not_holding_it_is_refused_and_changes_nothing() -> None:
    lock = FIFOLock()
    lock.acquire()
    lock.acquire()
    errors: list[BaseException] = []

    def other() -> None:
        try:
            lock.release_all()
        except RuntimeError as exc:
            errors.append(exc)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert len(errors) == 1 and "not owned" in str(errors[0])
    assert lock.owned()
    lock.release()
    assert lock.owned()  # both levels were still there
    lock.release()


def test_reacquire_of_nothing_takes_nothing_and_a_negative_depth_is_refused() -> None:
    lock = FIFOLock()
    lock.reacquire(0)
    assert not lock.locked()
    with pytest.raises(ValueError, match="-1"):
        lock.reacquire(-1)


def test_a_waiter_gets_the_lock_in_the_window_release_all_opens() -> None:
    lock = FIFOLock()
    lock.acquire()
    lock.acquire()
    order: list[str] = []
    queued = threading.Event()

    def waiter() -> None:
        queued.set()
        with lock:
            time.sleep(0.05)  # a reacquire that jumped the queue would land here
            order.append("waiter")

    thread = threading.Thread(target=waiter)
    thread.start()
    queued.wait()
    time.sleep(0.05)  # queued on the lock by now
    depth = lock.release_all()
    lock.reacquire(depth)
    order.append("releaser")
    lock.release()
    assert lock.owned()
    lock.release()
    thread.join()
    assert order == ["waiter", "releaser"]
