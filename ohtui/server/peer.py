"""Who is on the other end of a loopback connection: the kernel's word, for a server
started without a key given.

Started with no session key given, `ohtui serve` keeps one in the data dir, readable by its
user only; any program of that user could read it and send it. Programs of that user on
this machine, outside any sandbox, are therefore let in without it (as the OpenHands
server, started without keys, lets clients in): a client that never heard of the key file
(an SDK script, `curl`) works. The check, on Linux, from /proc:

1. the connection's socket (by its two addresses, in /proc/net/tcp or tcp6) belongs to
   this user;
2. every process holding that socket runs in this server's mount and user namespaces: a
   command inside ohtui's sandbox (bubblewrap makes new ones; the key file is hidden from
   it), a container, or another user's session is refused.

Anything that cannot be read (not Linux, /proc hidden, a process gone) refuses: the key
is still the way in. A key given on purpose (OHTUI_SERVER_API_KEY, --api-key-env) turns
this off: then only the key opens the server, as with the OpenHands server.
"""

from __future__ import annotations

import ipaddress
import os
import sys
import threading
from collections import OrderedDict
from pathlib import Path

_TABLES = ("/proc/net/tcp", "/proc/net/tcp6")
_CACHE_SIZE = 256


class LocalUsers:
    """Decides whether a connection comes from this user's own programs (cached per socket:
    finding the processes that hold one reads every process's file descriptors)."""

    def __init__(self) -> None:
        self._verdicts: OrderedDict[int, bool] = OrderedDict()
        self._lock = threading.Lock()

    def admits(self, client: tuple[str, int] | None, server: tuple[str, int] | None) -> bool:
        """Whether the connection from `client` to `server` (ASGI's scope entries) is this
        user's, from outside any sandbox; False whenever that cannot be told."""
        if not sys.platform.startswith("linux") or client is None or server is None:
            return False
        try:
            if not ipaddress.ip_address(client[0]).is_loopback:
                return False
        except ValueError:
            return False
        found = _socket_of(client, server)
        if found is None:
            return False
        uid, inode = found
        if uid != os.getuid():
            return False
        with self._lock:
            if inode in self._verdicts:
                self._verdicts.move_to_end(inode)
                return self._verdicts[inode]
        verdict = _held_only_here(inode)
        with self._lock:
            self._verdicts[inode] = verdict
            while len(self._verdicts) > _CACHE_SIZE:
                self._verdicts.popitem(last=False)
        return verdict


def _address(field: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """An address of /proc/net/tcp*: hex words in the host's byte order, then the port."""
    host, port = field.split(":")
    raw = b"".join(
        int(host[i : i + 8], 16).to_bytes(4, sys.byteorder) for i in range(0, len(host), 8)
    )
    address = ipaddress.ip_address(raw)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped, int(port, 16)
    return address, int(port, 16)


def _plain(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    address = ipaddress.ip_address(host)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _socket_of(client: tuple[str, int], server: tuple[str, int]) -> tuple[int, int] | None:
    """(uid, inode) of the client's end of the connection, or None when it is not listed."""
    try:
        local = (_plain(client[0]), int(client[1]))
        remote = (_plain(server[0]), int(server[1]))
    except ValueError:
        return None
    for table in _TABLES:
        try:
            lines = Path(table).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10:
                continue
            try:
                if _address(fields[1]) == local and _address(fields[2]) == remote:
                    return int(fields[7]), int(fields[9])
            except ValueError:
                continue
    return None


def _held_only_here(inode: int) -> bool:
    """Whether the socket is held by at least one process, and every process holding it
    runs in this process's mount and user namespaces."""
    try:
        ours = {kind: os.readlink(f"/proc/self/ns/{kind}") for kind in ("mnt", "user")}
    except OSError:
        return False
    wanted = f"socket:[{inode}]"
    uid = os.getuid()
    holders = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            fds = os.listdir(f"/proc/{entry.name}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{entry.name}/fd/{fd}") != wanted:
                    continue
            except OSError:
                continue
            try:
                theirs = {kind: os.readlink(f"/proc/{entry.name}/ns/{kind}") for kind in ours}
            except OSError:
                return False
            if theirs != ours:
                return False
            holders += 1
            break
    return holders > 0
