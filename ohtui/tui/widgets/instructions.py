"""Which instruction files and skills the agent got, for the chat's first cell: read from its
context as the engine loaded it (never by looking at the disk again), or as the agent server
reports it.

Plain data, made on the opening thread once the conversation is open.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ohtui.sdk.context.skills.loaded import LoadedSkill


@dataclass(frozen=True, slots=True)
class ShownSkill:
    """One file or skill, as the cell shows it."""

    name: str
    origin: str
    """"instructions" (AGENTS.md...), "project", "user" or "other" (a plugin's...)."""
    shown: str
    """Where it was read from: relative to the workspace, or ~-shortened."""


@dataclass(frozen=True, slots=True)
class LoadedInstructions:
    """What the agent's context holds from files, in the order the engine merged them."""

    items: tuple[ShownSkill, ...]

    @property
    def files(self) -> list[ShownSkill]:
        """The instruction files (AGENTS.md, CLAUDE.md, GEMINI.md, .cursorrules)."""
        return [item for item in self.items if item.origin == "instructions"]

    @property
    def skills(self) -> list[ShownSkill]:
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
        lines = [item.shown for item in self.files]
        lines += [f"skill {item.name} ({item.origin}): {item.shown}" for item in self.skills]
        return lines


def shown_instructions(
    skills: list[LoadedSkill], workspace: str, home: str | None = None
) -> LoadedInstructions | None:
    """The cell's data for `skills` in `workspace` (None: there are none). `home`: the home
    folder to shorten paths with (None: this machine's; "": none, the files are elsewhere)."""
    if not skills:
        return None
    root = Path(workspace)
    home = str(Path.home()) if home is None else home
    items = []
    for skill in skills:
        source = Path(skill.source) if skill.source else None
        shown = _shown(source, root, skill.origin, home) if source is not None else skill.name
        items.append(ShownSkill(skill.name, skill.origin, shown))
    return LoadedInstructions(tuple(items))


def _shown(path: Path, root: Path, origin: str, home: str) -> str:
    """`path` relative to the workspace when it is in it (or, for a project file, in the
    repository above it), else ~-shortened."""
    if path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    if origin in ("instructions", "project"):
        return Path(os.path.relpath(path, root)).as_posix()
    text = str(path)
    if home and home != "/" and text.startswith(home.rstrip("/") + "/"):
        return "~" + text[len(home.rstrip("/")) :]
    return text
