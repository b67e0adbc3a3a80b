"""The sockets of other services: what a sandboxed command could connect to, and must not.

A Unix socket on a read-only mount still accepts connections, so hiding its folder or its
file is the only wall. Every listening socket with a path is found in the kernel's own list
(`/proc/net/unix`), not in a list of known services; abstract sockets are left behind by a
network namespace, or refused by Landlock when the network is shared.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping

_LISTENING = "00010000"  # __SO_ACCEPTCON: the socket listens
_DBUS_PATH = re.compile(r"unix:(?:[^;]*,)?path=([^,;]+)")


def listening_paths(table: str = "/proc/net/unix") -> list[str]:
    """Absolute paths of every listening Unix socket this network namespace knows."""
    try:
        with open(table, encoding="utf-8", errors="surrogateescape") as file:
            lines = file.read().splitlines()[1:]
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) == 8 and fields[3] == _LISTENING and fields[7].startswith("/"):
            found.append(fields[7])
    return found


def is_socket(path: str) -> bool:
    """Whether `path` is a socket file (links not followed)."""
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def named_by_environment(environ: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """(variable, socket path) for each variable naming a socket: a path (SSH_AUTH_SOCK) or a
    D-Bus address (`unix:path=...`); an abstract D-Bus address names no file (path '')."""
    for name, value in environ.items():
        if value.startswith("unix:"):
            match = _DBUS_PATH.search(value)
            yield name, match.group(1) if match else ""
        elif value.startswith("/") and is_socket(value):
            yield name, value
