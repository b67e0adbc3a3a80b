"""find: its expression, where `-delete`, `-exec` and `-fprint` write or run."""

from __future__ import annotations

import re

from ohtui.sdk.security.shell.model import Command
from ohtui.sdk.security.shell.options.spec import (
    Findings,
    Options,
)

_FIND_VALUES = frozenset(
    [
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-regextype",
        "-type",
        "-xtype",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-newer",
        "-anewer",
        "-cnewer",
        "-perm",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-links",
        "-inum",
        "-samefile",
        "-maxdepth",
        "-mindepth",
        "-printf",
        "-lname",
        "-ilname",
        "-used",
        "-fstype",
        "-context",
        "-files0-from",
    ]
)
_FIND_FLAGS = frozenset(
    [
        "-nouser",
        "-nogroup",
        "-empty",
        "-depth",
        "-prune",
        "-print",
        "-print0",
        "-ls",
        "-quit",
        "-not",
        "-a",
        "-o",
        "-and",
        "-or",
        "!",
        "(",
        ")",
        ",",
        "-true",
        "-false",
        "-readable",
        "-writable",
        "-executable",
        "-follow",
        "-xdev",
        "-mount",
        "-daystart",
        "-noleaf",
        "-ignore_readdir_race",
        "-noignore_readdir_race",
        "-L",
        "-P",
        "-H",
        "-help",
        "--help",
        "-version",
        "--version",
    ]
)
_FIND_WRITES = frozenset({"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_NEWER = re.compile(r"-newer[aBcm][aBcmt]")


def _find_parse(command: Command) -> Findings:
    """`find` reads unless an action writes (`-delete`, `-fprint`) or runs (`-exec`)."""
    found = Findings()
    words = command.args
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if i in command.unknown:
            found.unknown.append(f"{word} (known only at run time)")
        elif word in _FIND_WRITES:
            found.risky.append(f"{word} (writes files)")
        elif word in _FIND_RUNS:
            found.risky.append(f"{word} (runs other programs)")
            while i < len(words) and words[i] not in (";", "+"):
                i += 1
            i += 1
        elif word in _FIND_VALUES or _FIND_NEWER.fullmatch(word) or word.startswith("-O"):
            i += not word.startswith("-O")
        elif (
            (word.startswith("-") and len(word) > 1) or word in ("!", "(", ")", ",")
        ) and word not in _FIND_FLAGS:
            found.unknown.append(word)
    return found


ENTRIES: dict[str, Options] = {
    "find": Options(parse=_find_parse),
}
"""find's entry."""
