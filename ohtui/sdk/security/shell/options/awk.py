"""awk and its kin: their options and a reader of awk programs (`system`, pipes, `getline`)."""

from __future__ import annotations

import re

from ohtui.sdk.security.shell.model import Command
from ohtui.sdk.security.shell.options.spec import (
    Findings,
    Options,
    long_match,
    opts,
)

_AWK = opts(
    "--field-separator --assign --posix --traditional --re-interval --characters-as-bytes "
    "--sandbox --lint --no-optimize --help --version",
    "--field-separator --assign",
    "--pretty-print --profile --dump-variables",
    "--file --exec --include --load --debug",
    short="",
    short_values="Fv",
)
_AWK_LONGS = _AWK.flags | set(_AWK.writes) | set(_AWK.runs)
_AWK_WRITES = frozenset(["-o", "-p", "-d"])
_AWK_RUNS = frozenset(["-f", "-E", "-i", "-l", "-D"])
_AWK_FUNCTIONS = frozenset(
    [
        "length",
        "substr",
        "index",
        "split",
        "sub",
        "gsub",
        "match",
        "sprintf",
        "sin",
        "cos",
        "atan2",
        "exp",
        "log",
        "sqrt",
        "int",
        "rand",
        "srand",
        "tolower",
        "toupper",
        "strftime",
        "systime",
        "mktime",
        "gensub",
        "asort",
        "asorti",
        "patsplit",
        "and",
        "or",
        "xor",
        "lshift",
        "rshift",
        "compl",
        "strtonum",
        "isarray",
        "typeof",
        "if",
        "while",
        "for",
        "return",
        "delete",
        "exit",
        "switch",
    ]
)
_AWK_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"', re.DOTALL)
_AWK_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_AWK_DEFINED = re.compile(r"\bfunc(?:tion)?\s+([A-Za-z_][A-Za-z0-9_]*)")
_AWK_BANNED = re.compile(r"\b(system|getline|close|fflush)\b|@|\|")
_AWK_STATEMENTS = re.compile(r"[;{}\n]")


def _awk_parse(command: Command) -> Findings:
    """`awk` reads when its options are known and its program passes `awk_program_problem`."""
    found = Findings()
    words = command.args
    i = 0
    program: str | None = None
    while i < len(words):
        word = words[i]
        i += 1
        if word == "--":
            program = words[i] if i < len(words) else None
            break
        if not word.startswith("-") or word == "-":
            program = word
            break
        option = word[:2]
        if word.startswith("--"):
            option = long_match(word.split("=")[0], _AWK_LONGS) or word
        if option in _AWK_WRITES or option in _AWK.writes:
            found.risky.append(f"{word} (writes files)")
        elif option in _AWK_RUNS or option in _AWK.runs:
            found.risky.append(f"{word} (runs awk code from a file the analyzer does not read)")
        elif option in ("-F", "-v"):
            i += len(word) == 2
        elif option in ("--field-separator", "--assign"):
            i += "=" not in word
        elif option is None or option not in _AWK.flags:
            found.unknown.append(word)
    if program is not None:
        problem = awk_program_problem(program)
        if problem is not None:
            found.risky.append(f"awk program `{_short(program)}` ({problem})")
    elif not found.risky:
        found.unknown.append("no awk program")
    if command.unknown - {0}:
        found.unknown.append("a word known only at run time")
    return found


def awk_program_problem(program: str) -> str | None:
    """Why an awk program may do more than read and print to stdout; None if it cannot.

    Allowlisted: no `system`, `getline`, `close`, `fflush`, `|` (pipes, `|&`), `@`
    (directives, indirect calls), no `>` after `print`/`printf` in a statement (output
    to a file; `>` as a comparison elsewhere is fine), and calls only to known
    functions or ones the program defines. String literals are set aside first.
    """
    code = _AWK_STRING.sub('""', program)
    if code.count('"') % 2:
        return "a string the analyzer cannot follow"
    banned = _AWK_BANNED.search(code)
    if banned is not None:
        return f"`{banned.group()}` may run commands or read files"
    for statement in _AWK_STATEMENTS.split(code):
        printed = re.search(r"\bprintf?\b", statement)
        if printed is not None and ">" in statement[printed.end() :]:
            return "prints into a file"
    defined = set(_AWK_DEFINED.findall(code))
    for name in _AWK_CALL.findall(code):
        if name not in _AWK_FUNCTIONS and name not in defined and name not in ("func", "function"):
            return f"calls `{name}`, which the analyzer does not know"
    return None


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


ENTRIES: dict[str, Options] = {
    **{name: Options(parse=_awk_parse) for name in ("awk", "gawk", "mawk", "nawk")},
}
"""awk, gawk, mawk and nawk."""
