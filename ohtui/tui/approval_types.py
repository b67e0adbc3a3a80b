"""Plain data the approval modal shows and returns (no engine types: the session converts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ohtui.opening.safety import RuleDraft
from ohtui.settings.choices import ConfirmationPolicy

Risk = Literal["UNKNOWN", "LOW", "MEDIUM", "HIGH"]


def describe_rules(drafts: Sequence[RuleDraft]) -> str:
    """E.g. "terminal commands starting with `cd` or `npm test`"."""
    prefixes = [d.command_prefix for d in drafts if d.command_prefix]
    if len(drafts) > 1 and len(prefixes) == len(drafts) and len({d.tool for d in drafts}) == 1:
        return f"{drafts[0].tool} commands starting with " + " or ".join(f"`{p}`" for p in prefixes)
    return "; ".join(d.describe() for d in drafts)


@dataclass(frozen=True)
class PendingActionView:
    """One action waiting for approval, as the modal shows it."""

    action_id: str
    tool: str
    summary: str
    """One line: the command, or `edit src/app.py`."""
    detail: str
    """The full command or path (may be several lines)."""
    risk: Risk = "UNKNOWN"
    risk_reason: str | None = None
    diff: str | None = None
    """A unified diff preview for file edits."""
    suggested_rules: tuple[RuleDraft, ...] = ()
    """The "always allow" rules that would cover it: one per part of a command."""
    no_rule_reason: str = ""
    """Why no rule is suggested (when `suggested_rules` is empty)."""
    sandboxed: bool = False
    """It would run in the sandbox, so it may be approved to run outside it instead."""


@dataclass(frozen=True)
class ApprovalDecision:
    """What the user decided in the modal. Ids not listed in either stay pending."""

    approved: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()
    reason: str = ""
    """The rejection reason sent to the agent (empty: a default is used)."""
    rules: tuple[RuleDraft, ...] = ()
    """"Always allow" rules to save; the actions they cover are approved too."""
    policy: ConfirmationPolicy | None = None
    """A new confirmation policy, if the user switched."""
    outside_sandbox: tuple[str, ...] = ()
    """Approved actions that run outside the sandbox, once."""
    later: bool = False
    """Nothing was decided (the actions keep waiting); only `policy` applies."""
