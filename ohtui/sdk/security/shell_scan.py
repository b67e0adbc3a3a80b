"""`scan_shell_command`: read text as bash and look for a forced recursive delete.

The shell analyzer resolves what flat text hides: quoting (`r"m"`), escapes (`r\\m`),
paths (`/bin/rm`), wrappers (`sudo`, `env`) and scripts given to `bash -c`. Options are read
as `rm` reads them: short flags combine (`-rf`, `-Rf`), long ones may be abbreviated
(`--rec`), they may follow the operands, and `--` ends them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ohtui.sdk.security.shell import Command, parse_command
from ohtui.sdk.security.shell.programs import SHELL_VALUE_OPTIONS, SHELLS
from ohtui.sdk.security.shell.reader import MAX_NESTING

_MAX_NESTING_DEPTH = MAX_NESTING
"""The SDK's name (its defense_in_depth.shell_semantics) for how many shells within shells
are read: a script nested deeper leaves the scan uncertain."""


@dataclass(frozen=True, slots=True)
class ShellScan:
    """What the scan found: a forced recursive delete (`matched`), or reason to doubt.

    `uncertain` means the scan cannot vouch for the text: the delete's flags on a program
    known only at run time or on a line that does not parse, a `-c` script it could not
    read, or shells nested deeper than it reads. Rate that UNKNOWN, never LOW.
    """

    matched: bool
    detector_id: str | None = None
    uncertain: bool = False


def scan_shell_command(command: str, detector_id: str) -> ShellScan:
    """Whether `command` would run `rm` recursively and forced; a match carries `detector_id`."""
    line = parse_command(command)
    if any(c.name.lower() == "rm" and forces_recursion(c) for c in line.commands):
        return ShellScan(True, detector_id)
    doubtful = bool(line.unresolved) and any(
        forces_recursion(c) or _runs_script_text(c) for c in line.commands
    )
    return ShellScan(False, None, doubtful)


def forces_recursion(command: Command) -> bool:
    """Whether `command` is given both `rm`'s recursive and force options."""
    recursive = force = False
    for index, word in enumerate(command.args, start=1):
        if index in command.unknown:
            continue  # known only at run time: neither proof of the shape nor against it
        if word == "--":
            break
        if word.startswith("--") and len(word) > 2:
            recursive = recursive or "--recursive".startswith(word)
            force = force or "--force".startswith(word)
        elif word.startswith("-") and not word.startswith("--"):
            recursive = recursive or "r" in word or "R" in word
            force = force or "f" in word
    return recursive and force


def _runs_script_text(command: Command) -> bool:
    """Whether a shell is given a script on its command line (`bash -c '…'`, `sh -xc …`)."""
    if command.name not in SHELLS:
        return False
    words = iter(command.args)
    for word in words:
        if word in SHELL_VALUE_OPTIONS:
            next(words, None)
        elif word == "--" or not word.startswith(("-", "+")) or word in ("-", "+"):
            return False
        elif word[0] == "-" and not word.startswith("--") and "c" in word:
            return True
    return False
