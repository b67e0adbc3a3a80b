"""The one table of known read-only behaviour: programs, the options they take, and their risks.

`OPTIONS` is an allowlist. A command counts as read-only only when its program has an
entry marked `read_only` and every option it is given is one the entry knows and that
does not write or run anything (`find -delete`, `sort -o`, `sed 's/x/y/e'`, `git -c`).
What the table does not know is not read-only: an option it does not list, an
abbreviation that matches none or several of its long options, a run-time word where an
option could be, a sed or awk program it cannot read.

An entry lists:
- `flags` and `values` (options taking a value: `-n 5`, `-n5`, `--lines=5`, `--lines 5`);
  short options cluster (`-la`, `-nr5`) unless `cluster` is false, a long option may be
  abbreviated to a unique prefix (`--ignore-c`), `--` ends the options;
- `writes` and `runs`: options that write files or run programs, reported by
  `risky_options` (for messages and deny rules); `numeric` allows `-20` (`head -20`);
- `any_option`: every option of the program only reads (its manual has none that writes
  or runs: `echo`, `ps`, `uname`);
- `parse`: a program-specific reader for programs with a language or subcommands (sed
  scripts, awk programs, `find` expressions, `tar` modes, `git` subcommands).
Entries with `enumerated=False` are programs that do more than read (`curl`, `ssh`): only
their `writes`/`runs` are known, matched as GNU spelling allows, and they are never
read-only.

The entries live by family of programs, one module each (`readers`: the plain readers;
`sed`, `awk`, `find`, `tar`, `git`: programs with a language or subcommands, read by their
own parser; `writers`: programs that do more than read), with the entry's shape and the
generic option scan in `spec`. The table is assembled here, where it is looked up.
"""

from __future__ import annotations

from ohtui.sdk.security.shell.model import Command
from ohtui.sdk.security.shell.options import awk, find, git, readers, sed, tar, writers
from ohtui.sdk.security.shell.options.spec import Findings, Options, matching, scan

OPTIONS: dict[str, Options] = {
    **readers.ENTRIES,
    **find.ENTRIES,
    **sed.ENTRIES,
    **awk.ENTRIES,
    **tar.ENTRIES,
    **git.ENTRIES,
    **writers.ENTRIES,
}
"""The table: every program it knows, by name (each family's entries are in its module)."""


def _findings(command: Command) -> Findings | None:
    options = OPTIONS.get(command.name)
    if options is None:
        return None
    if options.parse is not None:
        return options.parse(command)
    if not options.enumerated or options.any_option:
        found = Findings()
        found.risky += matching(
            command, options.writes, "writes files", options.exact, options.discards
        )
        found.risky += matching(command, options.runs, "runs other programs", options.exact)
    else:
        found = scan(command, options)
        if command.unknown - {0}:
            found.unknown.append("a word known only at run time")
    if options.check is not None:
        found.risky += options.check(command)
    return found


def risky_options(command: Command) -> list[str]:
    """What the command's options do beyond reading, per the table ([] when nothing)."""
    found = _findings(command)
    return found.risky if found is not None else []


def unknown_options(command: Command) -> list[str]:
    """The options (or words) of a program in the table that the table does not know."""
    found = _findings(command)
    return found.unknown if found is not None else []


def in_table(command: Command) -> bool:
    """Whether the table enumerates what the command's options do (allow rules then cover
    only known options): its program has an enumerated entry, for git a known subcommand."""
    options = OPTIONS.get(command.name)
    if options is None or not options.enumerated:
        return False
    return command.name != "git" or git.known_subcommand(command)


def is_read_only(command: Command) -> bool:
    """Whether the command is proven to only read: its program is read-only in the table and
    every option is known to the table and neither writes nor runs."""
    options = OPTIONS.get(command.name)
    if options is None or not options.read_only:
        return False
    found = _findings(command)
    return found is not None and not found.risky and not found.unknown


__all__ = [
    "OPTIONS",
    "Findings",
    "Options",
    "in_table",
    "is_read_only",
    "risky_options",
    "unknown_options",
]
