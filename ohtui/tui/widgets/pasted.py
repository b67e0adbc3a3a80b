"""Long pastes in the composer: shown as a one-line chip, sent as the whole text.

A paste of more than PASTE_LINES lines or PASTE_CHARS characters goes into the input as a chip
such as "[pasted 5,000 lines #1]"; the text it stands for is kept here and put back in its
place when the message is sent (or when the user expands the chips to edit them).
"""

from __future__ import annotations

import re

PASTE_LINES = 5
PASTE_CHARS = 500
_CHIP = re.compile(r"\[pasted [\d,]+ (?:lines|characters) #(\d+)\]")


class PastedBlocks:
    """The long pastes of one draft, by chip number."""

    def __init__(self) -> None:
        self._blocks: dict[int, str] = {}
        self._next = 1

    @staticmethod
    def is_long(text: str) -> bool:
        """Whether a paste is long enough to be collapsed."""
        return text.count("\n") >= PASTE_LINES or len(text) > PASTE_CHARS

    def collapse(self, text: str) -> str:
        """Keep `text` and return the chip that stands for it."""
        number = self._next
        self._next += 1
        self._blocks[number] = text
        lines = text.rstrip("\n").count("\n") + 1
        size = f"{lines:,} lines" if lines > 1 else f"{len(text):,} characters"
        return f"[pasted {size} #{number}]"

    def expand(self, text: str) -> str:
        """`text` with every chip of this draft replaced by the text it stands for."""
        if not self._blocks:
            return text

        def block(match: re.Match[str]) -> str:
            return self._blocks.get(int(match.group(1)), match.group(0))

        return _CHIP.sub(block, text)

    def has_chips(self, text: str) -> bool:
        """Whether `text` shows a chip of this draft."""
        return any(int(m.group(1)) in self._blocks for m in _CHIP.finditer(text))

    def chip_ending(self, text: str) -> int:
        """The length of the chip `text` ends with (0 if it ends with none)."""
        for match in _CHIP.finditer(text):
            if match.end() == len(text) and int(match.group(1)) in self._blocks:
                return len(match.group(0))
        return 0

    def clear(self) -> None:
        """Forget every paste (the draft was sent or cleared)."""
        self._blocks.clear()
