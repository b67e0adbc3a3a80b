"""Fetching a plugin: a local directory as it is, a git repository cloned into a cache.

A git source is kept in `<cache>/<name>-<hash>/` (`utils/git_cache.py`: a bare clone and
each commit used unpacked once); an unreachable source fails within seconds with a
PluginFetchError that says what to check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ohtui.sdk.plugins.types import PluginSource, redact_url_credentials
from ohtui.sdk.utils.git_cache import (
    GIT_TIMEOUT_SECONDS,
    STALL_SECONDS,
    GitFetchError,
    cache_key,
    cached_tree,
)

__all__ = [
    "GIT_TIMEOUT_SECONDS",
    "STALL_SECONDS",
    "FetchedPlugin",
    "PluginFetchError",
    "default_cache_dir",
    "fetch_plugin",
    "git_url",
]

_GIT_URL = re.compile(r"^(https?|git|ssh|file)://|^[\w.-]+@[\w.-]+:")


class PluginFetchError(GitFetchError):
    """A plugin source that could not be fetched; the message says which and why."""


@dataclass(frozen=True)
class FetchedPlugin:
    """Where a fetched plugin is on disk, and the commit it is at (None: a local folder)."""

    path: Path
    resolved_ref: str | None


def default_cache_dir() -> Path:
    """Where git plugins are cached: the user cache dir's `ohtui/plugins`."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("ohtui")) / "plugins"


def git_url(source: str) -> str | None:
    """The git URL a source names (`github:o/r` included), or None for a local path."""
    if source.startswith("github:"):
        repo = source.removeprefix("github:").strip("/")
        if repo.count("/") != 1 or not all(repo.split("/")):
            raise PluginFetchError(
                f"plugin source {source!r}: write a GitHub repository as 'github:owner/repo'"
            )
        return f"https://github.com/{repo.removesuffix('.git')}.git"
    return source if _GIT_URL.match(source) else None


def fetch_plugin(
    spec: PluginSource, cache_dir: Path | None = None, timeout: float = GIT_TIMEOUT_SECONDS
) -> FetchedPlugin:
    """The plugin's folder on disk (cloned or updated as needed) and its commit."""
    url = git_url(spec.source)
    if url is None:
        return FetchedPlugin(_local_plugin_dir(spec), None)
    shown = redact_url_credentials(spec.source)
    repo_dir = (cache_dir or default_cache_dir()) / cache_key(shown, "plugin")
    tree, sha = cached_tree(url, spec.ref, repo_dir, f"plugin {shown}", timeout, PluginFetchError)
    return FetchedPlugin(_inside(tree, spec, shown), sha)


def _local_plugin_dir(spec: PluginSource) -> Path:
    path = Path(spec.source).expanduser()
    if spec.ref is not None:
        raise PluginFetchError(
            f"plugin {spec.source}: a ref ({spec.ref!r}) applies to git sources only; "
            "drop it, or give the repository's URL"
        )
    if not path.is_dir():
        what = "is not a folder" if path.exists() else "does not exist"
        raise PluginFetchError(
            f"plugin {spec.source} {what}: give a plugin folder, a git URL, or 'github:owner/repo'"
        )
    return _inside(path.resolve(), spec, spec.source)


def _inside(root: Path, spec: PluginSource, shown: str) -> Path:
    if spec.repo_path is None:
        return root
    path = root / spec.repo_path
    if not path.is_dir():
        raise PluginFetchError(
            f"plugin {shown}: it has no folder {spec.repo_path!r} (repo_path); "
            "check the path inside the repository"
        )
    return path
