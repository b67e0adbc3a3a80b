"""Bash words as bash sees them: quotes removed, escapes decoded, braces expanded.

Quoted characters are carried backslash-escaped ("protected") until the end, as bash does
internally, so brace expansion and glob detection only see what bash would treat as syntax.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

MAX_BRACE_WORDS = 256
"""A word expanding to more words than this is not followed (it stays unresolved)."""

_GLOB_CHARS = frozenset("*?[")
_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_ESCAPE = re.compile(
    r"\\(?:([abeEfnrtv\\'\"?])|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})"
    r"|U([0-9A-Fa-f]{1,8})|c(\\\\|.)|(.))",
    re.DOTALL,
)
_ESCAPED = re.compile(r"\\.", re.DOTALL)
_SEQUENCE = re.compile(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?")


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a command line after bash's expansions, as far as they are known.

    `values` holds the words it becomes (brace expansion may make several); a word that
    depends on run-time values (variables, command output) is not `literal`, and its
    `values` hold its source text instead.
    """

    values: tuple[str, ...]
    literal: bool = True
    glob: bool = False
    """It holds unquoted `*`, `?` or `[`: bash replaces it with matching file names."""
    leading_glob: bool = False
    """A value starts with a pattern, so a matching file name could start with `-`."""

    @classmethod
    def unknown(cls, source: str) -> Word:
        """A word whose value is only known at run time."""
        return cls((source,), literal=False)


def protect(text: str) -> str:
    """`text` as quoted characters: every character backslash-escaped."""
    return "".join("\\" + c for c in text)


def unquoted_word(raw: str) -> str:
    """An unquoted word's source as protected text: `\\x` keeps x quoted, `\\<newline>` vanishes."""
    if "\\" not in raw:
        return raw
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw):
            if raw[i + 1] != "\n":
                out.append("\\" + raw[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def double_quoted(content: str) -> str:
    """A double-quoted string's content, decoded (`\\` escapes only $ ` " \\ newline)."""
    if "\\" not in content:
        return content
    out: list[str] = []
    i = 0
    while i < len(content):
        c = content[i]
        if c == "\\" and i + 1 < len(content) and content[i + 1] in '$`"\\\n':
            if content[i + 1] != "\n":
                out.append(content[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def ansi_c(body: str) -> str:
    """The value of `$'body'`, with bash's ANSI-C escapes decoded.

    Bash ends the value at a NUL (`\\0`, `\\x00`, `\\u0000`, `\\c@`): `$'rm\\0x'` is `rm`. The
    value returned keeps that NUL as its last character, so callers can tell a cut word
    (`has_control` is true for it) while its other characters are exactly bash's.
    """

    def decode(match: re.Match[str]) -> str:
        simple, octal, hex2, u4, u8, control, other = match.groups()
        if simple is not None:
            return _ANSI_SIMPLE[simple]
        if octal is not None:
            return chr(int(octal, 8) & 0xFF)
        if hex2 is not None:
            return chr(int(hex2, 16))
        if u4 is not None or u8 is not None:
            code = int(u4 or u8, 16)
            return chr(code) if code <= 0x10FFFF else "\ufffd"
        if control is not None:
            return "\x7f" if control == "?" else chr(ord(control[0].upper()) & 0x1F)
        return "\\" + other

    value = _ANSI_ESCAPE.sub(decode, body)
    cut = value.find("\0")
    return value if cut < 0 else value[: cut + 1]


def has_control(text: str) -> bool:
    """Whether `text` holds a control character or NUL (a word bash would not run as written)."""
    return any(c < " " or c == "\x7f" for c in text)


def finish(protected: str) -> Word:
    """The word(s) bash makes of protected text: braces expanded, globs noticed, quotes gone."""
    expanded = expand_braces(protected) if "{" in protected else [protected]
    if expanded is None:
        return Word((_unprotect(protected),), literal=False)
    return Word(
        tuple(_unprotect(w) for w in expanded),
        glob=any(_has_glob(w) for w in expanded),
        leading_glob=any(w[:1] in _GLOB_CHARS for w in expanded),
    )


def expand_braces(text: str) -> list[str] | None:
    """Bash brace expansion of protected text; None when it would make too many words."""
    results: list[str] = []
    pending = [text]
    while pending:
        word = pending.pop()
        found = _first_brace(word)
        if found is None:
            results.append(word)
        else:
            start, end, alternatives = found
            pending.extend(word[:start] + alt + word[end + 1 :] for alt in reversed(alternatives))
        if len(results) + len(pending) > MAX_BRACE_WORDS:
            return None
    return results


def _first_brace(word: str) -> tuple[int, int, list[str]] | None:
    """(start, end, alternatives) of the first expandable `{...}` in protected text."""
    i = 0
    while i < len(word):
        c = word[i]
        if c == "\\":
            i += 2
            continue
        if c == "{" and not (i and word[i - 1] == "$"):
            end, commas = _matching_brace(word, i)
            if end is not None:
                inner = word[i + 1 : end]
                if commas:
                    return i, end, _split_commas(inner, commas, i + 1)
                sequence = _sequence(inner)
                if sequence is not None:
                    return i, end, sequence
        i += 1
    return None


def _matching_brace(word: str, start: int) -> tuple[int | None, list[int]]:
    """The index of the `}` closing the `{` at `start`, and its top-level commas."""
    depth = 0
    commas: list[int] = []
    i = start
    while i < len(word):
        c = word[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i, commas
        elif c == "," and depth == 1:
            commas.append(i)
        i += 1
    return None, []


def _split_commas(inner: str, commas: list[int], offset: int) -> list[str]:
    bounds = [offset - 1, *commas, offset + len(inner)]
    return [inner[a + 1 - offset : b - offset] for a, b in itertools.pairwise(bounds)]


def _sequence(inner: str) -> list[str] | None:
    """`1..3`, `a..e` and `0..10..2` as bash expands them; None if it is not a sequence."""
    match = _SEQUENCE.fullmatch(inner)
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        if abs(b - a) // step + 1 > MAX_BRACE_WORDS:
            return [inner]  # too long to list; counted as one word (expand_braces gives up)
        width = max(len(first), len(last)) if first.lstrip("-").startswith("0") else 0
        numbers = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [str(n).zfill(width) for n in numbers]
    if first.isalpha() and last.isalpha():
        a, b = ord(first), ord(last)
        codes = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [protect(chr(c)) if not chr(c).isalnum() else chr(c) for c in codes]
    return None


def _has_glob(protected: str) -> bool:
    bare = _ESCAPED.sub("", protected) if "\\" in protected else protected
    return "*" in bare or "?" in bare or "[" in bare


def _unprotect(protected: str) -> str:
    if "\\" not in protected:
        return protected
    return re.sub(r"\\(.)", r"\1", protected, flags=re.DOTALL)
