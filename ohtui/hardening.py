"""Keeping ohtui's own process out of reach of the commands the agent runs."""

from __future__ import annotations

import contextlib
import sys

PR_SET_DUMPABLE = 4
"""prctl(2) option: whether the process may be dumped, traced or read through /proc."""


def make_process_private() -> None:
    """Make this process non-dumpable (Linux): processes of the same user, the agent's
    commands among them, can then no longer read its /proc/<pid>/environ (where the API keys
    it was started with stay), its memory or its open files, nor attach a debugger to it.
    It also means no core dumps. Root, or a process with CAP_SYS_PTRACE, still can.
    Elsewhere, or without prctl, it does nothing: this is a wall behind keeping the keys out
    of the agent's environment, not the only one."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):  # no C library, or no prctl in it
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
