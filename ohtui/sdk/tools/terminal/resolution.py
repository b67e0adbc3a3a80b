"""Which file a program name runs in a pristine bash, and whether commands could have put it
there.

In a bash that no command has changed (no function, alias, `hash -p` or `enable`), a
builtin's name runs the builtin, and any other name the first executable of that name in a
folder on PATH. A program an allow rule was checked against is vouched for only when that
file, and every PATH folder searched before it, lies outside what commands may write
(`unsafe`): otherwise a file dropped there (`.venv/bin/ls`) runs instead.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ohtui.sdk.sandbox.boundary import within
from ohtui.sdk.security.shell.model import SYSTEM_BIN_DIRS, Command
from ohtui.sdk.security.shell.programs import BASH_BUILTINS as SHELL_BUILTINS

BASH_BUILTINS = SHELL_BUILTINS | {"time", "coproc"}
"""bash 5's builtins, and the keywords the analyzer lists as commands (`time`, `coproc`)."""


def path_folders(path: str) -> list[str]:
    """PATH's folders in order; an empty or relative one is relative to the current
    directory, as bash reads it."""
    return path.split(":") if path else [""]


def writable_folder(folder: str, unsafe: Sequence[str]) -> str | None:
    """Why commands may write in a PATH folder, if they may: it is relative (to wherever
    the shell is), or it resolves inside one of `unsafe` (real paths)."""
    if not os.path.isabs(folder):
        return f"`{folder or '(empty)'}` on PATH is the current directory"
    root = within(os.path.realpath(folder), unsafe)
    return f"{folder} on PATH is inside {root}, which commands may write" if root else None


def program_problem(command: Command, path: str, unsafe: Sequence[str]) -> str | None:
    """Why `command`'s program may not be the file its allow rule was checked against, in
    a pristine bash searching `path`; None when it is a builtin or a safe file."""
    program = command.program
    if command.dynamic or not program:
        return "its program is only known at run time"
    if "/" in program:
        if os.path.dirname(program) not in SYSTEM_BIN_DIRS:
            return f"`{program}` is not a program on PATH"
        return _file_problem(program, program, unsafe)
    if program in BASH_BUILTINS:
        return None
    for folder in path_folders(path):
        candidate = os.path.join(folder, program)
        shadow = writable_folder(folder, unsafe)
        if shadow:
            return f"`{program}` is looked up in a folder commands may write: {shadow}"
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return _file_problem(program, candidate, unsafe)
    return f"`{program}` is not found on PATH"


def _file_problem(program: str, path: str, unsafe: Sequence[str]) -> str | None:
    real = os.path.realpath(path)
    root = within(real, unsafe)
    if root:
        return f"`{program}` would run {real}, inside {root}, which commands may write"
    return None
