"""Chat messages that keep their JSON: a request body costs a join, not a walk of the history.

A long conversation sends thousands of messages with every request, all but the newest
unchanged since the last one. An `EncodedMessage` is a chat-completions dict that cannot
change once made and encodes itself to JSON once; `encode_messages` joins those encodings,
so building a request body costs a copy of bytes however long the history is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

_NOT_SENT = ("thinking_blocks",)
"""Keys of our message dicts that OpenAI-compatible servers do not take (Anthropic's)."""


class EncodedMessage(dict[str, Any]):
    """A chat-completions message dict that is never changed, with its JSON cached."""

    __slots__ = ("_json",)

    def __init__(self, message: Mapping[str, Any]) -> None:
        super().__init__(message)
        self._json: str | None = None

    def json(self) -> str:
        """This message as JSON, for an OpenAI-compatible server (encoded once)."""
        if self._json is None:
            self._json = _dumps(self)
        return self._json

    def _refuse(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise TypeError(
            "an EncodedMessage is never changed (its JSON is cached): build a new one "
            "with EncodedMessage({**message, ...})"
        )

    __setitem__ = __delitem__ = setdefault = update = pop = popitem = clear = _refuse
    __ior__ = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (EncodedMessage, (dict(self),))


def _dumps(message: Mapping[str, Any]) -> str:
    """JSON of a message as litellm sends it: no empty (None) fields, no Anthropic ones."""
    if any(v is None or k in _NOT_SENT for k, v in message.items()):
        message = {k: v for k, v in message.items() if v is not None and k not in _NOT_SENT}
    return json.dumps(message, separators=(",", ":"))


def encode_messages(messages: Iterable[Mapping[str, Any]]) -> str:
    """A JSON array of `messages`, reusing each EncodedMessage's cached encoding."""
    return (
        "["
        + ",".join(m.json() if isinstance(m, EncodedMessage) else _dumps(m) for m in messages)
        + "]"
    )
