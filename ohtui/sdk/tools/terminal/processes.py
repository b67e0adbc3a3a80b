"""Finding and signalling process trees, portably across Linux and macOS."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path

_PROC = Path("/proc")


def process_table() -> dict[int, int]:
    """Map every visible pid to its parent pid."""
    if (_PROC / "self" / "stat").exists():
        return _proc_table()
    return _ps_table()


def _proc_table() -> dict[int, int]:
    table: dict[int, int] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # the process ended while we looked
            continue
        # The command name in parentheses may hold spaces and ')', so split after the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1:
            table[int(entry.name)] = int(fields[1])
    return table


def _ps_table() -> dict[int, int]:
    try:
        out = subprocess.run(
            ["ps", "-A", "-o", "pid=,ppid="], capture_output=True, text=True, check=False
        ).stdout
    except OSError:
        return {}
    table: dict[int, int] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            table[int(parts[0])] = int(parts[1])
    return table


def descendants(roots: Iterable[int], table: dict[int, int] | None = None) -> set[int]:
    """The pids in `roots` and all their descendants that are still running."""
    table = process_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, ppid in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    stack = [pid for pid in roots if pid in table]
    while stack:
        pid = stack.pop()
        if pid in found:
            continue
        found.add(pid)
        stack.extend(children.get(pid, ()))
    return found


def children_of(pid: int, table: dict[int, int] | None = None) -> set[int]:
    """The direct children of `pid`."""
    table = process_table() if table is None else table
    return {child for child, parent in table.items() if parent == pid}


def direct_children(pid: int) -> list[int]:
    """The children of `pid`, read from its own /proc entry (cheap: no walk of every process)."""
    if not _has_children_lists():
        return sorted(children_of(pid))
    task_dir = f"/proc/{pid}/task"
    found: list[int] = []
    try:
        tasks = os.listdir(task_dir)
    except OSError:
        return []
    for task in tasks:
        with contextlib.suppress(OSError, ValueError), open(f"{task_dir}/{task}/children") as f:
            found += [int(child) for child in f.read().split()]
    return found


@functools.cache
def _has_children_lists() -> bool:
    """Whether the kernel lists each task's children in /proc (CONFIG_PROC_CHILDREN)."""
    return (_PROC / "thread-self" / "children").exists()


def subtree(pid: int) -> set[int]:
    """`pid` and all its descendants, walked through each process's own /proc children list:
    the cost follows the size of this tree, not how many processes the machine runs."""
    if not _has_children_lists():  # a kernel without them, or macOS
        return descendants([pid])
    found: set[int] = set()
    stack = [pid]
    while stack:
        current = stack.pop()
        if current in found:
            continue
        found.add(current)
        stack.extend(direct_children(current))
    return found


def is_running(pid: int) -> bool:
    """Whether `pid` exists and is not a zombie (an unreaped zombie no longer runs)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = _PROC / str(pid) / "stat"
    try:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return _ps_running(pid)
    return state not in ("Z", "X")


def _ps_running(pid: int) -> bool:
    try:
        out = subprocess.run(
            ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        return True
    return bool(out) and not out.startswith("Z")


def signal_pids(pids: Iterable[int], sig: signal.Signals) -> None:
    """Send `sig` to each pid, ignoring those already gone."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def wait_gone(pids: Iterable[int], timeout: float) -> set[int]:
    """Wait until the pids stop running, up to `timeout` seconds; return those still running."""
    remaining = set(pids)
    deadline = time.monotonic() + timeout
    while True:
        remaining = {pid for pid in remaining if is_running(pid)}
        if not remaining or time.monotonic() >= deadline:
            return remaining
        time.sleep(0.02)


def freeze(collect: Callable[[], set[int]]) -> set[int]:
    """SIGSTOP every process `collect` finds, asking again until no new one appears.

    A stopped process cannot fork, so the set closes, and none of them acts on what another's
    death tells it (a shell going on to its next command) before `thaw`. Returns the pids.
    """
    frozen: set[int] = set()
    while new := collect() - frozen:
        signal_pids(new, signal.SIGSTOP)
        frozen |= new
    return frozen


def thaw(pids: Iterable[int]) -> None:
    """Let frozen processes run again (a signal sent while frozen reaches them first)."""
    signal_pids(pids, signal.SIGCONT)
