"""RiskBadge: " HIGH ", " LOW "... as a widget coloured by the theme."""

from __future__ import annotations

from typing import Any

from textual.reactive import reactive
from textual.widgets import Static

from ohtui.tui.screen_reader import reading_aloud

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

    def on_mount(self) -> None:
        """Screen-reader mode: the level in words ("HIGH risk"), not a coloured block."""
        if reading_aloud(self):
            self.update(self._label(self.risk))

    def _label(self, level: str) -> str:
        if not reading_aloud(self):
            return f" {level} "
        return "risk unknown" if level == "UNKNOWN" else f"{level} risk"

    def validate_risk(self, risk: str) -> str:
        """Accept any case; unknown names become UNKNOWN."""
        return _normalize(risk)

    def watch_risk(self, old: str, new: str) -> None:
        """Swap the level class and the label."""
        self.remove_class(f"-{old.lower()}")
        self.add_class(f"-{new.lower()}")
        self.update(self._label(new))
