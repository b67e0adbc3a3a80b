"""Skill: a markdown file of knowledge, always on or recalled when its keywords appear."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ohtui.sdk.context.skills.resources import SkillResources, discover_skill_resources

DEFAULT_MARKETPLACE_PATH = "marketplaces/default.json"
"""The public skills loaded by default: those this file of their repository lists."""


class SkillError(ValueError):
    """A skill file that cannot be used; the message names the file and what is wrong."""


class KeywordTrigger(BaseModel):
    """Recall the skill when one of these keywords appears in a user message."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    type: Literal["keyword"] = "keyword"
    keywords: list[str]


def keyword_matches(keyword: str, text_lower: str) -> bool:
    """Whether `keyword` is in `text_lower` as a whole token (case-insensitive).

    Token edges are letters and digits, so `git` does not fire on `github`, while `/deploy`
    or `c++` still match.
    """
    needle = keyword.strip().lower()
    if not needle:
        return False
    return re.search(rf"(?<![a-z0-9]){re.escape(needle)}(?![a-z0-9])", text_lower) is not None


class Skill(BaseModel):
    """Knowledge for the agent: always in its prompt (no trigger) or recalled by keyword."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    name: str = Field(description="Unique name; a later skill of the same name replaces it.")
    content: str = Field(description="The markdown text given to the model.")
    trigger: KeywordTrigger | None = Field(
        default=None, description="None: always on (repository context)."
    )
    source: str | None = Field(default=None, description="The file it was read from.")
    description: str | None = Field(default=None, description="One line on what it is for.")
    is_agentskills_format: bool = Field(
        default=False, description="An AgentSkills SKILL.md (the model may open it on demand)."
    )
    license: str | None = Field(default=None, description="Its license (AgentSkills field).")
    compatibility: str | None = Field(
        default=None, description="What it needs to work, e.g. 'Requires bash' (AgentSkills)."
    )
    metadata: dict[str, str] | None = Field(
        default=None, description="Free key-value metadata (AgentSkills field)."
    )
    allowed_tools: list[str] | None = Field(
        default=None, description="Tools the skill expects to use (AgentSkills 'allowed-tools')."
    )
    resources: SkillResources | None = Field(
        default=None, description="Its folder's scripts/, references/ and assets/ (SKILL.md only)."
    )

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata_as_text(cls, value: object) -> object:
        if isinstance(value, dict):
            return {str(k): str(v) for k, v in value.items()}
        return value

    @field_validator("allowed_tools", mode="before")
    @classmethod
    def _tools_list(cls, value: object) -> object:
        return value.split() if isinstance(value, str) else value

    THIRD_PARTY_NAMES: ClassVar[dict[str, str]] = {
        "agents.md": "agents",
        "agent.md": "agents",
        "claude.md": "claude",
        "gemini.md": "gemini",
        ".cursorrules": "cursorrules",
    }
    """Other agents' instruction files, always on, by lower-case file name."""

    def match_trigger(self, text: str) -> str | None:
        """The first keyword of this skill found in `text`, or None."""
        if self.trigger is None:
            return None
        lowered = text.lower()
        return next((k for k in self.trigger.keywords if keyword_matches(k, lowered)), None)

    @classmethod
    def load(cls, path: str | Path, skill_base_dir: Path | None = None) -> Skill:
        """Read a skill file; SkillError (naming the file and the fault) if it is unusable.

        Its name is the frontmatter's `name`, else the path under `skill_base_dir` without `.md`
        (a SKILL.md: its directory's name); other agents' files (AGENTS.md...) have fixed
        names and no frontmatter.
        """
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise SkillError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
        except OSError as exc:
            raise SkillError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
        fixed = cls.THIRD_PARTY_NAMES.get(path.name.lower())
        if fixed is not None:
            return cls(name=fixed, content=text, source=str(path))
        metadata, body = split_frontmatter(text, path)
        agentskill = path.name.lower() == "skill.md"
        if agentskill:
            default_name = path.parent.name
        elif skill_base_dir is not None:
            default_name = path.relative_to(skill_base_dir).with_suffix("").as_posix()
        else:
            default_name = path.stem
        if metadata.get("paths"):
            raise SkillError(
                f"{path}: path-scoped skills ('paths:') are not supported yet; give it "
                "'triggers:' keywords instead, or no triggers to have it always on"
            )
        name = _text_field(metadata, "name", path) or default_name
        keywords = _keywords(metadata, path)
        if "inputs" in metadata and f"/{name}" not in keywords:
            keywords.append(f"/{name}")  # a task skill is also called by its slash name
        resources = discover_skill_resources(path.parent) if agentskill else None
        return cls(
            name=name,
            content=body,
            trigger=KeywordTrigger(keywords=keywords) if keywords else None,
            source=str(path),
            description=_text_field(metadata, "description", path),
            is_agentskills_format=agentskill,
            license=_text_field(metadata, "license", path),
            compatibility=_text_field(metadata, "compatibility", path),
            metadata=_mapping_field(metadata, "metadata", path),
            allowed_tools=_tools_field(metadata, path),
            resources=resources if resources is not None and resources.has_resources() else None,
        )


def split_frontmatter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    """The YAML frontmatter (between `---` lines at the top) and the body after it."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        raise SkillError(
            f"{path}: the frontmatter opened by '---' on line 1 is never closed; "
            "end it with a line of '---'"
        )
    import yaml  # only files with frontmatter pay for it

    try:
        data = yaml.safe_load("".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SkillError(f"{path}{where}: the frontmatter is not valid YAML ({problem})") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SkillError(
            f"{path}: the frontmatter must be 'key: value' lines, not a {type(data).__name__}"
        )
    return data, "".join(lines[end + 1 :]).lstrip("\n")


def _text_field(metadata: dict[str, Any], key: str, path: Path) -> str | None:
    value = metadata.get(key)
    if value is None:
        return None
    if not isinstance(value, str | int | float) or isinstance(value, bool) or not str(value):
        raise SkillError(f"{path}: '{key}' must be a non-empty text, not {value!r}")
    return str(value).strip()


def _mapping_field(metadata: dict[str, Any], key: str, path: Path) -> dict[str, str] | None:
    value = metadata.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise SkillError(f"{path}: '{key}' must be 'key: value' lines, not {value!r}")
    return {str(k): str(v) for k, v in value.items()}


def _tools_field(metadata: dict[str, Any], path: Path) -> list[str] | None:
    value = metadata.get("allowed-tools", metadata.get("allowed_tools"))
    if value is None:
        return None
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return list(value)
    raise SkillError(
        f"{path}: 'allowed-tools' must be tool names separated by spaces, not {value!r}"
    )


def _keywords(metadata: dict[str, Any], path: Path) -> list[str]:
    value = metadata.get("triggers", [])
    if value is None:
        return []
    if isinstance(value, str):
        raise SkillError(
            f"{path}: 'triggers' must be a list (e.g. 'triggers: [{value}]'), not a text"
        )
    if not isinstance(value, list):
        raise SkillError(f"{path}: 'triggers' must be a list of keywords, not {value!r}")
    bad = [k for k in value if not isinstance(k, str | int | float) or not str(k).strip()]
    if bad:
        raise SkillError(f"{path}: every trigger must be a non-empty keyword; {bad[0]!r} is not")
    return [str(k).strip() for k in value]
