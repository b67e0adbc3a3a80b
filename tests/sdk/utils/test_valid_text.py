"""Text that can be saved: lone surrogates become U+FFFD, pairs join, valid text is kept."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from ohtui.sdk import Message, MessageEvent, TextContent
from ohtui.sdk.utils.valid_text import valid_data, valid_model, valid_text

FFFD = "\ufffd"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("a\ud800b", f"a{FFFD}b"),  # a lone high surrogate
        ("a\udc00b", f"a{FFFD}b"),  # a lone low one
        ("\ud83d\ude00", "😀"),  # a pair, as JSON escapes an emoji: joined
        ("\ude00\ud83d", f"{FFFD}{FFFD}"),  # the wrong way round
        ("\ud83d\ud83d\ude00", f"{FFFD}😀"),
        ("x\ud800", f"x{FFFD}"),  # at the end
        (os.fsdecode(b"bad\xffname"), f"bad{FFFD}name"),  # a file name that is not UTF-8
        (json.loads('"\\ud800 and \\udfff"'), f"{FFFD} and {FFFD}"),
    ],
)
def test_invalid_text_is_repaired(given: str, expected: str) -> None:
    repaired = valid_text(given)
    assert repaired == expected
    repaired.encode("utf-8")


@pytest.mark.parametrize("text", ["", "plain", "café 中文 😀 👨\u200d👩", "\ufffd", "\x00\x1b"])
def test_valid_text_is_the_same_object(text: str) -> None:
    assert valid_text(text) is text


def test_data_is_repaired_keys_and_all_and_kept_when_valid() -> None:
    data: dict[str, Any] = {"a": ["ok", {"b\ud800": ("x", "y\udcff")}], "n": 1, "none": None}
    repaired = valid_data(data)
    assert repaired == {"a": ["ok", {f"b{FFFD}": ("x", f"y{FFFD}")}], "n": 1, "none": None}
    assert data["a"][1] == {"b\ud800": ("x", "y\udcff")}  # the original is left alone
    valid = {"a": ["ok", {"b": ("x", "y")}], "n": 1.5}
    assert valid_data(valid) is valid


def test_a_model_is_copied_only_when_it_needs_it() -> None:
    good = MessageEvent(
        source="agent", llm_message=Message(role="assistant", content=[TextContent(text="ok")])
    )
    assert valid_model(good) is good
    bad = MessageEvent(
        source="agent",
        llm_message=Message(
            role="assistant", content=[TextContent(text="x\ud800")], reasoning_content="\udcff"
        ),
    )
    repaired = valid_model(bad)
    assert isinstance(repaired, MessageEvent) and repaired.id == bad.id
    assert repaired.llm_message.text == f"x{FFFD}" and repaired.reasoning_content == FFFD
    assert repaired.model_dump_json()  # serializable now
