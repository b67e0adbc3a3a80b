"""The session key `ohtui serve` keeps on this machine, and who may read it.

Started without a key, `ohtui serve` makes one and keeps it in the data dir, readable by its
user only. ohtui's own client reads it there for a server on this machine's loopback, so
`ohtui --server http://127.0.0.1:PORT` works for the same user with nothing to copy; it
hands the key only to a listener that user owns (on Linux, from /proc/net/tcp*), never to a
port another user took. Cheap to import: the command line and the server's start use it.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from ohtui.settings import paths

LOCAL_SERVER = "local server"
"""Where a key came from when it is the one `ohtui serve` made here (a ResolvedKey source)."""
_LISTEN = "0A"
"""A listening socket's state in /proc/net/tcp."""


class KeyFileError(OSError):
    """The key file cannot be read or made; the message says where and why."""


def is_loopback(host: str) -> bool:
    """Whether `host` names only this machine (127.0.0.0/8, ::1, localhost)."""
    host = host.strip("[]").lower().removesuffix(".")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_key_file(path: Path) -> str | None:
    """The key in `path` when it is a regular file of this user that no one else can read
    or write; else None (a missing, shared or empty file holds no usable key)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, encoding="utf-8") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return None
        if info.st_mode & 0o077:
            return None
        key = file.read(1024).strip()
    return key or None


def stored_session_key(path: Path) -> tuple[str, bool]:
    """The server's session key from `path`, made (readable by this user only) when there
    is none usable; (key, whether it was made now). KeyFileError says what failed."""
    key = read_key_file(path)
    if key is not None:
        return key, False
    key = secrets.token_urlsafe(32)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(key + "\n")
        os.replace(temporary, path)  # a file others could read (or a link) is replaced
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise KeyFileError(
            f"cannot keep the session key in {path}: {exc.strerror or exc}. Make that folder "
            "writable (OHTUI_DATA_DIR moves it), or give a key in OHTUI_SERVER_API_KEY."
        ) from exc
    return key, True


def local_session_key(url: str) -> str | None:
    """The key `ohtui serve` made on this machine, for a server at `url` on loopback that
    this user runs; None for any other server (or when there is no such key)."""
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    if not parts.hostname or not is_loopback(parts.hostname):
        return None
    key = read_key_file(paths.server_session_key_file())
    if key is None or not listener_is_ours(port):
        return None
    return key


def listener_check(url: str) -> Callable[[], str | None]:
    """What to run before each connection that sends the local key to `url`: the port may
    have changed hands since (the server stopped, another user took the port), and the key
    goes only to a listener this user owns."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)

    def check() -> str | None:
        if listener_is_ours(port):
            return None
        return (
            f"nothing of yours listens on port {port} now (the server stopped, or another "
            "user's program took the port): ohtui sends this machine's server key only to "
            "your own ohtui serve"
        )

    return check


def listener_is_ours(port: int) -> bool:
    """Whether every socket listening on `port` (TCP, IPv4 and IPv6) belongs to this user,
    and there is one. False where /proc/net cannot tell (not Linux)."""
    owners = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 8 or fields[3] != _LISTEN:
                continue
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                owners.add(int(fields[7]))
    return owners == {os.getuid()}
