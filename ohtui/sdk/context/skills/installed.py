"""Installed skills: SKILL.md folders copied into `~/.openhands/skills/installed/`.

The folder is shared with other OpenHands tools, and so is its record, `.installed.json`
(`{"extensions": {name: info}}`), which says where each skill came from and whether it is
enabled. A skill is installed from a local folder, or from a git source fetched through the
git cache (`https://github.com/<owner>/<repo>/blob/<branch>/<path>`, `github:owner/repo`,
any git URL); offline, a remote source fails with its reason and the others go on.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from ohtui.sdk.context.skills.skill import Skill, SkillError
from ohtui.sdk.utils.git_cache import (
    GitFetchError,
    cache_key,
    cached_tree,
    redact_url_credentials,
)

logger = logging.getLogger(__name__)

METADATA_FILE = ".installed.json"
_GITHUB_BLOB = re.compile(
    r"^https://github\.com/(?P<owner>[^/]+)/(?P<repo>[^/]+)/(?:blob|tree)/(?P<ref>[^/]+)(?:/(?P<path>.+?))?/?$"
)
_GIT_URL = re.compile(r"^(https?|git|ssh)://|^[\w.-]+@[\w.-]+:")


class InstalledSkillInfo(BaseModel):
    """What is recorded about one installed skill."""

    name: str = Field(description="The skill's name (its folder under the install dir).")
    version: str = Field(default="", description="Its version, if it declares one.")
    description: str = Field(default="", description="One line on what it is for.")
    enabled: bool = Field(default=True, description="Whether conversations load it.")
    source: str = Field(description="Where it was installed from.")
    requested_ref: str | None = Field(default=None, description="The ref asked for (git).")
    resolved_ref: str | None = Field(default=None, description="The commit installed (git).")
    repo_path: str | None = Field(default=None, description="Its folder in the repository.")
    installed_at: str = Field(
        default_factory=lambda: datetime.now(UTC).isoformat(), description="When (ISO 8601)."
    )
    install_path: Path = Field(description="Its folder under the install dir.")


def get_installed_skills_dir() -> Path:
    """`~/.openhands/skills/installed`, where skills are installed by default."""
    return Path.home() / ".openhands" / "skills" / "installed"


def _source_cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("ohtui")) / "skill-sources"


def _read_record(installed_dir: Path) -> dict[str, InstalledSkillInfo]:
    path = installed_dir / METADATA_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        logger.warning("installed skills: %s unreadable (%s); rebuilding it from disk", path, exc)
        return {}
    entries: dict[str, object] = {}
    if isinstance(data, dict):
        for key in ("skills", "extensions"):  # "skills": the record's older shape
            if isinstance(data.get(key), dict):
                entries.update(data[key])
    record: dict[str, InstalledSkillInfo] = {}
    for name, raw in entries.items():
        try:
            record[name] = InstalledSkillInfo.model_validate(raw)
        except ValidationError:
            logger.warning("installed skills: the record of %r in %s is damaged", name, path)
    return record


def _write_record(installed_dir: Path, record: dict[str, InstalledSkillInfo]) -> None:
    installed_dir.mkdir(parents=True, exist_ok=True)
    data = {"extensions": {n: i.model_dump(mode="json") for n, i in sorted(record.items())}}
    scratch = installed_dir / f"{METADATA_FILE}.tmp"
    scratch.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    scratch.replace(installed_dir / METADATA_FILE)


def _skill_in(folder: Path) -> Skill:
    skill_md = folder / "SKILL.md"
    if not skill_md.is_file():
        raise SkillError(f"{folder}: not a skill folder (it has no SKILL.md)")
    return Skill.load(skill_md)


def _resolve(
    source: str, ref: str | None, repo_path: str | None, base: Path | None
) -> tuple[Path, str | None, str | None]:
    """The source's folder on disk, the commit (git) and the path inside the repository."""
    blob = _GITHUB_BLOB.match(source)
    if blob is not None:
        url = f"https://github.com/{blob['owner']}/{blob['repo'].removesuffix('.git')}.git"
        ref, repo_path = ref or blob["ref"], repo_path or blob["path"]
    elif source.startswith("github:"):
        url = f"https://github.com/{source.removeprefix('github:').strip('/')}.git"
    elif _GIT_URL.match(source):
        url = source
    else:
        path = Path(source.removeprefix("file://")).expanduser()
        if not path.is_absolute() and base is not None:
            path = base / path
        if repo_path:
            path = path / repo_path
        if not path.is_dir():
            raise SkillError(f"skill source {source}: no such folder ({path})")
        return path.resolve(), None, repo_path
    shown = redact_url_credentials(url)
    repo_dir = _source_cache_dir() / cache_key(shown, "skills")
    tree, sha = cached_tree(url, ref, repo_dir, f"skill source {shown}")
    folder = tree / repo_path if repo_path else tree
    if not folder.is_dir():
        raise SkillError(f"skill source {shown}: the repository has no folder {repo_path!r}")
    return folder, sha, repo_path


