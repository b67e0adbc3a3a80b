"""Landlock scoping (Linux 6.12+): keep a process tree from abstract sockets and signals.

An abstract Unix socket has no file to hide, and with the network shared there is no
namespace to leave it behind in: only the kernel's Landlock scope (ABI 6) keeps the sandbox's
processes from connecting to abstract sockets, and from signalling processes, outside their
domain. The restriction is made before the sandbox starts and holds for everything in it.
"""

from __future__ import annotations

import ctypes
import functools
import struct
import sys
from collections.abc import Callable

_CREATE_RULESET = 444  # the same number on every architecture (the unified syscall table)
_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_PR_SET_NO_NEW_PRIVS = 38
_SCOPE_ABSTRACT_UNIX_SOCKET = 1
_SCOPE_SIGNAL = 2
SCOPE_ABI = 6
"""The first Landlock ABI with scopes."""


@functools.cache
def abi_version() -> int:
    """The kernel's Landlock ABI (0: none, or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        version = int(libc.syscall(_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def scoped_restriction() -> Callable[[], None] | None:
    """A function to run in a new process before it execs: from then on it and all it starts
    cannot reach abstract sockets or signal processes made outside. None where the kernel
    has no scopes.

    Everything the child needs is prepared here, so between fork and exec it only makes three
    system calls (no allocation, no import).
    """
    if abi_version() < SCOPE_ABI:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    syscall, prctl = libc.syscall, libc.prctl
    attr = ctypes.create_string_buffer(
        struct.pack("QQQ", 0, 0, _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL), 24
    )
    size = ctypes.c_size_t(24)
    zero = ctypes.c_int(0)

    def restrict() -> None:
        fd = syscall(_CREATE_RULESET, attr, size, zero)
        if fd < 0 or prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "Landlock: the ruleset could not be made")
        if syscall(_RESTRICT_SELF, fd, zero) != 0:
            raise OSError(ctypes.get_errno(), "Landlock: the restriction was refused")

    return restrict


def _exec_restricted(argv: list[str]) -> None:
    """Take on the scope, then become `argv` (see `Launch.wrapped_argv`)."""
    import os

    restrict = scoped_restriction()
    if restrict is None:
        sys.exit("ohtui: this kernel has no Landlock scopes")
    restrict()
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    _exec_restricted(sys.argv[1:])
