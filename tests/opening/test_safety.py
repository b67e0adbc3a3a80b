"""The policy a conversation opens with, and the user's policies as the engine's."""

from __future__ import annotations

from pathlib import Path

import pytest

from ohtui.opening.safety import policy_for
from ohtui.sdk import AlwaysConfirm, ApprovalRulesPolicy, ConfirmRisky, NeverConfirm, SecurityRisk
from ohtui.settings.choices import ConfirmationPolicy
from ohtui.settings.overrides import Override
from ohtui.settings.profile import Profile


@pytest.mark.parametrize("policy", list(ConfirmationPolicy))
def test_each_policy_comes_back_from_the_engines(policy: ConfirmationPolicy) -> None:
    engine = policy.to_engine()
    assert ConfirmationPolicy.from_engine(engine) is policy
    rules = ApprovalRulesPolicy(rules=[], fallback=engine)
    assert ConfirmationPolicy.from_engine(rules) is policy  # a rules policy: its fallback


def test_risky_asks_from_medium_risk_up() -> None:
    assert isinstance(ConfirmationPolicy.ALWAYS.to_engine(), AlwaysConfirm)
    assert isinstance(ConfirmationPolicy.NEVER.to_engine(), NeverConfirm)
    risky = ConfirmationPolicy.RISKY.to_engine()
    assert isinstance(risky, ConfirmRisky) and risky.threshold is SecurityRisk.MEDIUM


def _profile(tmp_path: Path, chosen: str | None = None) -> Profile:
    config = tmp_path / "config.toml"
    config.write_text('[confirmation]\npolicy = "always"\n')
    overrides = {("confirmation", "policy"): Override(chosen, "--confirm")} if chosen else {}
    return Profile(config, overrides, use_keyring=False, environ={}).load()


def test_a_resumed_conversation_keeps_its_saved_policy_unless_this_run_chose_one(
    tmp_path: Path,
) -> None:
    saved = NeverConfirm()
    assert policy_for(_profile(tmp_path), True, saved) is ConfirmationPolicy.NEVER
    chosen = _profile(tmp_path, "risky")
    assert policy_for(chosen, True, saved) is ConfirmationPolicy.RISKY


def test_a_new_conversation_takes_the_settings_policy(tmp_path: Path) -> None:
    assert policy_for(_profile(tmp_path), False, NeverConfirm()) is ConfirmationPolicy.ALWAYS
