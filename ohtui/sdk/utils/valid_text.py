"""Text that can be saved and sent: Unicode without lone surrogates.

A Python string may hold a surrogate code point on its own: JSON's "\\ud800" escape decodes to
one (a model, an MCP server or a client may send it), and a file name or output that is not
UTF-8 decodes to them with `surrogateescape`. Such a string cannot be encoded as UTF-8, so
pydantic cannot serialize it ("Error serializing to JSON"), SQLite cannot store it and a
terminal cannot print it. Where outside text enters the engine (an LLM's answer and its tool
arguments, an event being recorded, a remote server's events, the conversation's saved
fields) it passes through here: a high surrogate followed by a low one becomes the character
they encode, every other surrogate becomes U+FFFD. Valid text is returned as it is.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from pydantic import BaseModel

_SURROGATES = re.compile("[\ud800-\udfff]+")

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


def valid_text(text: str) -> str:
    """`text` with its surrogates repaired (pairs joined) or replaced by U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")  # (faster than searching for surrogates, by ten times)
    except UnicodeEncodeError:
        return _SURROGATES.sub(_repaired_run, text)
    return text


def _repaired_run(match: re.Match[str]) -> str:
    # As UTF-16 code units, a well-formed pair decodes to its character; the rest cannot.
    return match.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def valid_data(data: T) -> T:
    """JSON-like data (str, list, tuple, dict; keys too) with every string made valid: the
    same object when nothing needed it, else a repaired copy. Other values are kept."""
    if isinstance(data, str):
        return valid_text(data)  # type: ignore[return-value]
    if isinstance(data, list | tuple):
        items = [valid_data(item) for item in data]
        if all(new is old for new, old in zip(items, data, strict=True)):
            return data
        return type(data)(items)
    if isinstance(data, dict):
        pairs = [(valid_data(key), valid_data(value)) for key, value in data.items()]
        if all(
            new_key is key and new_value is value
            for (new_key, new_value), (key, value) in zip(pairs, data.items(), strict=True)
        ):
            return data
        return dict(pairs)  # type: ignore[return-value]
    return data


def valid_model(model: M) -> M:
    """`model`, or a copy of it (through its JSON form) with its text made valid."""
    data: Any = model.model_dump(mode="json")
    repaired = valid_data(data)
    return model if repaired is data else type(model).model_validate(repaired)
