"""What ohtui imports lives as long as ohtui does: kept out of the collector's full passes.

Importing litellm leaves about 380,000 objects for Python's cyclic garbage collector, and
each full collection walks them all: 350 ms of CPU on a two-core machine, on whichever
thread happened to allocate (the UI's, in the middle of a stream of tokens). Moved into the
collector's permanent generation (`gc.freeze`) once imported, they are skipped by every
later pass; reference counting still frees any of them nothing refers to any more.

Only ohtui's own programs opt in (`own_program`, from `ohtui.cli`): in a program that uses
the engine as a library, the engine leaves that program's collector as it found it.
"""

from __future__ import annotations

import gc

_own_program = False


def own_program() -> None:
    """This process is one of ohtui's programs: `settle` may freeze what is imported."""
    global _own_program
    _own_program = True


def settle() -> None:
    """After a large import: collect the young garbage, then freeze everything alive (what
    was just imported, mostly) out of later full collections. Nothing outside ohtui's own
    programs; fast (the young generations are small, and freezing moves lists)."""
    if _own_program:
        gc.collect(1)
        gc.freeze()
