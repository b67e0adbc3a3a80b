"""Marketplaces and installed skills: reading marketplace.json, installing what it lists
(local folders, a plugin's skills/ folder, an unreachable git source), the record."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from ohtui.sdk.context.skills import (
    install_skill,
    install_skills_from_marketplace,
    list_installed_skills,
    load_installed_skills,
    uninstall_skill,
)
from ohtui.sdk.marketplace import Marketplace, MarketplaceError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    return tmp_path / "installed"


def marketplace(root: Path, skills: list[dict[str, str]], plugins: Sequence[object] = ()) -> Path:
    data = {"name": "team", "owner": {"name": "Team"}, "skills": skills, "plugins": list(plugins)}
    write(root / ".plugin" / "marketplace.json", json.dumps(data))
    return root


def test_a_marketplace_is_read_with_its_skills_and_plugins(tmp_path: Path) -> None:
    root = marketplace(
        tmp_path / "mp",
        [{"name": "greet", "source": "./skills/greet", "description": "Greets."}],
        [{"name": "fmt", "source": {"source": "github", "repo": "o/fmt"}, "author": "A <a@b.c>"}],
    )
    loaded = Marketplace.load(root)
    assert loaded.name == "team" and loaded.owner.name == "Team"
    assert loaded.path == str(root.resolve())
    assert [(s.name, s.source, s.description) for s in loaded.skills] == [
        ("greet", "./skills/greet", "Greets.")
    ]
    plugin = loaded.get_plugin("fmt")
    assert plugin is not None and plugin.author is not None
    assert (plugin.author.name, plugin.author.email) == ("A", "a@b.c")
    assert loaded.get_skill("nope") is None


def test_a_bad_marketplace_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="Marketplace manifest not found"):
        Marketplace.load(tmp_path)
    write(tmp_path / ".plugin" / "marketplace.json", "{not json")
    with pytest.raises(MarketplaceError, match=r"marketplace\.json: not valid JSON"):
        Marketplace.load(tmp_path)
    write(tmp_path / ".plugin" / "marketplace.json", json.dumps({"name": "x"}))
    with pytest.raises(MarketplaceError, match="'owner': Field required"):
        Marketplace.load(tmp_path)


def test_local_skills_install_and_an_unreachable_git_one_is_skipped(
    tmp_path: Path, installed: Path, caplog: pytest.LogCaptureFixture
) -> None:
    repo = tmp_path / "plugin"  # a file:// URL is a local folder, as the SDK reads it
    write(repo / "skills" / "lint" / "SKILL.md", "---\ndescription: Lints.\n---\nRun ruff.")
    root = tmp_path / "mp"
    write(root / "skills" / "greet" / "SKILL.md", "# greet\nSay hello.")
    write(root / "skills" / "greet" / "scripts" / "hi.sh", "echo hi")
    marketplace(
        root,
        [
            {"name": "greet", "source": "./skills/greet"},
            {"name": "gone", "source": "https://127.0.0.1:1/nobody/skills.git"},
        ],
        [{"name": "tools", "source": {"source": "url", "url": repo.as_uri()}}],
    )
    with caplog.at_level(logging.WARNING):
        done = install_skills_from_marketplace(root, installed_dir=installed)
    assert sorted(info.name for info in done) == ["greet", "lint"]
    assert "skill 'gone' not installed" in caplog.text and "could not clone it" in caplog.text
    assert (installed / "greet" / "scripts" / "hi.sh").read_text() == "echo hi"
    [lint] = [info for info in done if info.name == "lint"]
    assert lint.description == "Lints."
    assert [info.name for info in list_installed_skills(installed)] == ["greet", "lint"]
    assert sorted(s.name for s in load_installed_skills(installed)) == ["greet", "lint"]
    record = json.loads((installed / ".installed.json").read_text())
    assert sorted(record["extensions"]) == ["greet", "lint"]

    # Again: kept, not replaced, unless forced.
    assert install_skills_from_marketplace(root, installed_dir=installed) == []
    again = install_skills_from_marketplace(root, installed_dir=installed, force=True)
    assert sorted(info.name for info in again) == ["greet", "lint"]


def test_the_record_follows_the_folders_and_uninstall_removes_both(
    tmp_path: Path, installed: Path
) -> None:
    write(tmp_path / "src" / "tea" / "SKILL.md", "---\ndescription: Tea.\n---\nBrew.")
    info = install_skill(str(tmp_path / "src" / "tea"), installed_dir=installed)
    assert info.install_path == installed / "tea"
    with pytest.raises(FileExistsError, match="force=True"):
        install_skill(str(tmp_path / "src" / "tea"), installed_dir=installed)
    write(installed / "copied" / "SKILL.md", "Copied by hand.")  # unrecorded: still listed
    assert [i.name for i in list_installed_skills(installed)] == ["copied", "tea"]
    assert uninstall_skill("tea", installed_dir=installed) is True
    assert uninstall_skill("tea", installed_dir=installed) is False
    assert not (installed / "tea").exists()
    assert [i.name for i in list_installed_skills(installed)] == ["copied"]
    with pytest.raises(ValueError, match="not a skill name"):
        uninstall_skill("../src", installed_dir=installed)
