"""RiskBadge: " HIGH ", " LOW "... as a widget coloured by the theme."""

from __future__ import annotations

from typing import Any

from textual.reactive import reactive
from textual.widgets import Static

RISK_LEVELS: tuple[str, ...] = ("UNKNOWN", "LOW", "MEDIUM", "HIGH")


def _normalize(risk: str) -> str:
    """The level in upper case, UNKNOWN for anything unrecognised."""
    level = risk.upper()
    return level if level in RISK_LEVELS else "UNKNOWN"


class RiskBadge(Static):
    """A one-line coloured badge for a risk level; the colour comes from theme variables."""

    DEFAULT_CSS = """
    RiskBadge {
        width: auto;
        height: 1;
        text-style: bold;
        color: $text-muted;
        background: $panel;
        &.-high {
            background: $error;
            color: auto 90%;
        }
        &.-medium {
            background: $warning;
            color: auto 90%;
        }
        &.-low {
            background: $success;
            color: auto 90%;
        }
        &.-unknown {
            background: $panel;
            color: $text-muted;
        }
    }
    """

    risk: reactive[str] = reactive("UNKNOWN", init=False)

    def __init__(self, risk: str = "UNKNOWN", **kwargs: Any) -> None:
        level = _normalize(risk)
        super().__init__(f" {level} ", markup=False, **kwargs)
        self.add_class(f"-{level.lower()}")
        self.set_reactive(RiskBadge.risk, level)

    def validate_risk(self, risk: str) -> str:
        """Accept any case; unknown names become UNKNOWN."""
        return _normalize(risk)

    def watch_risk(self, old: str, new: str) -> None:
        """Swap the level class and the label."""
        self.remove_class(f"-{old.lower()}")
        self.add_class(f"-{new.lower()}")
        self.update(f" {new} ")