def install_skill(
    source: str,
    ref: str | None = None,
    repo_path: str | None = None,
    installed_dir: Path | None = None,
    force: bool = False,
) -> InstalledSkillInfo:
    """Copy the skill folder `source` names into the install dir and record it.

    FileExistsError when a skill of that name is installed and not `force`; SkillError when
    the folder is not a usable skill; GitFetchError when a git source cannot be fetched.
    """
    target_dir = installed_dir or get_installed_skills_dir()
    folder, sha, inner = _resolve(source, ref, repo_path, None)
    skill = _skill_in(folder)
    target = target_dir / skill.name
    if target.exists() and not force:
        raise FileExistsError(
            f"skill {skill.name!r} is installed already ({target}); pass force=True to replace it"
        )
    target_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".install-", dir=target_dir))
    try:
        shutil.copytree(folder, scratch / "s", ignore=shutil.ignore_patterns(".git"))
        if target.exists():
            shutil.rmtree(target)
        (scratch / "s").rename(target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    info = InstalledSkillInfo(
        name=skill.name,
        version=(skill.metadata or {}).get("version", ""),
        description=skill.description or "",
        source=redact_url_credentials(source),
        requested_ref=ref,
        resolved_ref=sha,
        repo_path=inner,
        install_path=target,
    )
    record = _read_record(target_dir)
    record[skill.name] = info
    _write_record(target_dir, record)
    return info


def uninstall_skill(name: str, installed_dir: Path | None = None) -> bool:
    """Remove an installed skill; False when none of that name is installed."""
    if Path(name).name != name or name in ("", ".", ".."):
        raise ValueError(f"{name!r} is not a skill name (a folder name under the install dir)")
    target_dir = installed_dir or get_installed_skills_dir()
    record = _read_record(target_dir)
    target = target_dir / name
    if name not in record and not target.is_dir():
        return False
    shutil.rmtree(target, ignore_errors=True)
    record.pop(name, None)
    _write_record(target_dir, record)
    return True


def list_installed_skills(installed_dir: Path | None = None) -> list[InstalledSkillInfo]:
    """The installed skills, by name: the record, less folders gone, plus folders unrecorded."""
    target_dir = installed_dir or get_installed_skills_dir()
    if not target_dir.is_dir():
        return []
    record = {n: i for n, i in _read_record(target_dir).items() if (target_dir / n).is_dir()}
    for folder in sorted(target_dir.iterdir()):
        if folder.name in record or folder.name.startswith(".") or not folder.is_dir():
            continue
        try:
            skill = _skill_in(folder)
        except SkillError:
            continue
        record[folder.name] = InstalledSkillInfo(
            name=folder.name,
            description=skill.description or "",
            source=str(folder),
            install_path=folder,
        )
    return [record[name] for name in sorted(record)]


def load_installed_skills(installed_dir: Path | None = None) -> list[Skill]:
    """The enabled installed skills, read from their folders (a bad one skipped, logged)."""
    skills: list[Skill] = []
    for info in list_installed_skills(installed_dir):
        if not info.enabled:
            continue
        try:
            skills.append(_skill_in(Path(info.install_path)))
        except SkillError as exc:
            logger.warning("installed skill %r skipped: %s", info.name, exc)
    return skills


def install_skills_from_marketplace(
    marketplace_path: str | Path, installed_dir: Path | None = None, force: bool = False
) -> list[InstalledSkillInfo]:
    """Install every skill a marketplace lists (and those in its plugins' skills/ folders).

    One that cannot be fetched or read is skipped with a warning naming it and the reason;
    one already installed is kept unless `force`. Returns those installed now.
    """
    from ohtui.sdk.marketplace import Marketplace

    marketplace = Marketplace.load(marketplace_path)
    base = Path(marketplace.path or marketplace_path)
    folders: list[tuple[str, Path]] = []
    for entry in marketplace.skills:
        try:
            folders.append((entry.name, _resolve(entry.source, None, None, base)[0]))
        except (GitFetchError, SkillError) as exc:
            logger.warning("skill %r not installed: %s", entry.name, exc)
    for plugin in marketplace.plugins:
        source = plugin.source
        if isinstance(source, str):
            where, ref, inner = source, None, None
        elif source.repo:
            where, ref, inner = f"github:{source.repo}", source.ref, source.path
        elif source.url:
            where, ref, inner = source.url, source.ref, source.path
        else:
            logger.warning("plugin %r skipped: its source names no repository", plugin.name)
            continue
        try:
            root = _resolve(where, ref, inner, base)[0]
        except (GitFetchError, SkillError) as exc:
            logger.warning("plugin %r's skills not installed: %s", plugin.name, exc)
            continue
        skills_dir = root / "skills"
        if skills_dir.is_dir():
            folders += [
                (p.name, p) for p in sorted(skills_dir.iterdir()) if (p / "SKILL.md").is_file()
            ]
    installed: list[InstalledSkillInfo] = []
    for name, folder in folders:
        try:
            installed.append(
                install_skill(folder.as_posix(), installed_dir=installed_dir, force=force)
            )
        except FileExistsError:
            logger.info("skill %r is installed already (force=True replaces it)", name)
        except (OSError, SkillError) as exc:
            logger.warning("skill %r not installed: %s", name, exc)
    return installed
