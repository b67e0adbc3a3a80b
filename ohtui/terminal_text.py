"""Text that may be printed to a terminal: only characters known to be shown as themselves.

What the model writes, what a command prints and what a file name holds can carry escape
sequences that drive the terminal (an OSC 52 clipboard write, a title, clearing the screen:
ESC or the C1 controls \\x9b and \\x9d start them), a lone CR or backspace that overwrites
what was printed, and bidirectional overrides that show text in another order than it is
read. A terminal acts only on control characters, so what passes here is an allowlist of
characters that are not controls: printable text (letters, marks, digits, punctuation,
symbols, spaces), private-use and not-yet-assigned code points, and the two joiners emoji
and some scripts need (ZWJ, ZWNJ). Every other character is shown by a stand-in: the
control picture of a C0 control or DEL (ESC prints as ␛), U+FFFD for the rest (C1 controls,
bidi and other invisible format characters, line and paragraph separators, lone
surrogates). One character always stands for one, so the offsets of styled spans still fit.
A path is shown the way bash quotes it instead (`shell_quoted`), so it can be used as shown.

Standard library only, and outside the engine's package: the engine's visualizer, the headless
run, the command line and the TUI (before its first frame, with no engine loaded) all print
through it.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import unicodedata
from functools import lru_cache

REPLACEMENT = "\ufffd"
JOINERS = frozenset({"\u200c", "\u200d"})
"""Zero-width (non-)joiners: invisible, harmless, and needed by emoji sequences and scripts."""
_SHOWN_CATEGORIES = frozenset({"Zs", "Co", "Cn"})
"""Spaces, private use (icon fonts) and unassigned code points: never terminal controls.
Everything `str.isprintable` accepts is shown too."""

_BEYOND_PLAIN = re.compile(r"[^\t\n\x20-\x7e]+")
"""Runs of anything but printable ASCII, tab and newline: only these need a closer look."""


@lru_cache(maxsize=4096)
def is_shown(character: str) -> bool:
    """Whether a terminal shows `character` as itself (and never acts on it).

    Tab and newline are controls (False): where lines are printed, `terminal_safe` keeps them.
    """
    if character.isprintable():
        return True
    return character in JOINERS or unicodedata.category(character) in _SHOWN_CATEGORIES


def stand_in(character: str) -> str:
    """The visible character printed in place of one that is not shown."""
    code = ord(character)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟: the control pictures
    if code == 0x7F:
        return "\u2421"  # ␡
    return REPLACEMENT


def terminal_safe(text: str) -> str:
    """`text` with every character a terminal would act on (but tab and newline) replaced by a
    visible stand-in, one for one."""
    if _printable_lines(text):
        return text
    return _BEYOND_PLAIN.sub(_safe_run, text)


def _printable_lines(text: str) -> bool:
    """Whether `text` is printable but for tabs and newlines (the common case, fast)."""
    return text.replace("\n", "").replace("\t", "").isprintable()


def _safe_run(match: re.Match[str]) -> str:
    run = match.group()
    if run.isprintable():
        return run
    return "".join(c if is_shown(c) else stand_in(c) for c in run)


def json_safe(line: str) -> str:
    """A JSON text with every character that is not shown written as a `\\u` escape: the
    same JSON to a reader, nothing a terminal acts on. (Outside strings, JSON is printable
    ASCII and whitespace, so only string contents change.)"""
    if _printable_lines(line):
        return line
    return _BEYOND_PLAIN.sub(_escaped_run, line)


def _escaped_run(match: re.Match[str]) -> str:
    run = match.group()
    if run.isprintable():
        return run
    return "".join(c if is_shown(c) else _json_escape(c) for c in run)


def _json_escape(character: str) -> str:
    code = ord(character)
    if code > 0xFFFF:  # as a UTF-16 surrogate pair, the way JSON writes it
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


_SHELL_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\x1b": "\\E", "'": "\\'", "\\": "\\\\"}


def shell_quoted(text: str, *, word: bool = False) -> str:
    """`text` as it is when that cannot be misread, else as bash's `$'...'` quoting writes its
    bytes: the one quoter for what ohtui shows of names, paths and commands.

    As it is: plain text, only characters a terminal shows (`is_shown`), not starting with
    `$'` (a name literally `$'\\xff'` must not read as one holding the byte 0xFF). Anything
    else is written as its bytes (`\\xff`, `\\n`, `\\E`), which bash reads back: a byte that
    is not UTF-8 (which os functions decode to a lone surrogate, `surrogateescape`), a newline,
    an escape sequence, a bidi override. `word`: `text` is one shell word (an argument, a
    value), so one holding a space or a shell metacharacter, or empty, is single-quoted too
    (`'two words'`): a command line reads as the words it runs.
    """
    if all(map(is_shown, text)):
        if word:
            return shlex.quote(text)
        if not text.startswith("$'"):
            return text
    quoted: list[str] = []
    for character in text:
        if character in _SHELL_ESCAPES:
            quoted.append(_SHELL_ESCAPES[character])
        elif is_shown(character):
            quoted.append(character)
        else:  # its bytes, as the file system holds them
            try:
                raw = os.fsencode(character)
            except UnicodeEncodeError:  # a surrogate no file name decodes to
                raw = "\ufffd".encode()
            quoted.extend(f"\\x{byte:02x}" for byte in raw)
    return f"$'{''.join(quoted)}'"


def shell_line(words: list[str] | tuple[str, ...]) -> str:
    """A command line, each word `shell_quoted` as a word."""
    return " ".join(shell_quoted(word, word=True) for word in words)


class TerminalSafeFormatter(logging.Formatter):
    """A log formatter for a terminal: every line through `terminal_safe` (a request's path,
    an error's text: a client chooses them)."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as the base formatter writes it, made safe."""
        return terminal_safe(super().format(record))
