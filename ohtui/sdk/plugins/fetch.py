"""Fetching a plugin: a local directory as it is, a git repository cloned into a cache.

A git source is kept as a bare clone, `<cache>/<name>-<hash>/repo.git`, and each commit
used is unpacked once into `<cache>/<name>-<hash>/<sha>/` (never changed afterwards, so
conversations pinned to different commits never disturb each other, and a pinned commit
already unpacked needs no network).  Git never prompts (`GIT_TERMINAL_PROMPT=0`, ssh in
batch mode) and every git command has a time limit, so an unreachable source fails within
seconds with a PluginFetchError that says what to check.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ohtui.sdk.plugins.types import PluginSource, redact_url_credentials

GIT_TIMEOUT_SECONDS = 60.0
"""The longest one git command (a clone, a fetch) may take before the fetch fails."""
STALL_SECONDS = 10
"""A transfer slower than 1 KB/s for this long is abandoned (git's http.lowSpeedTime)."""
_GIT_URL = re.compile(r"^(https?|git|ssh|file)://|^[\w.-]+@[\w.-]+:")
_SHA = re.compile(r"^[0-9a-f]{40}$")


class PluginFetchError(RuntimeError):
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
    repo_dir = (cache_dir or default_cache_dir()) / _cache_key(shown)
    git = _Git(repo_dir / "repo.git", shown, timeout)
    pinned = spec.ref is not None and _SHA.match(spec.ref.lower()) is not None
    if pinned and (repo_dir / spec.ref.lower()).is_dir():  # type: ignore[union-attr]
        sha = spec.ref.lower()  # type: ignore[union-attr]
    else:
        if not git.git_dir.is_dir():
            git.clone(url)
        elif not (pinned and git.has_commit(spec.ref or "")):
            git.update(url)
        sha = git.resolve(spec.ref)
    tree = repo_dir / sha
    if not tree.is_dir():
        git.unpack(sha, tree)
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


def _cache_key(source: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", source.rstrip("/").rsplit("/", 1)[-1])
    name = name.removesuffix(".git")[:40] or "plugin"
    return f"{name}-{hashlib.sha256(source.encode()).hexdigest()[:12]}"


class _Git:
    """git commands on one cached bare clone, time-limited and never prompting."""

    def __init__(self, git_dir: Path, shown: str, timeout: float) -> None:
        self.git_dir = git_dir
        self.shown = shown
        self.timeout = timeout

    def _run(
        self, *args: str, what: str, git_dir: Path | None = None, no_repo: bool = False
    ) -> bytes:
        """Run git on `git_dir` (default: the cache's clone; `no_repo`: on none)."""
        command = ["git", "-c", "http.lowSpeedLimit=1000"]
        command += ["-c", f"http.lowSpeedTime={STALL_SECONDS}"]
        if not no_repo:
            command.append(f"--git-dir={git_dir or self.git_dir}")
        env = {
            **os.environ,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "",
            "SSH_ASKPASS": "",
            "GIT_SSH_COMMAND": f"ssh -o BatchMode=yes -o ConnectTimeout={STALL_SECONDS}",
        }
        try:
            done = subprocess.run(
                [*command, *args],
                capture_output=True,
                env=env,
                timeout=self.timeout,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError as exc:
            raise PluginFetchError(
                f"plugin {self.shown}: git is not installed; install git to use git plugins"
            ) from exc
        except subprocess.TimeoutExpired as exc:
            raise PluginFetchError(
                f"plugin {self.shown}: could not {what} within {self.timeout:g} s; "
                "check the URL and your network"
            ) from exc
        if done.returncode != 0:
            said = redact_url_credentials(done.stderr.decode(errors="replace").strip())
            last = said.splitlines()[-1] if said else f"exit status {done.returncode}"
            raise PluginFetchError(f"plugin {self.shown}: could not {what}: {last}")
        return done.stdout

    def clone(self, url: str) -> None:
        """A bare clone into the cache (into a temporary folder first: never a half one)."""
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".clone-", dir=self.git_dir.parent))
        try:
            self._run(
                "clone",
                "--bare",
                "--quiet",
                "--",
                url,
                str(scratch / "repo.git"),
                what="clone it",
                no_repo=True,
            )
            # The URL may carry credentials: fetches name it each time, the cache never keeps it.
            self._run(
                "remote", "remove", "origin", what="forget its URL", git_dir=scratch / "repo.git"
            )
            try:
                (scratch / "repo.git").rename(self.git_dir)
            except OSError:
                if not self.git_dir.is_dir():  # else another process cloned it meanwhile
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def update(self, url: str) -> None:
        """Bring branches and tags up to date with the source."""
        self._run(
            "fetch",
            "--quiet",
            "--prune",
            "--force",
            url,
            "+refs/heads/*:refs/heads/*",
            "+refs/tags/*:refs/tags/*",
            what="update it",
        )

    def has_commit(self, ref: str) -> bool:
        try:
            self._run("cat-file", "-e", f"{ref}^{{commit}}", what="look up a commit")
        except PluginFetchError:
            return False
        return True

    def resolve(self, ref: str | None) -> str:
        """The commit a ref names (None: the default branch)."""
        name = ref or "HEAD"
        try:
            out = self._run("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", what="")
        except PluginFetchError:
            raise PluginFetchError(
                f"plugin {self.shown}: it has no branch, tag or commit {name!r}"
                if ref
                else f"plugin {self.shown}: the repository has no commits"
            ) from None
        return out.decode().strip()

    def unpack(self, sha: str, tree: Path) -> None:
        """Write the files of commit `sha` to `tree` (whole, or not at all)."""
        archive = self._run("archive", "--format=tar", sha, what=f"read commit {sha[:12]}")
        scratch = Path(tempfile.mkdtemp(prefix=".tree-", dir=tree.parent))
        try:
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                _extract(tar, scratch / "t")
            try:
                (scratch / "t").rename(tree)
            except OSError:
                if not tree.is_dir():
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def _extract(tar: tarfile.TarFile, target: Path) -> None:
    """Unpack a commit's files; nothing may land outside `target` (git archives never try)."""
    if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
        tar.extractall(target, filter="data")
        return
    for member in tar.getmembers():
        parts = Path(member.name).parts
        if Path(member.name).is_absolute() or ".." in parts or member.islnk():
            raise PluginFetchError(f"refusing to unpack {member.name!r}: it points outside")
    tar.extractall(target)  # members checked above
