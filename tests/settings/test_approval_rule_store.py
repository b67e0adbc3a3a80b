"""ApprovalRuleStore: lasting approval rules on disk."""

from __future__ import annotations

import json
from pathlib import Path

from ohtui.sdk import ApprovalRule
from ohtui.settings.approval_rules import ApprovalRuleStore


def test_user_and_workspace_rules_are_kept_and_filtered_by_workspace(tmp_path: Path) -> None:
    store = ApprovalRuleStore(tmp_path / "rules.json")
    everywhere = ApprovalRule(tool="terminal", command_prefix="git status", scope="user")
    here = ApprovalRule(tool="terminal", command_prefix="make", scope="workspace", workspace="/a")
    there = ApprovalRule(
        tool="terminal", command_prefix="npm test", scope="workspace", workspace="/b"
    )
    session = ApprovalRule(tool="terminal", command_prefix="ls", scope="session")
    for rule in (everywhere, here, there, session):
        store.add(rule)
    again = ApprovalRuleStore(tmp_path / "rules.json")
    assert {r.command_prefix for r in again.rules_for("/a")} == {"git status", "make"}
    assert {r.command_prefix for r in again.rules_for("/b")} == {"git status", "npm test"}
    again.remove([everywhere.id])
    assert {
        r.command_prefix for r in ApprovalRuleStore(tmp_path / "rules.json").rules_for("/a")
    } == {"make"}


def test_a_damaged_file_is_set_aside_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text("{not json", encoding="utf-8")
    store = ApprovalRuleStore(path)
    assert store.rules_for("/a") == []
    assert store.problem is not None and "damaged" in store.problem
    aside = list(tmp_path.glob("rules.json.damaged-*"))
    assert len(aside) == 1 and aside[0].read_text(encoding="utf-8") == "{not json"
    store.add(ApprovalRule(tool="terminal", command_prefix="ls", scope="user"))
    assert json.loads(path.read_text(encoding="utf-8"))["rules"][0]["command_prefix"] == "ls"
