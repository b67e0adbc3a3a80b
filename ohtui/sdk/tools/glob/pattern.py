"""Glob patterns as ripgrep's `-g` reads them, turned into regular expressions.

`*` and `?` stay within one folder, `**` crosses folders, `[...]` is a class (`[!...]` its
complement) and `{a,b}` an alternation. A pattern without a `/` matches a file's name at any
depth (`*.py`); one with a `/` matches the path from the searched folder (`src/**/*.ts`).
Python 3.11's `glob` and `fnmatch` know neither `**` across folders nor braces, hence this.
"""

from __future__ import annotations

import re
from functools import lru_cache


class GlobPatternError(ValueError):
    """A pattern that cannot be read (an unclosed brace)."""


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The regular expression a relative path must fully match to match `pattern`."""
    pattern = pattern.strip().removeprefix("./").lstrip("/")
    if not pattern:
        raise GlobPatternError("the pattern is empty: pass one such as '**/*.py'")
    body = _fragment(pattern)
    if "/" not in pattern:
        body = "(?:.*/)?" + body  # a bare name matches at any depth
    return re.compile(body, re.DOTALL)


def names_hidden(pattern: str) -> bool:
    """Whether the pattern asks for hidden files or folders by name (`.github/**`, `.env`)."""
    return any(part.startswith(".") and part not in (".", "..") for part in pattern.split("/"))


def _fragment(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif text.startswith("**", i):
            out.append(".*")
            i += 2
        elif text[i] == "*":
            out.append("[^/]*")
            i += 1
        elif text[i] == "?":
            out.append("[^/]")
            i += 1
        elif text[i] == "[":
            end = text.find("]", i + 2)
            if end == -1:
                out.append(re.escape("["))
                i += 1
                continue
            inner = text[i + 1 : end]
            negate = inner[0] in "!^"
            inner = inner[1:] if negate else inner
            out.append(("[^/" if negate else "[") + inner.replace("\\", "\\\\") + "]")
            i = end + 1
        elif text[i] == "{":
            end = _closing_brace(text, i)
            alternatives = _split_top(text[i + 1 : end])
            out.append("(?:" + "|".join(_fragment(alt) for alt in alternatives) + ")")
            i = end + 1
        else:
            out.append(re.escape(text[i]))
            i += 1
    return "".join(out)


def _closing_brace(text: str, start: int) -> int:
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    raise GlobPatternError(
        f"the brace opened at character {start + 1} of {text!r} is never closed: "
        "write alternatives as {a,b}"
    )


def _split_top(text: str) -> list[str]:
    """`text` split at the commas outside nested braces."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        current.append(char)
    parts.append("".join(current))
    return parts
