"""Reading bash command lines for safety decisions.

`parse_command` tells which programs a command line would run (wrappers such as `sudo`,
`env`, `xargs`, `timeout` or `bash -c` unwrapped into separate commands) and what it cannot
resolve before it runs. It reads the line with tree-sitter's bash grammar, imported on first
use, and fails closed: whatever it cannot pin down never matches an allow rule.
"""

from __future__ import annotations

from functools import lru_cache

from ohtui.sdk.security.shell.model import Command, CommandLine, Redirection, command_name
from ohtui.sdk.security.shell.options import is_read_only, risky_options
from ohtui.sdk.security.shell.reader import read_command_line

_CACHED_LENGTH = 64 * 1024


def parse_command(command: str) -> CommandLine:
    """What `command` would run. The result is shared between callers: do not modify it."""
    if len(command) > _CACHED_LENGTH:
        return read_command_line(command)
    return _cached(command)


@lru_cache(maxsize=128)
def _cached(command: str) -> CommandLine:
    return read_command_line(command)


def only_reads(line: CommandLine) -> bool:
    """Whether ohtui can show the command line only reads: every part is a program and
    options of the read-only table, with no write redirection and nothing unresolved."""
    return (
        bool(line.commands)
        and not line.writes_files
        and not line.unresolved
        and all(map(is_read_only, line.commands))
    )


__all__ = [
    "Command",
    "CommandLine",
    "Redirection",
    "command_name",
    "is_read_only",
    "only_reads",
    "parse_command",
    "risky_options",
]
