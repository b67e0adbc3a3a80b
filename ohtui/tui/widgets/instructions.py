"""Which instruction files and skills the agent got: read from its context as the engine
loaded it (never by looking at the disk again), for the chat's first cell.

Plain data, made on the opening thread once the conversation is open.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ohtui.sdk.agent.base import AgentBase

Origin = Literal["instructions", "project", "user", "other"]


@dataclass(frozen=True, slots=True)
class LoadedSkill:
    """One always-on file or skill in the agent's context."""

    name: str
    origin: Origin
    """An instruction file (AGENTS.md...), a project skill, a user skill, or another
    (a plugin's, a public one)."""
    shown: str
    """Where it was read from, shown relative to the workspace or ~-shortened."""


@dataclass(frozen=True, slots=True)
class LoadedInstructions:
    """What the agent's context holds from files, in the order the engine merged them."""

    items: tuple[LoadedSkill, ...]

    @property
    def files(self) -> list[LoadedSkill]:
        """The instruction files (AGENTS.md, CLAUDE.md, GEMINI.md, .cursorrules)."""
        return [item for item in self.items if item.origin == "instructions"]

    @property
    def skills(self) -> list[LoadedSkill]:
        """Every other skill."""
        return [item for item in self.items if item.origin != "instructions"]

    def summary(self) -> str:
        """One line: "Instructions: AGENTS.md, CLAUDE.md · skills: 3 (user: 2)"."""
        files = ", ".join(item.shown for item in self.files) or "none"
        skills = self.skills
        if not skills:
            return f"Instructions: {files}"
        user = sum(1 for item in skills if item.origin == "user")
        of_user = f" (user: {user})" if user else ""
        return f"Instructions: {files} · skills: {len(skills)}{of_user}"

    def details(self) -> list[str]:
        """A line per file and skill, with where it came from."""
        lines = [f"{item.shown}" for item in self.files]
        lines += [f"skill {item.name} ({item.origin}): {item.shown}" for item in self.skills]
        return lines


def loaded_instructions(agent: AgentBase, workspace: str) -> LoadedInstructions | None:
    """The files and skills in `agent`'s context (None: there are none)."""
    from ohtui.sdk.context.skills.loader import default_user_skill_dirs
    from ohtui.sdk.context.skills.skill import Skill

    context = agent.agent_context
    if context is None or not context.skills:
        return None
    user_dirs = [Path(d) for d in (context.user_skills_dirs or default_user_skill_dirs())]
    root = Path(workspace)
    project = [root, *([repository] if (repository := _git_root(root)) else [])]
    items: list[LoadedSkill] = []
    for skill in context.skills:
        source = Path(skill.source) if skill.source else None
        origin: Origin
        if source is not None and source.name.lower() in Skill.THIRD_PARTY_NAMES:
            origin = "instructions"
        elif source is not None and any(source.is_relative_to(d) for d in user_dirs):
            origin = "user"
        elif source is not None and any(source.is_relative_to(p) for p in project):
            origin = "project"
        else:
            origin = "other"
        shown = _shown(source, project) if source is not None else skill.name
        items.append(LoadedSkill(skill.name, origin, shown))
    return LoadedInstructions(tuple(items))


def _git_root(path: Path) -> Path | None:
    """The repository `path` is in (its project skills are read from there too)."""
    for candidate in (path, *path.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _shown(path: Path, project: list[Path]) -> str:
    """`path` relative to the workspace (`project[0]`) when it is in it or in its repository,
    else ~-shortened."""
    root = project[0]
    if path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    if any(path.is_relative_to(p) for p in project):
        return Path(os.path.relpath(path, root)).as_posix()
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if home != "/" and text.startswith(home + os.sep) else text
