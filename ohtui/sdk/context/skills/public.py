"""The public skills: OpenHands' extensions repository, fetched into a local cache.

`AgentContext(load_public_skills=True)` adds them. The repository is cloned (then updated)
with time-limited git that never prompts; when the network is out of reach the last copy
fetched is used, and with none the conversation goes on without public skills after one
warning in the log. A result is kept for a minute in the process, failures included, so
rebuilding an agent context does not fetch again.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path

from ohtui.sdk.context.skills.loader import read_skills_dir
from ohtui.sdk.context.skills.skill import DEFAULT_MARKETPLACE_PATH, Skill
from ohtui.sdk.utils.git_cache import GitFetchError, cache_key, cached_tree

logger = logging.getLogger(__name__)

PUBLIC_SKILLS_REPO = "https://github.com/OpenHands/extensions"
"""Where the public skills are published."""
PUBLIC_SKILLS_REF = os.environ.get("EXTENSIONS_REF", "main")
"""The branch, tag or commit used (the EXTENSIONS_REF environment variable, else main)."""
FETCH_TIMEOUT_SECONDS = 20.0
"""The longest one git command may take: a conversation start waits for it."""
_KEEP_SECONDS = 60.0

_cache: dict[tuple[str, str, str | None], tuple[float, list[Skill]]] = {}
_cache_lock = threading.Lock()


def public_skills_cache_dir() -> Path:
    """Where the public skills repository is cached: the user cache dir's `ohtui/skills`."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("ohtui")) / "skills"


def load_public_skills(
    repo_url: str | None = None,
    ref: str | None = None,
    marketplace_path: str | None = DEFAULT_MARKETPLACE_PATH,
) -> list[Skill]:
    """The public skills of `repo_url` (default PUBLIC_SKILLS_REPO) at `ref` (default
    PUBLIC_SKILLS_REF): those the repository's `marketplace_path` lists (None: every skill
    in its `skills/` folder). An empty list, with a warning logged, when the repository
    cannot be fetched and no copy of it is cached; it never raises for that.
    """
    repo_url = repo_url or PUBLIC_SKILLS_REPO
    ref = ref or PUBLIC_SKILLS_REF
    key = (repo_url, ref, marketplace_path)
    with _cache_lock:
        kept = _cache.get(key)
        if kept is not None and time.monotonic() - kept[0] < _KEEP_SECONDS:
            return list(kept[1])
    skills = _load(repo_url, ref, marketplace_path)
    with _cache_lock:
        _cache[key] = (time.monotonic(), list(skills))
    return skills


def forget_public_skills() -> None:
    """Drop the results kept in this process: the next load fetches again."""
    with _cache_lock:
        _cache.clear()


def _load(repo_url: str, ref: str, marketplace_path: str | None) -> list[Skill]:
    root = _fetch(repo_url, ref)
    if root is None:
        return []
    skills_dir = root / "skills"
    if not skills_dir.is_dir():
        logger.warning("public skills: %s has no skills/ folder at %s; none loaded", repo_url, ref)
        return []
    loaded = read_skills_dir(skills_dir).skills
    if marketplace_path is None:
        chosen = list(loaded.values())
    else:
        names = _marketplace_names(root / marketplace_path)
        if names is None:
            logger.warning(
                "public skills: no usable marketplace %s in %s; none loaded",
                marketplace_path,
                repo_url,
            )
            return []
        chosen = [loaded[name] for name in names if name in loaded]
    logger.info("public skills: %d loaded from %s at %s", len(chosen), repo_url, ref)
    return chosen


def _fetch(repo_url: str, ref: str) -> Path | None:
    """The repository's files at `ref`: fetched, else the cached copy, else None (logged)."""
    repo_dir = public_skills_cache_dir() / cache_key(repo_url, "public-skills")
    what = f"public skills {repo_url}"
    try:
        return cached_tree(repo_url, ref, repo_dir, what, FETCH_TIMEOUT_SECONDS)[0]
    except GitFetchError as exc:
        reason = str(exc)
    if (repo_dir / "repo.git").is_dir():
        try:
            tree = cached_tree(repo_url, ref, repo_dir, what, FETCH_TIMEOUT_SECONDS, refresh=False)
        except GitFetchError:
            pass
        else:
            logger.warning("%s; using the copy fetched before", reason)
            return tree[0]
    logger.warning("%s; going on without public skills", reason)
    return None


def _marketplace_names(path: Path) -> list[str] | None:
    """The skill names a marketplace file lists (its plugins and skills), or None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        logger.debug("marketplace %s unreadable: %s", path, exc)
        return None
    if not isinstance(data, dict):
        return None
    names: list[str] = []
    for entry in [*data.get("plugins", []), *data.get("skills", [])]:
        name = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(name, str) and name not in names:
            names.append(name)
    return names


__all__ = [
    "DEFAULT_MARKETPLACE_PATH",
    "PUBLIC_SKILLS_REF",
    "PUBLIC_SKILLS_REPO",
    "forget_public_skills",
    "load_public_skills",
]
