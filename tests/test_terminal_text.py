"""What may be printed to a terminal: an allowlist of characters shown as themselves, every
other character replaced one for one by a visible stand-in (or escaped, in JSON)."""

from __future__ import annotations

import json
import time
import unicodedata

import pytest

from ohtui.terminal_text import is_shown, json_safe, terminal_safe

ESC = "\x1b"

ATTACKS = {
    "OSC 52 clipboard write": f"{ESC}]52;c;cm0gLXJmIH4K\x07",
    "OSC 0 title": f"{ESC}]0;pwned\x07",
    "OSC 8 hyperlink": f"{ESC}]8;;https://evil.example{ESC}\\click{ESC}]8;;{ESC}\\",
    "clear screen": f"{ESC}[2J{ESC}[H",
    "alternate screen": f"{ESC}[?1049h",
    "report the title back as typed input": f"{ESC}[21t",
    "tmux passthrough": f"{ESC}Ptmux;{ESC}{ESC}]52;c;eA==\x07{ESC}\\",
    "kitty graphics (APC)": f"{ESC}_Gf=100;AAAA{ESC}\\",
    "8-bit CSI": "\x9b2J",
    "8-bit OSC, ended by 8-bit ST": "\x9d0;pwned\x9c",
    "8-bit DCS, SOS, PM, APC": "\x90q\x98x\x9ex\x9fx",
    "lone CR overwriting a line": "all tests passed\rFAILED",
    "backspaces": "safe\b\b\b\bEVIL",
    "DEL and NUL": "a\x7fb\x00c",
    "bidi override": "harmless.txt\u202etxt.exe",
    "bidi embeddings and marks": "\u202a\u202b\u202c\u202d\u200e\u200f\u061c",
    "bidi isolates": "\u2066\u2067\u2068\u2069",
    "line and paragraph separators": "one\u2028two\u2029three",
    "tag characters (invisible text)": "hi\U000e0049\U000e0047\U000e004e",
    "lone surrogates": "a\ud800b\udcffc",
    "zero-width space, BOM, word joiner": "r\u200bm\ufeff-\u2060rf",
    "vertical tab and form feed": "a\x0bb\x0cc",
    "bell": "ding\x07",
}


@pytest.mark.parametrize("text", ATTACKS.values(), ids=ATTACKS.keys())
def test_nothing_a_terminal_acts_on_is_printed(text: str) -> None:
    safe = terminal_safe(f"before {text} after\n")
    assert len(safe) == len(f"before {text} after\n")  # one stand-in per character
    assert all(is_shown(c) or c == "\n" for c in safe)
    assert safe.startswith("before ") and safe.endswith(" after\n")
    assert all(unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in safe[:-1])
    safe.encode("utf-8")  # no lone surrogate left to fail the write


@pytest.mark.parametrize("text", ATTACKS.values(), ids=ATTACKS.keys())
def test_json_escapes_them_and_keeps_the_same_value(text: str) -> None:
    line = json.dumps({"message": text}, ensure_ascii=False)
    safe = json_safe(line)
    assert json.loads(safe) == {"message": text}
    assert all(is_shown(c) for c in safe)


def test_controls_show_as_their_pictures_and_the_rest_as_the_replacement_character() -> None:
    assert terminal_safe(f"{ESC}]0;t\x07") == "␛]0;t␇"
    assert terminal_safe("a\rb\bc\x7f") == "a␍b␈c␡"
    assert terminal_safe("\x9b31m \u202eab") == "\ufffd31m \ufffdab"


SHOWN = {
    "ascii": "plain text, with tabs\tand\nnewlines",
    "accents and combining marks": "café naïve e\u0301",
    "cjk and wide": "中文 日本語 한국어",
    "rtl scripts (no override)": "שלום مرحبا",
    "emoji, ZWJ sequences, variation selectors": "😀 👨\u200d👩\u200d👧 ❤\ufe0f 👍🏽",
    "joiners in scripts": "क्\u200dष می\u200cخواهم",
    "spaces": "a\u00a0b\u2003c\u3000d",
    "box drawing and symbols": "╭─╮ ✓ ✗ ● → ⏸",
    "private use (icon fonts)": "\ue0b0 \uf113",
    "replacement character": "\ufffd",
}


@pytest.mark.parametrize("text", SHOWN.values(), ids=SHOWN.keys())
def test_text_a_terminal_shows_as_itself_is_left_alone(text: str) -> None:
    assert terminal_safe(text) == text
    assert json_safe(json.dumps(text, ensure_ascii=False)) == json.dumps(text, ensure_ascii=False)


def test_a_long_text_costs_little() -> None:
    text = ("ordinary output line, with ünïcode and 中文 in it\n" * 20_000) + ESC
    started = time.thread_time()  # CPU, not wall time: a loaded machine does not fail it
    safe = terminal_safe(text)
    assert time.thread_time() - started < 0.5  # linear; a backtracking pattern takes minutes
    assert safe.endswith("␛")


def test_a_name_that_looks_quoted_is_quoted_so_it_cannot_pass_for_another() -> None:
    from ohtui.terminal_text import shell_quoted

    literal = "$'\\xff'"  # six characters, none of them the byte 0xFF
    assert shell_quoted(literal) != shell_quoted("\udcff")  # the byte 0xFF, as os decodes it
    assert shell_quoted("\udcff") == "$'\\xff'"
    assert shell_quoted(literal) == "$'$\\'\\\\xff\\''"
    assert shell_quoted("plain/path.txt") == "plain/path.txt"
    assert shell_quoted("two words", word=True) == "'two words'"
    assert shell_quoted("x|sh", word=True) == "'x|sh'"
    assert shell_quoted("a\x1b[2K", word=True) == "$'a\\E[2K'"
