"""sed: its options and a reader of its scripts (`s///e`, `w file` and `e` write or run)."""

from __future__ import annotations

from ohtui.sdk.security.shell.model import Command
from ohtui.sdk.security.shell.options.spec import (
    Findings,
    Options,
    long_match,
    opts,
)

_SED = opts(
    "--quiet --silent --regexp-extended --separate --unbuffered --null-data --posix --debug "
    "--sandbox --follow-symlinks --expression --line-length --help --version",
    "--expression --line-length",
    "--in-place",
    "--file",
    short="nrEsuz",
    short_values="el",
)
_SED_COMMANDS = set("{}!=dDgGhHlnNpPqQxzFblt:TrRaicsyv#")
_SED_S_FLAGS = set("gpiImM0123456789")


def _sed_parse(command: Command) -> Findings:
    """`sed` reads unless it edits in place, reads a script file, or its script writes or
    runs (`w`, `W`, `e`, `s///w`, `s///e`); script commands are allowlisted."""
    found = Findings()
    scripts: list[str] = []
    words = command.args
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word == "--":
            if not scripts and i < len(words):
                scripts.append(words[i])
            break
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            match = long_match(name, _SED.flags)
            if match == "--expression":
                scripts.append(value if eq else (words[i] if i < len(words) else ""))
                i += not eq
            elif match == "--line-length":
                i += not eq
            elif match is None:
                found.unknown.append(word)
            elif match == "--in-place":
                found.risky.append(f"{word} (edits files in place)")
            elif match == "--file":
                found.risky.append(f"{word} (a script file the analyzer does not read)")
            continue
        if not word.startswith("-") or word == "-":
            if not scripts and not any(w.startswith(("-e", "--e")) for w in words[: i - 1]):
                scripts.append(word)
            continue
        for j, letter in enumerate(word[1:], 1):
            rest = word[j + 1 :]
            if letter == "e":
                scripts.append(rest or (words[i] if i < len(words) else ""))
                i += not rest
                break
            if letter == "l":
                i += not rest
                break
            if letter == "i":
                found.risky.append(f"{word} (edits files in place)")
                break
            if letter == "f":
                found.risky.append(f"{word} (a script file the analyzer does not read)")
                break
            if "-" + letter not in _SED.flags:
                found.unknown.append(word)
                break
    for script in scripts:
        problem = _sed_script_problem(script)
        if problem is not None:
            (found.risky if "writes or runs" in problem else found.unknown).append(problem)
    if command.unknown - {0}:
        found.unknown.append("a word known only at run time")
    return found


def _sed_script_problem(script: str) -> str | None:
    """What a sed script does beyond printing (`… writes or runs`), or that it is not
    understood; None when every command is on the allowlist."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;!{}" or c.isdigit() or c in "$,~+":
            i += 1
            continue
        if c in "/\\":  # an address regex, maybe with a custom delimiter
            delim = script[i + 1] if c == "\\" and i + 1 < n else "/"
            i = _skip_delimited(script, i + (2 if c == "\\" else 1), delim)
            while i < n and script[i] in "IM":
                i += 1
            continue
        if c in "sy":
            if i + 1 >= n or script[i + 1] in "\\\n":
                return f"sed `{script}` (not understood)"
            delim = script[i + 1]
            i = _skip_delimited(script, i + 2, delim)
            i = _skip_delimited(script, i, delim)
            start = i
            while i < n and script[i] not in ";\n}":
                i += 1
            flags = script[start:i].rstrip(" \t")
            if c == "s" and ("e" in flags or "w" in flags or "W" in flags):
                return f"sed `{script}` (its s command writes or runs)"
            if c == "s" and not set(flags) <= _SED_S_FLAGS:
                return f"sed `{script}` (not understood)"
            continue
        if c in "wWe":
            return f"sed `{script}` (its `{c}` command writes or runs)"
        if c not in _SED_COMMANDS:
            return f"sed `{script}` (not understood)"
        i += 1
        if c in "aicrRbtT:vlqQ#":
            # Its argument: sed reads it to the end of the line, the analyzer only to `;`,
            # so a command hidden after `;` is still looked at.
            while i < n and script[i] not in ";\n" and not (c != "#" and script[i] == "}"):
                i += 1
    return None


def _skip_delimited(text: str, i: int, delim: str) -> int:
    """The index after the next unescaped `delim` from `i`."""
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == delim:
            return i + 1
        i += 1
    return i


ENTRIES: dict[str, Options] = {
    "sed": Options(parse=_sed_parse, writes=("-i", "--in-place"), runs=("-f", "--file")),
}
"""sed's entry."""
