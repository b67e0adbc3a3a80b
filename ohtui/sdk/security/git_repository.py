"""Whether a `git` command would run or read only what its allow rule was checked against.

Git finds its repository from the current directory and obeys that repository's own
configuration and hooks: `cd vendor/lib && git status` into a clone whose config sets
`core.fsmonitor` runs a program. `git_problem` refuses what it cannot vouch for: options
and variables that choose another repository or configuration, a `cd` in the same line, a
repository whose configuration holds any key outside `git_config.SAFE_KEYS`, submodules
(git runs itself in each), and hooks the subcommand could run. It reads the files git would
read, as they are now, and starts no process.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ohtui.sdk.security.git_config import GitConfigError, unsafe_keys
from ohtui.sdk.security.shell.model import Command
from ohtui.sdk.security.shell.programs import risky_assignment

SAFE_GLOBAL_OPTIONS = frozenset(
    {
        "--no-pager",
        "-P",
        "-p",
        "--paginate",
        "--no-replace-objects",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-optional-locks",
        "--no-lazy-fetch",
        "--no-advice",
        "--version",
        "--help",
        "-h",
    }
)
"""Options before the subcommand that choose no repository, configuration or program."""
NO_HOOKS = frozenset(
    {
        "log",
        "show",
        "blame",
        "annotate",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "cat-file",
        "rev-list",
        "show-ref",
        "describe",
        "shortlog",
        "grep",
        "for-each-ref",
        "name-rev",
        "merge-base",
        "count-objects",
        "check-ignore",
        "check-attr",
        "diff-tree",
        "diff-files",
        "diff-index",
        "whatchanged",
        "cherry",
        "range-diff",
        "version",
        "var",
        "help",
    }
)
"""Subcommands that write neither the index nor a ref, so run no hook."""
INDEX_HOOKS: dict[str, tuple[str, ...]] = {
    "status": ("post-index-change",),
    "diff": ("post-index-change",),
}
"""Subcommands that may refresh the index, and the hook that then runs. Any other runs any."""
DIRECTORY_COMMANDS = frozenset({"cd", "pushd", "popd"})
MAX_CONFIG_BYTES = 1 << 20
HARMLESS_GIT_VARIABLES = frozenset(
    {
        "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
        "GIT_SSL_CAINFO",
        "GIT_SSL_CAPATH",
        "GIT_SSL_NO_VERIFY",
    }
)
"""Besides those `risky_assignment` finds harmless: where the search below stops (it goes
on across file systems anyway), and which certificates HTTPS trusts."""


@dataclass(frozen=True)
class Repository:
    """Where git keeps a repository: its own folder, the shared one, and its work tree."""

    git_dir: str
    common_dir: str
    work_tree: str | None

    @property
    def config_files(self) -> list[str]:
        """The repository's configuration files (those that exist or may)."""
        files = [os.path.join(self.common_dir, "config")]
        for extra in (os.path.join(self.git_dir, "config"), self.worktree_config):
            if extra not in files:
                files.append(extra)
        return files

    @property
    def worktree_config(self) -> str:
        """`config.worktree`, read when `extensions.worktreeConfig` is set (checked always)."""
        return os.path.join(self.git_dir, "config.worktree")


class RepositoryError(Exception):
    """Where git would look cannot be read: nothing is vouched for."""


def git_problem(
    command: Command, cwd: str, env: Mapping[str, str], *, changes_directory: bool
) -> str | None:
    """Why `command` (a git command run in `cwd` with `env`) may run or read what no rule
    was checked against; None when it reads only the repository's harmless settings.
    `changes_directory`: the same line runs `cd`, `pushd` or `popd`."""
    words = command.words
    index = 1
    while index < len(words) and words[index].startswith("-"):
        if words[index] not in SAFE_GLOBAL_OPTIONS:
            return f"`git {words[index]}` chooses another repository, configuration or program"
        index += 1
    subcommand = words[index] if index < len(words) else None
    if changes_directory:
        return "the line changes directory before git runs, into a repository not checked"
    for name, value in env.items():
        git = name.startswith("GIT_") and name not in HARMLESS_GIT_VARIABLES
        if git and risky_assignment(name, value):
            return f"the shell's environment sets {name}, which changes what git reads"
    if subcommand is None or subcommand in ("version", "help"):
        return None
    ceilings = [p for p in env.get("GIT_CEILING_DIRECTORIES", "").split(":") if p]
    try:
        repositories = find_repositories(cwd, ceilings)
        for repository in repositories:
            problem = repository_problem(repository, subcommand)
            if problem:
                return problem
    except RepositoryError as exc:
        return f"git would read a repository that cannot be checked ({exc})"
    return None


