"""Starting child processes that end when this process ends, however it ends.

Linux tells a child its parent died (PR_SET_PDEATHSIG, which bubblewrap's --die-with-parent
and the terminal's supervisor use) when the *thread* that started it exits, not the process.
So every such child is started from one thread that lives as long as the process: a thread
that ran a conversation and ended cannot take the agent's shell with it, and a killed
process (SIGKILL included) takes all of them.
"""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

_jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
_lock = threading.Lock()
_thread: threading.Thread | None = None


def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
    """`subprocess.Popen(*args, **kwargs)`, started from the process-lifetime thread."""
    return _run(lambda: subprocess.Popen(*args, **kwargs))


def spawner_thread() -> threading.Thread:
    """The thread children are started from (started on first use)."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_serve, name="ohtui-spawner", daemon=True)
            _thread.start()
        return _thread


def _run(job: Callable[[], Any]) -> Any:
    if threading.current_thread() is spawner_thread():
        return job()
    future: Future[Any] = Future()
    _jobs.put((job, future))
    return future.result()


def _serve() -> None:
    while True:
        job, future = _jobs.get()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            future.set_result(job())
        except BaseException as exc:  # noqa: BLE001 (handed to the caller, who raises it)
            future.set_exception(exc)
