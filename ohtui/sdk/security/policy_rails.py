"""PolicyRailSecurityAnalyzer: a few composed threats, each a named rail that rates HIGH.

A rail fires on a combination (something downloaded *and* run) or a target (a whole disk,
the root or home directory), read as bash reads it. Each argument of a call is judged
apart, so words from two fields never combine into a threat, and the model's own words
are never read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ohtui.sdk.security.action_text import action_text, normalize_text
from ohtui.sdk.security.analyzer import _FROZEN, RiskAssessment, SecurityAnalyzerBase
from ohtui.sdk.security.command_rules import SYSTEM_PATHS
from ohtui.sdk.security.risk import SecurityRisk
from ohtui.sdk.security.shell import CommandLine, parse_command
from ohtui.sdk.security.shell_scan import forces_recursion

if TYPE_CHECKING:
    from ohtui.sdk.event.llm_convertible.action import ActionEvent

# Stable rail ids: never rename one.
RAIL_FETCH_TO_EXEC = "fetch-to-exec"
RAIL_RAW_DISK_OP = "raw-disk-op"
RAIL_CATASTROPHIC_DELETE = "catastrophic-delete"

_FETCHERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh"})
_HOME = frozenset({"~", "~/", "~/*", "$HOME", "${HOME}", "$HOME/", "$HOME/*", "/root"})


@dataclass(frozen=True, slots=True)
class RailDecision:
    """HIGH with the rail that fired and why, or LOW when none did."""

    outcome: SecurityRisk
    rule_name: str = ""
    reason: str = ""


def _fetch_to_exec(line: CommandLine) -> bool:
    return bool(line.fed_code) and any(c.name.lower() in _FETCHERS for c in line.commands)


def _raw_disk(line: CommandLine) -> bool:
    return any(
        (c.name.lower() == "dd" and any(w.startswith("of=/dev/") for w in c.args))
        or c.name.lower().startswith("mkfs")
        for c in line.commands
    )


def _catastrophic_delete(line: CommandLine) -> bool:
    return any(
        c.name.lower() == "rm"
        and forces_recursion(c)
        and any(_critical(w) for i, w in enumerate(c.args, start=1) if i not in c.unknown)
        for c in line.commands
    )


def _critical(target: str) -> bool:
    if target in _HOME:
        return True
    path = os.path.normpath(target) if target.startswith("/") else ""
    return path in ("/", "/*") or any(
        path == p or path.startswith(p + "/") for p in SYSTEM_PATHS if p != "/"
    )


_RAILS: tuple[tuple[str, str, Callable[[CommandLine], bool]], ...] = (
    (RAIL_FETCH_TO_EXEC, "runs what it downloads", _fetch_to_exec),
    (RAIL_RAW_DISK_OP, "writes to a raw disk or formats one", _raw_disk),
    (
        RAIL_CATASTROPHIC_DELETE,
        "deletes the root, home or a system directory recursively and by force",
        _catastrophic_delete,
    ),
)


def evaluate_rails(segments: Iterable[str]) -> RailDecision:
    """The first rail any one segment trips (each read as bash, disguises folded away)."""
    for segment in segments:
        readable = normalize_text(segment, collapse=False)
        # Also with line breaks as spaces, as a flat reader would take them.
        lines = [
            parse_command(text) for text in dict.fromkeys((readable, normalize_text(readable)))
        ]
        for rail, reason, fires in _RAILS:
            if any(fires(line) for line in lines):
                return RailDecision(SecurityRisk.HIGH, rail, reason)
    return RailDecision(SecurityRisk.LOW)


class PolicyRailSecurityAnalyzer(SecurityAnalyzerBase):
    """HIGH when a policy rail fires on what the call will do, else LOW.

    Rails: fetch-to-exec (a download run by a shell or interpreter), raw-disk-op (`dd` to
    a device, `mkfs`), catastrophic-delete (`rm -rf` of the root, home or system
    directories). Combine with other analyzers in an EnsembleSecurityAnalyzer.
    """

    model_config = _FROZEN

    @property
    def name(self) -> str:
        """Shown as "policy rails"."""
        return "policy rails"

    def security_risk(self, action: ActionEvent) -> SecurityRisk:
        """HIGH if a rail fires, else LOW (UNKNOWN if the call is too long to read)."""
        return self._assess(action).risk

    def _assess(self, action: ActionEvent) -> RiskAssessment:
        text = action_text(action)
        decision = evaluate_rails(text.executable)
        if decision.outcome is SecurityRisk.HIGH:
            reason = f"{decision.reason} (rail {decision.rule_name})"
            return RiskAssessment(SecurityRisk.HIGH, reason, self.name)
        if text.truncated:
            return RiskAssessment(SecurityRisk.UNKNOWN, "too long to check in full", self.name)
        return RiskAssessment(SecurityRisk.LOW, "no rail fired", self.name)
