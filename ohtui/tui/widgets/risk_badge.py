"""The risk badge (" HIGH ", " LOW "...) and rich renderables for risk levels and diffs."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

RISK_LEVELS: tuple[str, ...] = ("UNKNOWN", "LOW", "MEDIUM", "HIGH")

# Plain attributes, no colours: a Text outside the widget tree cannot see the app theme, and
# attributes alone keep the levels apart on light terminals and under NO_COLOR.
_RISK_TEXT_STYLES: dict[str, str] = {
    "HIGH": "bold reverse",
    "MEDIUM": "reverse",
    "LOW": "bold",
    "UNKNOWN": "dim",
}

_DIFF_HEADER_PREFIXES = ("--- ", "+++ ", "diff ", "index ", "new file", "deleted file")


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


def risk_text(risk: str) -> Text:
    """The risk level as a badge-like Text, e.g. " HIGH " in bold reverse."""
    level = _normalize(risk)
    return Text(f" {level} ", style=_RISK_TEXT_STYLES[level])


def diff_text(diff: str) -> Text:
    """A unified diff coloured line by line: + green, - red, @@ cyan, file headers bold."""
    # Named ANSI colours follow the terminal's own palette, so light and dark terminals both read.
    text = Text(end="")
    in_hunk = False
    lines = diff.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("diff "):
            in_hunk = False
        # Inside a hunk "--- x" is a removed line "-- x", not a file header.
        if not in_hunk and line.startswith(_DIFF_HEADER_PREFIXES):
            style = "bold"
        elif line.startswith("@@"):
            in_hunk = True
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = ""
        text.append(line, style=style)
        if number < len(lines) - 1:
            text.append("\n")
    return text
