"""SecurityRisk: how dangerous a tool call is judged to be (a tool schema asks the model)."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.text import Text


_ORDER = {"LOW": 1, "MEDIUM": 2, "HIGH": 3}
_COLOR = {"UNKNOWN": "white", "LOW": "green", "MEDIUM": "yellow", "HIGH": "red"}
_STYLE = {
    "UNKNOWN": "bold white on grey37",
    "LOW": "bold black on green",
    "MEDIUM": "bold black on yellow",
    "HIGH": "bold white on red",
}


class SecurityRisk(str, Enum):
    """UNKNOWN, LOW, MEDIUM or HIGH. LOW < MEDIUM < HIGH; UNKNOWN is not comparable."""

    UNKNOWN = "UNKNOWN"
    LOW = "LOW"
    MEDIUM = "MEDIUM"
    HIGH = "HIGH"

    def _rank(self, other: Any) -> tuple[int, int]:
        if not isinstance(other, SecurityRisk):
            raise TypeError(f"cannot compare SecurityRisk with {type(other).__name__}")
        if SecurityRisk.UNKNOWN in (self, other):
            raise ValueError("UNKNOWN risk cannot be compared; decide how to treat it first")
        return _ORDER[self.value], _ORDER[other.value]

    def __lt__(self, other: Any) -> bool:
        a, b = self._rank(other)
        return a < b

    def __le__(self, other: Any) -> bool:
        a, b = self._rank(other)
        return a <= b

    def __gt__(self, other: Any) -> bool:
        a, b = self._rank(other)
        return a > b

    def __ge__(self, other: Any) -> bool:
        a, b = self._rank(other)
        return a >= b

    def is_riskier(self, other: SecurityRisk, reflexive: bool = True) -> bool:
        """Whether this risk is at least (or, with reflexive=False, above) `other`."""
        return self >= other if reflexive else self > other

    def get_color(self) -> str:
        """The rich colour name that stands for this risk."""
        return _COLOR[self.value]

    @property
    def visualize(self) -> Text:
        """A coloured badge."""
        from rich.text import Text

        return Text(f" {self.value} ", style=_STYLE[self.value])

    def __str__(self) -> str:
        return self.value
