"""Finding skills on disk: a skills directory, a project (workspace), the user's own dirs.

Every loader returns the skills it could read and a warning per file it could not (the file
and what is wrong); one bad file never stops the others from loading.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ohtui.sdk.context.skills.skill import Skill, SkillError

logger = logging.getLogger(__name__)

PROJECT_SKILL_DIRS = (
    ".ohtui/skills",
    ".agents/skills",
    ".openhands/skills",
    ".openhands/microagents",  # the SDK's legacy location
)
"""Skill directories under a project root, the first winning a name found in several."""


def default_user_skill_dirs() -> list[Path]:
    """The user-level skill directories other OpenHands tools share (first wins)."""
    home = Path.home()
    return [home / ".agents" / "skills", home / ".openhands" / "skills"]


@dataclass
class SkillLoad:
    """Skills read (by name, in load order) and a warning per file that could not be."""

    skills: dict[str, Skill] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    within: tuple[Path, ...] = ()
    """Resolved folders each file read must lie in, its links followed: a project's (a file
    it links to outside would be the user's, and go to the model); () for anywhere."""

    def add_missing(self, other: SkillLoad) -> None:
        """Take `other`'s skills whose names are not here yet, and all its warnings."""
        for name, skill in other.skills.items():
            self.skills.setdefault(name, skill)
        self.warnings.extend(other.warnings)

    def _warn(self, message: str) -> None:
        logger.warning("skipped a skill: %s", message)
        self.warnings.append(message)

    def _read(self, path: Path, base_dir: Path | None) -> None:
        if self.within and not _inside(path, self.within):
            self._warn(
                f"{path}: it links outside the project; a project's instructions and skills "
                "must be files of the project"
            )
            return
        try:
            skill = Skill.load(path, base_dir)
        except SkillError as exc:
            self._warn(str(exc))
            return
        if skill.name in self.skills:
            logger.info("skill %r in %s: an earlier one of that name wins", skill.name, path)
            return
        self.skills[skill.name] = skill


def _inside(path: Path, roots: tuple[Path, ...]) -> bool:
    """Whether `path`, its links followed, lies in one of `roots` (a loop of links: no)."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a loop of links, before Python 3.13
        return False
    return any(real.is_relative_to(root) for root in roots)


def read_skills_dir(skill_dir: str | Path, *, within: tuple[Path, ...] = ()) -> SkillLoad:
    """Every skill in a directory: `*.md` files (any depth) and `<name>/SKILL.md` folders,
    with a warning per file that could not be read.

    README.md files are documentation, not skills. A missing directory has none.
    """
    root = Path(skill_dir)
    result = SkillLoad(within=within)
    if not root.is_dir():
        return result
    try:
        skill_dirs = sorted(d for d in root.iterdir() if (d / "SKILL.md").is_file())
        files = sorted(root.rglob("*.md"))
    except OSError as exc:
        result._warn(f"{root}: cannot list it ({exc.strerror or exc})")
        return result
    for directory in skill_dirs:
        result._read(directory / "SKILL.md", root)
    for path in files:
        inside_skill_dir = any(path.is_relative_to(d) for d in skill_dirs)
        if path.name == "README.md" or inside_skill_dir or not path.is_file():
            continue
        result._read(path, root)
    return result


def load_skills_from_dir(
    skill_dir: str | Path,
) -> tuple[dict[str, Skill], dict[str, Skill], dict[str, Skill]]:
    """A directory's skills as the SDK sorts them: (always-on, keyword-triggered, SKILL.md
    folders), each by name. Files that cannot be read are skipped with a logged warning.
    """
    repo: dict[str, Skill] = {}
    knowledge: dict[str, Skill] = {}
    agent_skills: dict[str, Skill] = {}
    for name, skill in read_skills_dir(skill_dir).skills.items():
        if skill.is_agentskills_format:
            agent_skills[name] = skill
        elif skill.trigger is None:
            repo[name] = skill
        else:
            knowledge[name] = skill
    return repo, knowledge, agent_skills


def _merge_dirs(dirs: Iterable[Path], within: tuple[Path, ...] = ()) -> SkillLoad:
    result = SkillLoad()
    for directory in dirs:
        result.add_missing(read_skills_dir(directory, within=within))
    return result


def load_user_skills(dirs: Iterable[str | Path] | None = None) -> SkillLoad:
    """The user's skills from `dirs` (default: ~/.agents/skills, ~/.openhands/skills)."""
    chosen = default_user_skill_dirs() if dirs is None else [Path(d) for d in dirs]
    return _merge_dirs(chosen)


def _git_root(path: Path) -> Path | None:
    for candidate in (path, *path.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def load_project_skills(work_dir: str | Path) -> SkillLoad:
    """A project's skills: AGENTS.md (and other agents' files) always on, and the skill dirs.

    The working directory and, if it is inside a git repository, the repository root are
    searched; the working directory wins a name found in both.
    """
    work = Path(work_dir)
    roots = [work]
    git_root = _git_root(work.resolve()) if work.exists() else None
    if git_root is not None and git_root != work.resolve():
        roots.append(git_root)
    within = tuple(root.resolve() for root in roots)
    result = SkillLoad(within=within)
    for root in roots:
        for path in _third_party_files(root):
            result._read(path, None)
    dirs = (root / d for root in roots for d in PROJECT_SKILL_DIRS)
    result.add_missing(_merge_dirs(dirs, within))
    return result


def _third_party_files(root: Path) -> list[Path]:
    """Other agents' instruction files at the top of `root` (one per real file)."""
    found: list[Path] = []
    seen: set[Path] = set()
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return found
    for path in entries:
        if path.name.lower() not in Skill.THIRD_PARTY_NAMES or not path.is_file():
            continue
        real = path.resolve()  # CLAUDE.md -> AGENTS.md is one file
        if real not in seen:
            seen.add(real)
            found.append(path)
    return found
