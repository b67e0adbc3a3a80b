"""Agent definition files: what the frontmatter and body become, what is refused and how,
and which folder wins a name."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ohtui.sdk.context.condenser import NoOpCondenser
from ohtui.sdk.security.confirmation_policy import AlwaysConfirm, ConfirmRisky
from ohtui.sdk.subagent import (
    AgentDefinition,
    AgentDefinitionError,
    discover_agents,
    load_agents_from_dir,
    load_project_agents,
)

REVIEWER = """---
name: code-reviewer
description: |
  Reviews changes.
  <example>please review this PR</example>
  <EXAMPLE> a security review? </EXAMPLE>
tools: terminal
skills: style, security
model: inherit
color: purple
permission_mode: Confirm_Risky
max_iteration_per_run: "12"
max_budget_per_run: 0.5
condenser: none
audience: maintainers
---

You are a meticulous reviewer.
"""


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_gives_every_field_and_keeps_unknown_keys(tmp_path: Path) -> None:
    path = _write(tmp_path, "reviewer.md", REVIEWER)

    agent = AgentDefinition.load(path)

    assert agent.name == "code-reviewer"
    assert agent.tools == ["terminal"]  # one name is a list of one
    assert agent.skills == ["style", "security"]  # a comma-separated text is split
    assert agent.color == "purple"
    assert agent.permission_mode == "confirm_risky"
    assert isinstance(agent.get_confirmation_policy(), ConfirmRisky)
    assert agent.max_iteration_per_run == 12
    assert agent.max_budget_per_run == 0.5
    assert isinstance(agent.condenser, NoOpCondenser)
    assert agent.system_prompt == "You are a meticulous reviewer."
    assert agent.when_to_use_examples == ["please review this PR", "a security review?"]
    assert agent.metadata == {"audience": "maintainers"}
    assert agent.source == path.as_posix()
    assert agent.level is None


def test_a_file_without_frontmatter_is_named_after_it(tmp_path: Path) -> None:
    agent = AgentDefinition.load(_write(tmp_path, "helper.md", "Just a prompt.\n"))

    assert (agent.name, agent.model, agent.tools) == ("helper", "inherit", [])
    assert agent.system_prompt == "Just a prompt."
    assert agent.get_confirmation_policy() is None  # inherits the parent's


@pytest.mark.parametrize(
    ("front", "says"),
    [
        ("permission_mode: sometimes", "permission_mode"),
        ("max_iteration_per_run: lots", "max_iteration_per_run"),
        ("max_iteration_per_run: 0", "max_iteration_per_run"),
        ("mcp_config: [a, b]", "mcp_config"),
        ("condenser: sideways", "condenser"),
        ("hooks: [x]", "hooks"),
        ("tools: [terminal", "not valid YAML"),
    ],
)
def test_a_bad_field_is_refused_naming_the_file_and_the_field(
    tmp_path: Path, front: str, says: str
) -> None:
    path = _write(tmp_path, "bad.md", f"---\n{front}\n---\nBody\n")

    with pytest.raises(AgentDefinitionError) as caught:
        AgentDefinition.load(path)

    assert str(path) in str(caught.value)
    assert says in str(caught.value)


def test_always_confirm_names_its_policy() -> None:
    agent = AgentDefinition(name="x", permission_mode="always_confirm")
    assert isinstance(agent.get_confirmation_policy(), AlwaysConfirm)


def test_a_folder_reads_top_level_markdown_only_and_skips_what_it_cannot_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "agents"
    _write(folder, "b.md", "---\nname: beta\n---\nB\n")
    _write(folder, "a.md", "---\nname: alpha\n---\nA\n")
    _write(folder, "README.md", "# not an agent\n")
    _write(folder, "notes.txt", "not markdown\n")
    _write(folder / "nested", "deep.md", "---\nname: deep\n---\n")
    _write(folder, "broken.md", "---\npermission_mode: maybe\n---\n")

    with caplog.at_level(logging.WARNING):
        found = load_agents_from_dir(folder)

    assert [a.name for a in found] == ["alpha", "beta"]  # by file name
    assert "broken.md" in caplog.text
    assert load_agents_from_dir(tmp_path / "missing") == []


def test_the_agents_folder_wins_over_openhands_and_the_project_over_the_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    _write(project / ".agents/agents", "x.md", "---\nname: shared\n---\nproject agents\n")
    _write(project / ".openhands/agents", "x.md", "---\nname: shared\n---\nproject openhands\n")
    _write(project / ".openhands/agents", "y.md", "---\nname: only-openhands\n---\nY\n")
    _write(home / ".agents/agents", "x.md", "---\nname: shared\n---\nuser\n")
    _write(home / ".openhands/agents", "z.md", "---\nname: mine\n---\nZ\n")

    assert [a.system_prompt for a in load_project_agents(project) if a.name == "shared"] == [
        "project agents"
    ]
    found = {a.name: a for a in discover_agents(project)}

    assert found["shared"].system_prompt == "project agents"
    assert found["shared"].level == "project"
    assert found["mine"].level == "user"
    assert found["only-openhands"].level == "project"
    assert [a.name for a in discover_agents(project, include_user=False)] == [
        "shared",
        "only-openhands",
    ]
    assert [a.name for a in discover_agents(None)] == ["shared", "mine"]
