"""The user's words for policies and scopes: enums whose members carry their labels."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ohtui.settings.choices import ConfirmationPolicy, RuleScope
from ohtui.settings.schema import Settings


def test_each_policy_carries_its_label_and_help() -> None:
    assert [(p.value, p.label) for p in ConfirmationPolicy] == [
        ("always", "always confirm"),
        ("risky", "confirm risky"),
        ("never", "never confirm"),
    ]
    assert ConfirmationPolicy.RISKY.help == "actions rated MEDIUM or HIGH, or unrated, wait"
    assert all(p.help for p in ConfirmationPolicy)


def test_a_policy_is_its_config_value() -> None:
    assert ConfirmationPolicy("never") is ConfirmationPolicy.NEVER
    assert ConfirmationPolicy.NEVER == "never" and f"{ConfirmationPolicy.NEVER}" == "never"


def test_policies_cycle_in_order() -> None:
    seen = [ConfirmationPolicy.ALWAYS]
    for _ in range(3):
        seen.append(seen[-1].next())
    assert seen == ["always", "risky", "never", "always"]


def test_an_unknown_policy_is_named_with_the_choices() -> None:
    assert ConfirmationPolicy.parse(" Risky ") is ConfirmationPolicy.RISKY
    with pytest.raises(ValueError, match="unknown confirmation policy 'sometimes'; use always"):
        ConfirmationPolicy.parse("sometimes")


def test_each_scope_carries_its_label() -> None:
    assert {s: s.label for s in RuleScope} == {
        "session": "this session",
        "workspace": "this workspace",
        "user": "always (all workspaces)",
    }
    assert [s for s in RuleScope if s.lasting] == [RuleScope.WORKSPACE, RuleScope.USER]


def test_settings_read_the_policy_as_the_enum_and_write_it_as_text() -> None:
    settings = Settings.model_validate({"confirmation": {"policy": "never"}})
    assert settings.confirmation.policy is ConfirmationPolicy.NEVER
    assert settings.to_toml()["confirmation"]["policy"] == "never"
    assert type(settings.to_toml()["confirmation"]["policy"]) is str
    assert Settings().confirmation.policy is ConfirmationPolicy.RISKY


def test_the_command_line_offers_the_policies_without_loading_pydantic() -> None:
    probe = (
        "import sys; from ohtui.cli import build_parser; p = build_parser(); "
        "a = p.parse_args(['--confirm', 'never']); print(a.confirm, 'pydantic' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["never", "False"]
