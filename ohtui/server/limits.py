"""What one request may cost the server: its body's size, and what its JSON builds.

A body is counted as it arrives (`BodyLimit`, in the app) and refused with 413 past
`MAX_BODY_BYTES`; socket messages have the same bound (uvicorn's `ws_max_size`, close code
1009). Before a body is parsed, its JSON is measured: nested deeper than `MAX_DEPTH`
(Python's parser answers a 200,000-deep array with a RecursionError), or holding more than
`MAX_VALUES` values (16 MiB of `[],` parse into 375 MiB of lists), it is refused with a
sentence. The measure runs at C speed but for a loop over at most 2 x MAX_VALUES brackets.
This module imports nothing from ohtui.sdk.
"""

from __future__ import annotations

import json
from typing import Any

MAX_BODY_BYTES = 16 * 1024 * 1024
"""The largest request body or socket message: a message with a few screenshots fits."""
MAX_DEPTH = 64
"""The deepest JSON nesting accepted; what clients send nests less than ten levels."""
MAX_VALUES = 100_000
"""The most values (strings, numbers, arrays, objects...) one JSON body may hold; what
clients send holds hundreds."""

_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


class JSONBodyError(ValueError):
    """The body (or message) is not JSON we accept; the message says why, for the client."""


def too_large(size: int) -> str:
    """The sentence for a body over the limit (`size`: its declared or counted bytes)."""
    return (
        f"The request body is larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB "
        f"({size:,} bytes or more), the most ohtui serve accepts."
    )


def check_shape(data: bytes) -> None:
    """JSONBodyError when `data` (JSON text) holds more than MAX_VALUES values or nests
    deeper than MAX_DEPTH; brackets and commas in strings do not count. Text that is not
    JSON may pass: the parser says what is wrong with it."""
    # Drop escaped backslashes, then escaped quotes: every quote left opens or closes a
    # string, so every other piece between quotes is outside the strings.
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    if unescaped.count(b'"') > 2 * MAX_VALUES:  # each string is a key or a value
        raise _too_many()
    outside = b"".join(unescaped.split(b'"')[0::2])
    level = 0
    for byte in outside.translate(None, _NOT_BRACKETS)[: 2 * MAX_VALUES]:
        if byte in b"[{":
            level += 1
            if level > MAX_DEPTH:
                raise JSONBodyError(
                    f"The JSON is nested more than {MAX_DEPTH} levels deep; ohtui serve "
                    "accepts no deeper nesting."
                )
        else:
            level -= 1
    if outside.count(b",") + outside.count(b"[") + outside.count(b"{") >= MAX_VALUES:
        raise _too_many()


def _too_many() -> JSONBodyError:
    return JSONBodyError(
        f"The JSON holds more than {MAX_VALUES:,} values; ohtui serve accepts no more."
    )


def parse_json(data: bytes | str) -> Any:
    """The JSON value of `data` (UTF-8); JSONBodyError saying what is wrong with it."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    check_shape(raw)
    try:
        text = raw.decode("utf-8", "surrogatepass") if isinstance(data, bytes) else data
        return json.loads(text)
    except UnicodeDecodeError as exc:
        raise JSONBodyError(f"what was sent is not UTF-8 text: {exc}") from exc
    except (ValueError, RecursionError) as exc:
        raise JSONBodyError(f"what was sent is not JSON: {exc}") from exc
