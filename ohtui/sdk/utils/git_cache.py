"""A git repository cached on disk: a bare clone, and each commit used unpacked once.

The clone is `<dir>/repo.git` and commit `<sha>` is unpacked into `<dir>/<sha>/` (never
changed afterwards, so users pinned to different commits never disturb each other, and a
pinned commit already unpacked needs no network). Git never prompts (`GIT_TERMINAL_PROMPT=0`,
ssh in batch mode) and every git command has a time limit, so an unreachable source fails
within seconds with an error (of the caller's type) that says what to check. Plugins and the
public skills are fetched through it.
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
from pathlib import Path

GIT_TIMEOUT_SECONDS = 60.0
"""The longest one git command (a clone, a fetch) may take before the fetch fails."""
STALL_SECONDS = 10
"""A transfer slower than 1 KB/s for this long is abandoned (git's http.lowSpeedTime)."""
SHA = re.compile(r"^[0-9a-f]{40}$")
_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")


class GitFetchError(RuntimeError):
    """A git source that could not be fetched; the message says which and why."""


def redact_url_credentials(source: str) -> str:
    """`source` with any `user:token@` of a URL replaced by `****@` (safe to save or show)."""
    return _CREDENTIALS.sub(r"\g<scheme>****@", source)


def cache_key(source: str, fallback: str = "repo") -> str:
    """A folder name for `source`'s cache: its last path part and a hash of it all."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", source.rstrip("/").rsplit("/", 1)[-1])
    name = name.removesuffix(".git")[:40] or fallback
    return f"{name}-{hashlib.sha256(source.encode()).hexdigest()[:12]}"


def cached_tree(
    url: str,
    ref: str | None,
    repo_dir: Path,
    what: str,
    timeout: float = GIT_TIMEOUT_SECONDS,
    error: type[GitFetchError] = GitFetchError,
    refresh: bool = True,
) -> tuple[Path, str]:
    """The unpacked files of `url` at `ref` (None: the default branch) and their commit.

    `what` names the source in errors ("plugin github:o/r"); `error` is the type raised.
    `refresh=False` uses the clone already cached as it is (no network once it exists).
    """
    git = GitCache(repo_dir / "repo.git", what, timeout, error)
    pinned = ref is not None and SHA.match(ref.lower()) is not None
    if pinned and (repo_dir / ref.lower()).is_dir():  # type: ignore[union-attr]
        sha = ref.lower()  # type: ignore[union-attr]
    else:
        if not git.git_dir.is_dir():
            git.clone(url)
        elif refresh and not (pinned and git.has_commit(ref or "")):
            git.update(url)
        sha = git.resolve(ref)
    tree = repo_dir / sha
    if not tree.is_dir():
        git.unpack(sha, tree)
    return tree, sha


class GitCache:
    """git commands on one cached bare clone, time-limited and never prompting."""

    def __init__(
        self,
        git_dir: Path,
        what: str,
        timeout: float = GIT_TIMEOUT_SECONDS,
        error: type[GitFetchError] = GitFetchError,
    ) -> None:
        self.git_dir = git_dir
        self.what = what
        self.timeout = timeout
        self.error = error

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
            raise self.error(
                f"{self.what}: git is not installed; install git to fetch git sources"
            ) from exc
        except subprocess.TimeoutExpired as exc:
            raise self.error(
                f"{self.what}: could not {what} within {self.timeout:g} s; "
                "check the URL and your network"
            ) from exc
        if done.returncode != 0:
            said = redact_url_credentials(done.stderr.decode(errors="replace").strip())
            last = said.splitlines()[-1] if said else f"exit status {done.returncode}"
            raise self.error(f"{self.what}: could not {what}: {last}")
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
        except GitFetchError:
            return False
        return True

    def resolve(self, ref: str | None) -> str:
        """The commit a ref names (None: the default branch)."""
        name = ref or "HEAD"
        try:
            out = self._run("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", what="")
        except GitFetchError:
            raise self.error(
                f"{self.what}: it has no branch, tag or commit {name!r}"
                if ref
                else f"{self.what}: the repository has no commits"
            ) from None
        return out.decode().strip()

    def unpack(self, sha: str, tree: Path) -> None:
        """Write the files of commit `sha` to `tree` (whole, or not at all)."""
        archive = self._run("archive", "--format=tar", sha, what=f"read commit {sha[:12]}")
        scratch = Path(tempfile.mkdtemp(prefix=".tree-", dir=tree.parent))
        try:
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                extract(tar, scratch / "t")
            try:
                (scratch / "t").rename(tree)
            except OSError:
                if not tree.is_dir():
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def extract(tar: tarfile.TarFile, target: Path) -> None:
    """Unpack a commit's files; nothing may land outside `target` (git archives never try)."""
    if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
        tar.extractall(target, filter="data")
        return
    for member in tar.getmembers():
        parts = Path(member.name).parts
        if Path(member.name).is_absolute() or ".." in parts or member.islnk():
            raise GitFetchError(f"refusing to unpack {member.name!r}: it points outside")
    tar.extractall(target)  # members checked above
