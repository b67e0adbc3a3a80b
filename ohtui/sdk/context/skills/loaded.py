"""Which files an agent's context got, and from where: for a front end to tell the user (an
agent server reports the same list for its conversations)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ohtui.sdk.context.agent_context import AgentContext
from ohtui.sdk.context.skills.loader import default_user_skill_dirs
from ohtui.sdk.context.skills.skill import Skill

Origin = Literal["instructions", "project", "user", "other"]
ORIGINS: tuple[Origin, ...] = ("instructions", "project", "user", "other")


@dataclass(frozen=True, slots=True)
class LoadedSkill:
    """One skill in an agent's context: an instruction file (AGENTS.md, CLAUDE.md...), a
    project skill, a user skill, or another (a plugin's, a public one)."""

    name: str
    origin: Origin
    source: str | None
    """The file it was read from (None: given in code)."""

    def to_json(self) -> dict[str, Any]:
        """As an agent server reports it."""
        return {"name": self.name, "origin": self.origin, "source": self.source}

    @classmethod
    def from_json(cls, data: object) -> LoadedSkill | None:
        """One reported by an agent server (None: not in this shape)."""
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            return None
        origin = data.get("origin")
        source = data.get("source")
        return cls(
            name=data["name"],
            origin=origin if origin in ORIGINS else "other",
            source=source if isinstance(source, str) else None,
        )


def loaded_skills(context: AgentContext | None, working_dir: str) -> list[LoadedSkill]:
    """The skills in `context`, in its order, each with where it came from (the workspace
    `working_dir`, or the git repository it is in, for project ones)."""
    if context is None or not context.skills:
        return []
    user_dirs = [Path(d) for d in (context.user_skills_dirs or default_user_skill_dirs())]
    root = Path(working_dir)
    project = [root, *([repository] if (repository := _git_root(root)) else [])]
    found: list[LoadedSkill] = []
    for skill in context.skills:
        source = Path(skill.source) if skill.source else None
        origin: Origin
        if source is None:
            origin = "other"
        elif source.name.lower() in Skill.THIRD_PARTY_NAMES:
            origin = "instructions"
        elif any(source.is_relative_to(d) for d in user_dirs):
            origin = "user"
        elif any(source.is_relative_to(p) for p in project):
            origin = "project"
        else:
            origin = "other"
        found.append(LoadedSkill(skill.name, origin, skill.source))
    return found


def _git_root(path: Path) -> Path | None:
    """The repository `path` is in (project skills are read from its root too)."""
    for candidate in (path, *path.parents):
        if (candidate / ".git").exists():
            return candidate
    return None