def find_repositories(cwd: str, ceilings: Sequence[str] = ()) -> list[Repository]:
    """The repository git would use from `cwd`, after any folder on the way that looks
    like one but that git might skip (so both are checked). Empty: no repository."""
    stops = {os.path.realpath(c) for c in ceilings if os.path.isabs(c)}
    directory = os.path.realpath(cwd)
    found: list[Repository] = []
    while True:
        dot_git = os.path.join(directory, ".git")
        if os.path.isfile(dot_git):
            found.append(_linked(dot_git, directory))
            return found  # git uses it, or stops with an error
        for git_dir, work_tree in ((dot_git, directory), (directory, None)):
            certain = _git_directory(git_dir)
            if certain is not None:
                found.append(Repository(git_dir, _common_dir(git_dir), work_tree))
                if certain:
                    return found
        parent = os.path.dirname(directory)
        if parent == directory or parent in stops:
            return found
        directory = parent


def repository_problem(repository: Repository, subcommand: str) -> str | None:
    """Why git running `subcommand` in `repository` may run or read more than it seems."""
    for path in repository.config_files:
        try:
            with open(path, "rb") as file:
                data = file.read(MAX_CONFIG_BYTES + 1)
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f"git would read {path}, which cannot be checked ({exc.strerror})"
        if len(data) > MAX_CONFIG_BYTES:
            return f"git would read {path}, too large to check"
        try:
            unsafe = unsafe_keys(data.decode("utf-8"))
        except (GitConfigError, UnicodeDecodeError) as exc:
            return f"git would read {path}, which cannot be checked ({exc})"
        if unsafe:
            keys = ", ".join(f"`{key}`" for key in unsafe[:3])
            return f"git would read the repository's configuration {keys} ({path})"
    submodules = _submodules(repository)
    if submodules:
        return f"git would run in the repository's submodules ({submodules})"
    hook = _hook(repository, subcommand)
    if hook:
        return f"`git {subcommand}` may run the repository's hook {hook}"
    return None


def _linked(dot_git: str, work_tree: str) -> Repository:
    """The repository a `.git` file points at (`gitdir: …`)."""
    try:
        with open(dot_git, encoding="utf-8") as file:
            text = file.read(4096)
    except (OSError, UnicodeDecodeError) as exc:
        raise RepositoryError(f"{dot_git}: {exc}") from exc
    if not text.startswith("gitdir: "):
        raise RepositoryError(f"{dot_git} does not name a git directory")
    git_dir = os.path.join(work_tree, text[len("gitdir: ") :].strip())
    return Repository(git_dir, _common_dir(git_dir), work_tree)


def _common_dir(git_dir: str) -> str:
    """The folder a linked worktree shares with its main repository (`commondir`)."""
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as file:
            common = file.read(4096).strip()
    except FileNotFoundError:
        return git_dir
    except (OSError, UnicodeDecodeError) as exc:
        raise RepositoryError(f"{git_dir}/commondir: {exc}") from exc
    return os.path.join(git_dir, common)


def _git_directory(path: str) -> bool | None:
    """Whether git surely takes `path` for a git directory (True), might (False: it looks
    like one, but its HEAD is not plainly valid), or does not (None)."""
    head = os.path.join(path, "HEAD")
    if not (os.path.lexists(head) and os.path.isdir(os.path.join(path, "objects"))):
        return None
    if not os.path.exists(os.path.join(path, "refs")):
        return None
    try:
        if os.path.islink(head):
            return os.readlink(head).startswith("refs/")
        with open(head, encoding="ascii") as file:
            text = file.read(256)
    except (OSError, UnicodeDecodeError):
        return False
    if text.startswith("ref:"):
        return text[4:].strip().startswith("refs/")
    oid = text.strip()
    return len(oid) in (40, 64) and all(c in "0123456789abcdef" for c in oid)


def _submodules(repository: Repository) -> str | None:
    """What shows the repository has submodules (or might), if anything."""
    if repository.work_tree and os.path.lexists(os.path.join(repository.work_tree, ".gitmodules")):
        return ".gitmodules"
    modules = os.path.join(repository.common_dir, "modules")
    if os.path.isdir(modules) and os.listdir(modules):
        return modules
    if glob.glob(os.path.join(glob.escape(repository.git_dir), "sharedindex.*")):
        return "a split index, not checked"
    try:
        with open(os.path.join(repository.git_dir, "index"), "rb") as file:
            index = file.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"its index cannot be read: {exc.strerror}"
    # An entry of mode 160000 (a gitlink, big-endian); any such bytes count (fail closed).
    return "a gitlink in the index" if b"\x00\x00\xe0\x00" in index else None


def _hook(repository: Repository, subcommand: str) -> str | None:
    """An executable hook `subcommand` may run, if there is one."""
    if subcommand in NO_HOOKS:
        return None
    hooks = os.path.join(repository.common_dir, "hooks")
    names = INDEX_HOOKS.get(subcommand)
    try:
        candidates = names or [n for n in os.listdir(hooks) if not n.endswith(".sample")]
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"in {hooks}, which cannot be read ({exc.strerror})"
    for name in candidates:
        path = os.path.join(hooks, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None
