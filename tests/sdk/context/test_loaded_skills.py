"""Which files an agent's context got and from where, from real files loaded by the engine."""

from __future__ import annotations

from pathlib import Path

from ohtui.sdk.context.agent_context import AgentContext
from ohtui.sdk.context.skills.loaded import LoadedSkill, loaded_skills
from ohtui.sdk.context.skills.loader import load_project_skills, load_user_skills
from ohtui.sdk.context.skills.skill import Skill


def test_each_skill_is_told_by_where_it_came_from(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    work = repo / "app"
    (repo / ".git").mkdir(parents=True)
    work.mkdir()
    (repo / "AGENTS.md").write_text("Run make.\n", encoding="utf-8")  # the repository's root
    (work / "CLAUDE.md").write_text("Small modules.\n", encoding="utf-8")
    (work / ".agents" / "skills").mkdir(parents=True)
    (work / ".agents" / "skills" / "deploy.md").write_text("Ship it.\n", encoding="utf-8")
    user = tmp_path / "user-skills"
    user.mkdir()
    (user / "style.md").write_text("Be brief.\n", encoding="utf-8")
    skills = [
        *load_user_skills([user]).skills.values(),
        Skill(name="inline", content="Given in code."),
        *load_project_skills(work).skills.values(),
    ]
    context = AgentContext(skills=skills, user_skills_dirs=[str(user)])
    found = {s.name: (s.origin, s.source) for s in loaded_skills(context, str(work))}
    assert found == {
        "style": ("user", str(user / "style.md")),
        "inline": ("other", None),
        "claude": ("instructions", str(work / "CLAUDE.md")),
        "agents": ("instructions", str(repo / "AGENTS.md")),
        "deploy": ("project", str(work / ".agents" / "skills" / "deploy.md")),
    }


def test_none_without_a_context_and_a_report_read_back() -> None:
    assert loaded_skills(None, "/w") == []
    skill = LoadedSkill("agents", "instructions", "/w/AGENTS.md")
    assert LoadedSkill.from_json(skill.to_json()) == skill
    assert LoadedSkill.from_json({"name": "x", "origin": "elsewhere"}) == LoadedSkill(
        "x", "other", None
    )
    assert LoadedSkill.from_json(["not", "a", "skill"]) is None
