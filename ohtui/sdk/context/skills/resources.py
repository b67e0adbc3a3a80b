"""The files an AgentSkills skill folder carries beside its SKILL.md: scripts, references,
assets (https://agentskills.io/specification)."""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

logger = logging.getLogger(__name__)

RESOURCE_DIRECTORIES = ("scripts", "references", "assets")
"""The resource folders a skill folder may have, by the standard's names."""


class SkillResources(BaseModel):
    """A skill folder's resource files, each relative to its resource folder."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    skill_root: str = Field(description="The skill's folder (absolute, '/'-separated).")
    scripts: list[str] = Field(default_factory=list, description="Files under scripts/.")
    references: list[str] = Field(default_factory=list, description="Files under references/.")
    assets: list[str] = Field(default_factory=list, description="Files under assets/.")

    def has_resources(self) -> bool:
        """Whether any resource file was found."""
        return bool(self.scripts or self.references or self.assets)

    def _dir(self, name: str) -> Path | None:
        path = Path(self.skill_root) / name
        return path if path.is_dir() else None

    def get_scripts_dir(self) -> Path | None:
        """The scripts/ folder, if there is one."""
        return self._dir("scripts")

    def get_references_dir(self) -> Path | None:
        """The references/ folder, if there is one."""
        return self._dir("references")

    def get_assets_dir(self) -> Path | None:
        """The assets/ folder, if there is one."""
        return self._dir("assets")


def discover_skill_resources(skill_dir: str | Path) -> SkillResources:
    """The resource files of the skill folder `skill_dir` (sorted; none if it has none)."""
    root = Path(skill_dir).resolve()
    found: dict[str, list[str]] = {}
    for kind in RESOURCE_DIRECTORIES:
        folder = root / kind
        if folder.is_dir():
            found[kind] = _files_under(folder)
    return SkillResources(skill_root=root.as_posix(), **found)


def _files_under(folder: Path) -> list[str]:
    try:
        return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    except OSError as exc:
        logger.warning("skill resources in %s left out: cannot list them (%s)", folder, exc)
        return []
