"""Public skills from a git repository (a local one here), AgentSkills resources, and
load_skills_from_dir's SDK-shaped answer."""

from __future__ import annotations

import json
import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ohtui.sdk.context import AgentContext, Skill
from ohtui.sdk.context.skills import (
    discover_skill_resources,
    forget_public_skills,
    load_public_skills,
    load_skills_from_dir,
)

ROT13 = """---
name: rot13
description: Encrypts with ROT13.
license: MIT
compatibility: Requires bash
metadata:
  author: someone
  version: 1.0
allowed-tools: terminal file_editor
triggers: [encrypt]
---
Run scripts/encrypt.sh.
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True,
        check=True,
    )


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    forget_public_skills()
    yield tmp_path / "cache"
    forget_public_skills()


@pytest.fixture
def extensions(tmp_path: Path) -> Path:
    """A repository shaped like OpenHands/extensions: skills/ and a default marketplace."""
    repo = tmp_path / "extensions"
    write(repo / "skills" / "github" / "SKILL.md", "---\ndescription: GitHub.\n---\nUse gh.")
    write(repo / "skills" / "gitlab.md", "---\ntriggers: [gitlab]\n---\nUse glab.")
    write(repo / "skills" / "unlisted.md", "Not in the marketplace.")
    marketplace = {"name": "default", "plugins": [{"name": "github"}, {"name": "gitlab"}]}
    write(repo / "marketplaces" / "default.json", json.dumps(marketplace))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "skills")
    return repo


def test_public_skills_are_those_the_marketplace_lists(extensions: Path) -> None:
    url = extensions.as_uri()
    skills = load_public_skills(repo_url=url, ref="main")
    assert sorted(s.name for s in skills) == ["github", "gitlab"]
    every = load_public_skills(repo_url=url, ref="main", marketplace_path=None)
    assert sorted(s.name for s in every) == ["github", "gitlab", "unlisted"]


def test_offline_the_copy_fetched_before_is_used(
    extensions: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = extensions.as_uri()
    assert len(load_public_skills(repo_url=url, ref="main")) == 2
    forget_public_skills()
    extensions.rename(tmp_path / "gone")  # the source is out of reach now
    with caplog.at_level(logging.WARNING):
        skills = load_public_skills(repo_url=url, ref="main")
    assert sorted(s.name for s in skills) == ["github", "gitlab"]
    assert "could not update it" in caplog.text and "using the copy fetched before" in caplog.text


def test_unreachable_with_no_copy_gives_none_and_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = (tmp_path / "no-such-repo").as_uri()
    with caplog.at_level(logging.WARNING):
        assert load_public_skills(repo_url=url) == []
        assert load_public_skills(repo_url=url) == []  # kept: not fetched a second time
    [record] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert f"public skills {url}: could not clone it" in record.getMessage()
    assert "going on without public skills" in record.getMessage()


def test_agent_context_adds_public_skills_behind_its_own(
    extensions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ohtui.sdk.context.skills import public

    monkeypatch.setattr(public, "PUBLIC_SKILLS_REPO", extensions.as_uri())
    mine = Skill(name="github", content="My own GitHub rules.")
    context = AgentContext(skills=[mine], load_public_skills=True)
    assert [s.name for s in context.skills] == ["github", "gitlab"]
    assert context.skills[0].content == "My own GitHub rules."


def test_a_skill_folder_lists_its_resources_and_fields(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write(root / "rot13" / "SKILL.md", ROT13)
    write(root / "rot13" / "scripts" / "encrypt.sh", "tr a-z n-za-m")
    write(root / "rot13" / "references" / "deep" / "notes.md", "notes")
    write(root / "style" / "SKILL.md", "---\ndescription: Style.\n---\nTabs.")
    write(root / "always.md", "Always on.")
    write(root / "tea.md", "---\ntriggers: [tea]\n---\nGreen tea.")

    resources = discover_skill_resources(root / "rot13")
    assert resources.scripts == ["encrypt.sh"]
    assert resources.references == ["deep/notes.md"]  # nested files, relative to their folder
    assert resources.assets == []
    assert resources.skill_root == (root / "rot13").resolve().as_posix()
    assert resources.get_scripts_dir() == (root / "rot13" / "scripts").resolve()
    assert resources.get_assets_dir() is None

    repo, knowledge, agent_skills = load_skills_from_dir(root)
    assert list(repo) == ["always"] and list(knowledge) == ["tea"]
    assert sorted(agent_skills) == ["rot13", "style"]
    rot13 = agent_skills["rot13"]
    assert (rot13.license, rot13.compatibility) == ("MIT", "Requires bash")
    assert rot13.metadata == {"author": "someone", "version": "1.0"}
    assert rot13.allowed_tools == ["terminal", "file_editor"]
    assert rot13.resources == resources
    assert agent_skills["style"].resources is None  # nothing beside its SKILL.md
