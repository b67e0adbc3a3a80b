"""What ohtui imports lives as long as ohtui does: kept out of the collector's full passes.

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

Only ohtui's own programs opt in (`own_program`, from `ohtui.cli`): in a program that uses
the engine as a library, the engine leaves that program's collector as it found it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

NO_FULL_PASS = 1 << 30
"""The collector's third threshold while a large import runs: never reached."""
_own_program = False
_lock = threading.Lock()
_imports_running = 0
"""How many large imports run now (in `importing`)."""
_third_threshold = 0
"""The collector's third threshold from before the first of them."""
_held = False
"""Whether `starting` turned the collector off (and `started` has yet to turn it on)."""


def own_program() -> None:
    """This process is one of ohtui's programs: `settle` may freeze what is imported."""
    global _own_program
    _own_program = True


def starting() -> None:
    """ohtui's own program starts its first screen: no collection until `started`. Nothing
    outside ohtui's own programs, or where the collector was already off."""
    global _held
    with _lock:
        if _own_program and not _held and gc.isenabled():
            gc.disable()
            _held = True


def started() -> None:
    """The first screen is up: freeze what start-up made, and collect again as before. Only
    after `starting`; a second call does nothing."""
    global _held
    with _lock:
        if _held:
            _held = False
            gc.freeze()  # before enabling: what start-up made is all in the youngest generation
            gc.enable()


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
