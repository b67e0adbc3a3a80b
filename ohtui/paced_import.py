"""Imports on one thread that stop between modules while something more urgent runs.

A big import on a background thread (litellm's: thousands of modules, seconds of CPU) shares
the GIL with everything else in the process: a UI thread that wants it waits up to the switch
interval each time it takes it back, and drawing one key takes it back many times. Python's
import system asks every finder on `sys.meta_path` before each module it loads, so a finder
that finds nothing can pause there: between modules, with no module half-made. Meanwhile the
switch interval is shorter, so a thread that wants the GIL back waits a millisecond, not five
(measured with a UI-like thread handling a key while litellm is imported: 45-50 ms a key
unpaced, 27-30 ms paced, 22 ms with no import running).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from types import ModuleType

__all__ = ["paced_imports"]

SWITCH_INTERVAL = 0.001
"""Seconds a thread may hold the GIL while another waits for it, during a paced import."""
_lock = threading.Lock()
_paced = [0, 0.0]
"""How many paced imports run, and the switch interval from before the first of them."""


class _Pacer:
    """A finder that finds nothing: before each module the paced thread imports, `pause`."""

    def __init__(self, thread: int, pause: Callable[[], None]) -> None:
        self._thread = thread
        self._pause = pause

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        """Pause when called on the paced thread; the real finders after it do the finding."""
        if threading.get_ident() == self._thread:
            self._pause()
        return None


@contextmanager
def paced_imports(pause: Callable[[], None]) -> Iterator[None]:
    """Within the block, every module this thread imports first calls `pause` (which may
    sleep while something more urgent runs; it should return soon after, as the module's
    import lock is held meanwhile). Other threads' imports are not paused."""
    pacer = _Pacer(threading.get_ident(), pause)
    with _lock:
        if _paced[0] == 0:
            _paced[1] = sys.getswitchinterval()
            sys.setswitchinterval(min(_paced[1], SWITCH_INTERVAL))
        _paced[0] += 1
    sys.meta_path.insert(0, pacer)
    try:
        yield
    finally:
        sys.meta_path.remove(pacer)
        with _lock:
            _paced[0] -= 1
            if _paced[0] == 0:
                sys.setswitchinterval(_paced[1])
