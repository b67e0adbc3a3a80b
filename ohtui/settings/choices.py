"""The user's words for deciding on actions: confirmation policies and approval-rule scopes.

Enums whose members carry their labels, as httpx's `codes` carry their phrase; a member is
its config.toml value (a `str`). Standard library only: `ohtui --help` and the TUI's first
frame use them without loading pydantic or the engine (a policy's mapping to the engine's
objects imports it on use).
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from ohtui.sdk import ConfirmationPolicyBase


class LabelledEnum(StrEnum):
    """A str enum whose members are written `value, *fields`: the fields fill the attributes
    the subclass annotates, in order (e.g. `label: str`)."""

    def __new__(cls, value: str, *fields: str) -> Self:
        # (fields may be left out only so that a lookup, `Enum("value")`, type-checks)
        member = str.__new__(cls, value)
        member._value_ = value
        for name, field in zip(cls.__annotations__, fields, strict=False):
            setattr(member, name, field)
        return member


class ConfirmationPolicy(LabelledEnum):
    """Which actions wait for the user's approval (config.toml: [confirmation] policy)."""

    label: str
    """Short words for the status bar and the pickers, e.g. "confirm risky"."""
    help: str
    """What the policy does, in one line."""

    ALWAYS = "always", "always confirm", "every action waits for you"
    RISKY = "risky", "confirm risky", "actions rated MEDIUM or HIGH, or unrated, wait"
    NEVER = "never", "never confirm", "actions run at once"

    def next(self) -> ConfirmationPolicy:
        """The policy after this one, in the order always → risky → never → always."""
        members = list(ConfirmationPolicy)
        return members[(members.index(self) + 1) % len(members)]

    @classmethod
    def parse(cls, text: str) -> ConfirmationPolicy:
        """The policy named `text` (any case); ValueError naming the choices."""
        try:
            return cls(text.strip().lower())
        except ValueError:
            names = ", ".join(member.value for member in cls)
            raise ValueError(f"unknown confirmation policy {text!r}; use {names}") from None

    def to_engine(self) -> ConfirmationPolicyBase:
        """The engine's policy: "risky" asks for MEDIUM risk and up, and for actions no
        analyzer could rate."""
        from ohtui.sdk import AlwaysConfirm, ConfirmRisky, NeverConfirm, SecurityRisk

        if self is ConfirmationPolicy.ALWAYS:
            return AlwaysConfirm()
        if self is ConfirmationPolicy.NEVER:
            return NeverConfirm()
        return ConfirmRisky(threshold=SecurityRisk.MEDIUM)

    @classmethod
    def from_engine(cls, policy: ConfirmationPolicyBase) -> ConfirmationPolicy:
        """The user's policy for an engine policy (an approval-rules policy: its fallback;
        one of no other kind: RISKY)."""
        from ohtui.sdk import AlwaysConfirm, ApprovalRulesPolicy, NeverConfirm

        if isinstance(policy, ApprovalRulesPolicy):
            policy = policy.fallback
        if isinstance(policy, AlwaysConfirm):
            return cls.ALWAYS
        if isinstance(policy, NeverConfirm):
            return cls.NEVER
        return cls.RISKY


class RuleScope(LabelledEnum):
    """How long and where an "always allow" rule holds."""

    label: str
    """Where the rule holds, in the user's words."""

    SESSION = "session", "this session"
    WORKSPACE = "workspace", "this workspace"
    USER = "user", "always (all workspaces)"

    @property
    def lasting(self) -> bool:
        """Whether the rule is saved (outlives the conversation)."""
        return self is not RuleScope.SESSION


class ContextStrategy(LabelledEnum):
    """How a long conversation is kept within the model's window ([context] strategy)."""

    label: str
    """Its name in the settings screen."""

    NONE = "none", "none (the whole history; a full window is an error)"
    SUMMARIZING_CONDENSER = "summarizing_condenser", "summarizing condenser"
    SLIDING_WINDOW = "sliding_window", "sliding window"
    SUMMARIZING_MANAGER = "summarizing_manager", "summarizing manager"
