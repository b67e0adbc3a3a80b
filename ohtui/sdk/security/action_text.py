"""What a signature analyzer reads of an action, with text disguises folded away.

Two bodies of text: what the call will do (every key and string value of its arguments, the
validated action's fields, the tool's name) and what the model said about it (summary,
reasoning, thought). Shell and code signatures read only the first, so a model reasoning
about `rm -rf` is not a model running it; prompt injection is looked for in both.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ohtui.sdk.event.llm_convertible.action import ActionEvent

MAX_SCANNED = 256 * 1024
"""Characters read of each body of text; what lies beyond is not checked (and says so)."""

_ASCII_CONTROLS = dict.fromkeys([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
# Invisible characters that are not of a format or control category: fillers, blanks and
# the marks that only select a glyph's variant.
_INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0")
_SELECTORS = ((0xFE00, 0xFE0F), (0xE0100, 0xE01EF))


@dataclass(frozen=True, slots=True)
class ActionText:
    """An action's text as read for signatures (not yet normalised)."""

    executable: tuple[str, ...]
    """What the call will do: argument keys and values, the action's fields, the tool name."""
    commentary: tuple[str, ...]
    """What the model said about it: summary, reasoning, thought."""
    truncated: bool = False
    """Whether there was more than MAX_SCANNED characters of either."""


def action_text(action: ActionEvent) -> ActionText:
    """The two bodies of text of `action`, each cut at MAX_SCANNED characters."""
    executable = _Bounded()
    for piece in _arguments(action.tool_call.arguments):
        executable.add(piece)
    if action.action is not None:
        for piece in _strings(action.action.model_dump(exclude={"kind"})):
            executable.add(piece)
    executable.add(action.tool_name)
    commentary = _Bounded()
    for words in (action.summary, action.reasoning_content, *(t.text for t in action.thought)):
        if words:
            commentary.add(words)
    return ActionText(
        tuple(executable.pieces),
        tuple(commentary.pieces),
        executable.truncated or commentary.truncated,
    )


def normalize_text(text: str, *, collapse: bool = True) -> str:
    """`text` as a person reads it: invisible characters dropped, look-alike letters (full
    width, mathematical) folded by NFKC and, with `collapse`, each run of white space made
    one space (none at the ends). Applying it twice changes nothing more."""
    if not text.isascii():
        # Judge each distinct character once: texts are long, alphabets are short.
        hidden = {ord(c): None for c in set(text) if not c.isascii() and _hidden(c)}
        text = unicodedata.normalize("NFKC", text.translate(hidden))
    text = text.translate(_ASCII_CONTROLS)
    return " ".join(text.split()) if collapse else text


def _hidden(char: str) -> bool:
    category = unicodedata.category(char)
    if category in ("Cf", "Cc"):  # format and (C1) control characters
        return True
    code = ord(char)
    return char in _INVISIBLE or any(low <= code <= high for low, high in _SELECTORS)


class _Bounded:
    """Distinct pieces of text up to MAX_SCANNED characters in all."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.truncated = False
        self._seen: set[str] = set()
        self._left = MAX_SCANNED

    def add(self, piece: str) -> None:
        if piece in self._seen:
            return
        if len(piece) > self._left:
            self.truncated = True
            piece = piece[: self._left]
        if piece:
            self._seen.add(piece)
            self.pieces.append(piece)
            self._left -= len(piece)


def _arguments(raw: str) -> Iterator[str]:
    """The keys and string values of a call's JSON arguments; the raw text if not JSON."""
    try:
        parsed = json.loads(raw) if raw else {}
    except (ValueError, RecursionError):  # malformed, or nested beyond the decoder's reach
        yield raw
        return
    yield from _strings(parsed)


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value, dictionary keys included, without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            for key, inner in reversed(item.items()):
                stack.extend((inner, str(key)))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))


# --- the SDK's names ------------------------------------------------------------------------
# The OpenHands SDK keeps these helpers in `security.defense_in_depth.utils` under private
# names; code and tests written against it find ohtui's counterparts by them.

_EXTRACT_HARD_CAP = MAX_SCANNED
"""The SDK's name for MAX_SCANNED: characters read of each body of text."""

_normalize = normalize_text
"""The SDK's name for `normalize_text`."""


def _extract_exec_content(action: ActionEvent) -> str:
    """What the call will do, as one text (the SDK's executable corpus)."""
    return " ".join(action_text(action).executable)


def _extract_content(action: ActionEvent) -> str:
    """What the call will do, then what the model said about it, as one text."""
    text = action_text(action)
    return " ".join((*text.executable, *text.commentary))
