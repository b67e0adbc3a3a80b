"""Knowledge skills: markdown files the agent always reads, or recalls by keyword.

Names are imported on first use, so an agent context without skills costs little.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ohtui.sdk.context.skills.installed import (
        InstalledSkillInfo,
        get_installed_skills_dir,
        install_skill,
        install_skills_from_marketplace,
        list_installed_skills,
        load_installed_skills,
        uninstall_skill,
    )
    from ohtui.sdk.context.skills.loader import (
        PROJECT_SKILL_DIRS,
        SkillLoad,
        default_user_skill_dirs,
        load_project_skills,
        load_skills_from_dir,
        load_user_skills,
        read_skills_dir,
    )
    from ohtui.sdk.context.skills.prompt import recall_knowledge, render_repo_context
    from ohtui.sdk.context.skills.public import (
        PUBLIC_SKILLS_REF,
        PUBLIC_SKILLS_REPO,
        forget_public_skills,
        load_public_skills,
    )
    from ohtui.sdk.context.skills.resources import (
        RESOURCE_DIRECTORIES,
        SkillResources,
        discover_skill_resources,
    )
    from ohtui.sdk.context.skills.skill import (
        DEFAULT_MARKETPLACE_PATH,
        KeywordTrigger,
        Skill,
        SkillError,
    )

_HOMES = {
    "InstalledSkillInfo": "installed",
    "get_installed_skills_dir": "installed",
    "install_skill": "installed",
    "install_skills_from_marketplace": "installed",
    "list_installed_skills": "installed",
    "load_installed_skills": "installed",
    "uninstall_skill": "installed",
    "PROJECT_SKILL_DIRS": "loader",
    "SkillLoad": "loader",
    "default_user_skill_dirs": "loader",
    "load_project_skills": "loader",
    "load_skills_from_dir": "loader",
    "load_user_skills": "loader",
    "read_skills_dir": "loader",
    "PUBLIC_SKILLS_REF": "public",
    "PUBLIC_SKILLS_REPO": "public",
    "forget_public_skills": "public",
    "load_public_skills": "public",
    "RESOURCE_DIRECTORIES": "resources",
    "SkillResources": "resources",
    "discover_skill_resources": "resources",
    "DEFAULT_MARKETPLACE_PATH": "skill",
    "recall_knowledge": "prompt",
    "render_repo_context": "prompt",
    "KeywordTrigger": "skill",
    "Skill": "skill",
    "SkillError": "skill",
}

__all__ = [
    "DEFAULT_MARKETPLACE_PATH",
    "PROJECT_SKILL_DIRS",
    "PUBLIC_SKILLS_REF",
    "PUBLIC_SKILLS_REPO",
    "RESOURCE_DIRECTORIES",
    "InstalledSkillInfo",
    "KeywordTrigger",
    "Skill",
    "SkillError",
    "SkillLoad",
    "SkillResources",
    "default_user_skill_dirs",
    "discover_skill_resources",
    "forget_public_skills",
    "get_installed_skills_dir",
    "install_skill",
    "install_skills_from_marketplace",
    "list_installed_skills",
    "load_installed_skills",
    "load_project_skills",
    "load_public_skills",
    "load_skills_from_dir",
    "load_user_skills",
    "read_skills_dir",
    "recall_knowledge",
    "render_repo_context",
    "uninstall_skill",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
