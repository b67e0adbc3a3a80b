"""An action ohtui would ask about, as `session/request_permission`, and the client's answer
as the decision the TUI's approval screen would make.

The options: allow once; allow always (the rules the TUI's `a` suggests, for this session,
saved on the conversation as the TUI saves them); reject once; reject always (a deny rule,
offered when one rule names the action). An action no rule can describe safely gets no
"always" option. Imported once the engine and the protocol package have loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from acp.schema import AllowedOutcome, PermissionOption, RequestPermissionResponse, ToolCallUpdate

from ohtui.acp import tool_calls
from ohtui.opening.safety import RuleDraft
from ohtui.sdk import ActionEvent
from ohtui.sdk.security import suggest_rules
from ohtui.settings.choices import ConfirmationPolicy, RuleScope

REJECTED = "The user rejected this action."


class Choice(Enum):
    """What the client answered, by the option's id."""

    ALLOW_ONCE = "allow_once"
    ALLOW_ALWAYS = "allow_always"
    REJECT_ONCE = "reject_once"
    REJECT_ALWAYS = "reject_always"

    @property
    def allows(self) -> bool:
        """Whether the action runs."""
        return self in (Choice.ALLOW_ONCE, Choice.ALLOW_ALWAYS)


@dataclass(frozen=True)
class Question:
    """One permission request: the tool call shown, the options, the rules behind them."""

    action: ActionEvent
    tool_call: ToolCallUpdate
    options: list[PermissionOption]
    rules: tuple[RuleDraft, ...]
    """What "always" saves (empty: no "always" option)."""
    meta: dict[str, str]
    """ohtui's own fields of the request (`_meta.ohtui`): the risk and the reason."""


def question(
    action: ActionEvent, reason: str, working_dir: str, policy: ConfirmationPolicy
) -> Question:
    """The permission request for `action`, waiting because of `reason` under `policy`."""
    suggestion = suggest_rules(action, working_dir)
    rules = tuple(
        RuleDraft(r.tool, r.command_prefix, r.path_glob, RuleScope.SESSION)
        for r in suggestion.rules
    )
    risk = action.security_risk.value
    why = action.security_risk_reason
    if reason == f"risk {risk}":  # the policy's own verdict: say which policy
        reason = f"the confirmation policy is '{policy.label}' ({policy.help})"
    lines = [f"**Risk: {risk}.** ohtui asks because {reason}."]
    if why and why not in reason and why != f"the model: rated {risk}":  # says more
        lines.append(f"Rated {risk}: {why}")
    if not rules and suggestion.reason:
        lines.append(f'No "always" rule is offered: {suggestion.reason}.')
    content: list[tool_calls.Content] = [tool_calls.text_content("\n\n".join(lines))]
    content.extend(tool_calls.proposed_content(action, working_dir) or [])
    tool_call = ToolCallUpdate(
        tool_call_id=action.tool_call_id,
        title=tool_calls.title_of(action),
        kind=tool_calls.kind_of(action),
        status="pending",
        content=content,
        locations=tool_calls.locations_of(action, working_dir),
        raw_input=tool_calls.raw_input_of(action),
    )
    options = [
        PermissionOption(option_id=Choice.ALLOW_ONCE.value, name="Allow once", kind="allow_once")
    ]
    if rules:
        options.append(
            PermissionOption(
                option_id=Choice.ALLOW_ALWAYS.value,
                name=f"Always allow {describe(rules)} (this session)",
                kind="allow_always",
            )
        )
    options.append(
        PermissionOption(option_id=Choice.REJECT_ONCE.value, name="Reject", kind="reject_once")
    )
    if len(rules) == 1:
        options.append(
            PermissionOption(
                option_id=Choice.REJECT_ALWAYS.value,
                name=f"Always reject {rules[0].describe()} (this session)",
                kind="reject_always",
            )
        )
    meta = {"risk": risk, "reason": reason}
    if why:
        meta["risk_reason"] = why
    return Question(action, tool_call, options, rules, meta)


def choice_of(response: RequestPermissionResponse, asked: Question) -> Choice | None:
    """The option the client chose (None: it cancelled the request). An id ohtui did not
    offer is a rejection: nothing runs on an answer that cannot be read."""
    outcome = response.outcome
    if not isinstance(outcome, AllowedOutcome):
        return None
    offered = {option.option_id for option in asked.options}
    if outcome.option_id not in offered:
        return Choice.REJECT_ONCE
    return Choice(outcome.option_id)


def describe(rules: tuple[RuleDraft, ...]) -> str:
    """E.g. "terminal commands starting with `cd` or `npm test`"."""
    prefixes = [d.command_prefix for d in rules if d.command_prefix]
    if len(rules) > 1 and len(prefixes) == len(rules) and len({d.tool for d in rules}) == 1:
        return f"{rules[0].tool} commands starting with " + " or ".join(f"`{p}`" for p in prefixes)
    return "; ".join(d.describe() for d in rules)
