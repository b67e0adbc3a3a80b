"""What ohtui imports and starts with lives as long as ohtui does: kept out of the garbage
collector's passes.

Importing litellm leaves about 380,000 objects for Python's cyclic garbage collector, and
each full collection walks them all: 350 ms of CPU on a two-core machine, on whichever
thread happened to allocate (the UI's, in the middle of a stream of tokens). Moved into the
collector's permanent generation (`gc.freeze`) once imported, they are skipped by every
later pass; reference counting still frees any of them nothing refers to any more. While
such an import runs there are no full passes at all (`importing`): each would walk what has
been imported so far to free next to nothing, a fifth of litellm's import's CPU.

While the TUI starts (`starting`, until its first frame: `started`) nothing is collected at
all: what start-up makes is Textual's and ohtui's modules and the first screen, which live as
long as the program, and the collector's hundred passes over them were 12-17 ms of a first
frame's 240. Once the frame is drawn all of it is frozen, and with it the garbage start-up
left (about 1,000 objects, 135 KB), as `tui/session/heap.py` keeps what it freezes.

The same holds, without the freezing, while a screen is built (`holding`): the collector's
passes were 4-6 ms of the conversation picker's first opening and 11-21 ms of its second,
which always had a full pass in it (7-13 ms).

Only ohtui's own programs opt in (`own_program`, from `ohtui.cli`): in a program that uses
the engine as a library, the engine leaves that program's collector as it found it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

NO_FULL_PASS = 1 << 30
"""The collector's third threshold while a large import runs: never reached."""
_own_program = False
_lock = threading.Lock()
_imports_running = 0
"""How many large imports run now (in `importing`)."""
_third_threshold = 0
"""The collector's third threshold from before the first of them."""
_holds = 0
"""How many holds (`starting`, `holding`) keep the collector off now."""
_collecting_before = False
"""Whether the collector was on before the first of them."""
_start_held = False
"""Whether `starting` holds it (and `started` has yet to let go)."""


def own_program() -> None:
    """This process is one of ohtui's programs: `settle` may freeze what is imported."""
    global _own_program
    _own_program = True


def _hold() -> None:
    """(Under `_lock`.) One more hold: the collector is off while any is kept."""
    global _holds, _collecting_before
    if _holds == 0:
        _collecting_before = gc.isenabled()
        gc.disable()
    _holds += 1


def _let_go() -> None:
    """(Under `_lock`.) One hold less: the last one turns the collector back on, if it was."""
    global _holds
    _holds -= 1
    if _holds == 0 and _collecting_before:
        gc.enable()


def starting() -> None:
    """ohtui's own program starts its first screen: no collection until `started`. Nothing
    outside ohtui's own programs."""
    global _start_held
    with _lock:
        if _own_program and not _start_held:
            _start_held = True
            _hold()


def started() -> None:
    """The first screen is up: freeze what start-up made, and collect again as before. Only
    after `starting`; a second call does nothing."""
    global _start_held
    with _lock:
        if _start_held:
            _start_held = False
            if _collecting_before:  # (else it was off before `starting`: left as it was)
                gc.freeze()  # before collecting again: start-up made it all in the youngest
            _let_go()


def holding() -> Callable[[], None]:
    """A screen is being built: no collection until the returned function is called (once or
    more; the first call counts). What a new screen makes stays alive with it, so each pass
    would walk it for nothing, and a full one (7-13 ms here) could land in its opening frame.
    Unlike start-up, nothing is frozen: a screen is closed again. In ohtui's own programs
    only; elsewhere the function does nothing."""
    if not _own_program:
        return lambda: None
    with _lock:
        _hold()
    released = False

    def release() -> None:
        nonlocal released
        with _lock:
            if not released:
                released = True
                _let_go()

    return release


def settle() -> None:
    """After a large import: collect the young garbage, then freeze everything alive (what
    was just imported, mostly) out of later full collections. Nothing outside ohtui's own
    programs; fast (the young generations are small, and freezing moves lists)."""
    if _own_program:
        gc.collect(1)
        gc.freeze()


@contextmanager
def importing() -> Iterator[None]:
    """Around a large import: in ohtui's own programs, no full collection runs meanwhile
    (in any thread; the young generations are still collected), then `settle`. Elsewhere
    the block runs as it is."""
    global _imports_running, _third_threshold
    if not _own_program:
        yield
        return
    with _lock:
        if _imports_running == 0:
            young, older, _third_threshold = gc.get_threshold()
            gc.set_threshold(young, older, NO_FULL_PASS)
        _imports_running += 1
    try:
        yield
    finally:
        with _lock:
            _imports_running -= 1
            if _imports_running == 0:
                young, older, _ = gc.get_threshold()
                gc.set_threshold(young, older, _third_threshold)
        settle()
