"""`LocalConversation.arun`: the synchronous run on a daemon thread of its own, awaited on
the caller's asyncio loop, so the loop stays free while the agent works.

A daemon thread, not the loop's default executor: Python joins executor threads at exit,
so a script ending mid-run would wait for an LLM call.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable


async def run_on_thread(run: Callable[[], None], interrupt: Callable[[], None], name: str) -> None:
    """Await `run()` running on a new daemon thread; its exception is raised here.

    Cancelling the awaiting task calls `interrupt()` and waits for the run to end (it is
    never left going behind the caller); the cancellation is then absorbed, as the SDK's
    `arun` does, so the awaiting task ends normally.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def settle(error: BaseException | None) -> None:
        if done.done():
            return
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)

    def target() -> None:
        error: BaseException | None = None
        try:
            run()
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task, raised there
            error = exc
        # RuntimeError: the loop has closed, nobody awaits this run any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, error)

    threading.Thread(target=target, name=name, daemon=True).start()
    task = asyncio.current_task()
    interrupted = False
    while True:
        try:
            await asyncio.shield(done)
            return
        except asyncio.CancelledError:
            if done.cancelled():
                raise
            if not interrupted:
                interrupt()
                interrupted = True
            if task is not None:
                task.uncancel()  # absorbed: a timeout or task group is not left waiting
