"""What git runs for the user stays out of the agent's reach: the repository's git folder
(config, hooks, commondir, info...), the folder core.hooksPath names, the files its
configuration includes, each submodule's git folder. The working tree stays writable, git
reads work, and `writable = [".git"]` opts in to the rest.

Each try runs in the sandbox; the proof is on the host: git, run as the user would, must not
run what the try wrote (a marker file outside the workspace would appear).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from sandbox_shell import run, sandboxed

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GIT, *args], cwd=repo, capture_output=True, text=True, check=False, timeout=30
    )


@pytest.fixture
def repo(project: Path) -> Path:
    git(project, "init", "-q")
    (project / "a.txt").write_text("a\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "init")
    return project


def tries(marker: Path) -> list[str]:
    hook = f"#!/bin/sh\\ntouch {marker}\\n"
    return [
        f"printf '{hook}' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        f"printf '{hook}' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout",
        f"git config core.fsmonitor 'touch {marker}; false'",
        f"git config diff.external 'touch {marker}; true'",
        f"printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >> .git/config",
        f"git config alias.st '!touch {marker}'",
        f"mkdir -p evil && printf '[core]\\n\\tfsmonitor = touch {marker}\\n' > evil/config "
        "&& cp -r .git/objects .git/refs .git/HEAD evil/ && echo ../evil > .git/commondir",
        "mv .git .git-old && mkdir .git && cp -r .git-old/. .git/ "
        f"&& git config core.fsmonitor 'touch {marker}'",
        f"rm -rf .git/hooks && mkdir .git/hooks && printf '{hook}' > .git/hooks/pre-commit "
        "&& chmod +x .git/hooks/pre-commit",
        f"printf '* filter=evil\\n' > .git/info/attributes && git config filter.evil.clean "
        f"'touch {marker}; cat'",
        f"printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/post-checkout "
        "&& chmod +x .git/hooks/post-checkout",
        f"git config include.path ../inc.cfg; printf '[core]\\n\\tfsmonitor = touch {marker}\\n' "
        "> inc.cfg",
    ]


@pytest.mark.parametrize("index", range(12))
def test_a_command_cannot_plant_what_git_runs_for_the_user(
    index: int, repo: Path, outside_tmp: Path
) -> None:
    marker = outside_tmp / "PWNED"
    attack = tries(marker)[index]
    shell = sandboxed(repo)
    try:
        run(shell, attack)
    finally:
        shell.close()
    # The user, later, outside the sandbox:
    (repo / "a.txt").write_text("b\n")
    for args in (
        ("status",),
        ("diff",),
        ("add", "-A"),
        ("commit", "-qm", "x"),
        ("st",),
        ("checkout", "-qb", "other"),
    ):
        git(repo, *args)
    assert not marker.exists(), attack


def test_the_hooks_folder_core_hookspath_names_is_read_only(repo: Path, outside_tmp: Path) -> None:
    marker = outside_tmp / "PWNED"
    (repo / ".husky" / "_").mkdir(parents=True)
    git(repo, "config", "core.hooksPath", ".husky/_")
    shell = sandboxed(repo)
    try:
        code, out = run(
            shell,
            f"printf '#!/bin/sh\\ntouch {marker}\\n' > .husky/_/pre-commit "
            "&& chmod +x .husky/_/pre-commit",
        )
    finally:
        shell.close()
    assert code != 0 and "Read-only" in out
    (repo / "a.txt").write_text("c\n")
    git(repo, "commit", "-qam", "x")
    assert not marker.exists()


def test_the_folders_above_the_hooks_cannot_be_moved_aside(repo: Path, outside_tmp: Path) -> None:
    marker = outside_tmp / "PWNED"
    (repo / ".husky" / "_").mkdir(parents=True)
    git(repo, "config", "core.hooksPath", ".husky/_")
    shell = sandboxed(repo)
    try:
        run(
            shell,
            f"mv .husky .husky-old; mkdir -p .husky/_ && printf '#!/bin/sh\\ntouch {marker}\\n' "
            "> .husky/_/pre-commit && chmod +x .husky/_/pre-commit",
        )
    finally:
        shell.close()
    (repo / "a.txt").write_text("c\n")
    git(repo, "commit", "-qam", "x")
    assert not marker.exists()


def test_a_submodules_git_folder_is_read_only(repo: Path, outside_tmp: Path) -> None:
    sub = repo / "vendor" / "lib"
    sub.mkdir(parents=True)
    git(sub, "init", "-q")
    (repo / ".gitmodules").write_text('[submodule "lib"]\n\tpath = vendor/lib\n\turl = ./x\n')
    shell = sandboxed(repo)
    try:
        code, _ = run(shell, "git -C vendor/lib config core.fsmonitor 'touch /x'")
    finally:
        shell.close()
    assert code != 0
    assert "fsmonitor" not in (sub / ".git" / "config").read_text()


def test_the_working_tree_stays_writable_and_git_reads_work(repo: Path) -> None:
    shell = sandboxed(repo)
    try:
        code, out = run(shell, "echo new > b.txt && git status --short && git log --oneline")
    finally:
        shell.close()
    assert code == 0, out
    assert "?? b.txt" in out and "init" in out
    assert (repo / "b.txt").read_text() == "new\n"


def test_a_commit_asks_for_the_opt_in_and_works_with_it(repo: Path) -> None:
    shell = sandboxed(repo)
    try:
        code, out = run(shell, f"echo x >> a.txt && {' '.join(GIT)} commit -qam change")
    finally:
        shell.close()
    assert code != 0 and "Read-only file system" in out
    opted = sandboxed(repo, writable=(".git",))
    try:
        code, out = run(opted, f"{' '.join(GIT)} commit -qam change && git log --oneline")
    finally:
        opted.close()
    assert code == 0 and "change" in out, out


def test_a_repository_made_by_the_agent_is_protected_from_the_next_command(
    project: Path,
) -> None:
    from ohtui.sdk.sandbox import Sandbox, SandboxConfig
    from ohtui.sdk.tools.terminal import TerminalAction
    from ohtui.sdk.tools.terminal.executor import TerminalExecutor

    executor = TerminalExecutor(
        working_dir=str(project), sandbox=lambda: Sandbox(SandboxConfig(), str(project))
    )
    try:
        first = executor(TerminalAction(command="git init -q && echo made"))
        second = executor(TerminalAction(command="echo x > .git/hooks/pre-commit"))
    finally:
        executor.close()
    assert "made" in first.text
    assert not second.text.strip().endswith("[exit code 0]"), second.text
    assert not (project / ".git" / "hooks" / "pre-commit").exists()


def test_a_gitdir_file_cannot_be_pointed_elsewhere(project: Path, outside_tmp: Path) -> None:
    """A worktree's `.git` is a file naming the git folder: rewriting it would make git read a
    configuration the agent wrote."""
    main = outside_tmp / "main"
    main.mkdir()
    git(main, "init", "-q")
    (main / "a.txt").write_text("a\n")
    git(main, "add", "-A")
    git(main, "commit", "-qm", "init")
    worktree = project / "wt"
    git(main, "worktree", "add", "-q", str(worktree))
    marker = outside_tmp / "PWNED"
    shell = sandboxed(project)
    try:
        run(
            shell,
            "mkdir -p wt/evil && cp -r ../../main/.git/. wt/evil/ 2>/dev/null; "
            f"printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >> wt/evil/config && "
            "echo 'gitdir: evil' > wt/.git",
        )
    finally:
        shell.close()
    git(worktree, "status")
    assert not marker.exists()


def test_a_hooks_folder_named_but_missing_cannot_be_made(repo: Path, outside_tmp: Path) -> None:
    """core.hooksPath names a folder not there yet (before `npm install`, after `git clean`):
    the agent must not be the one to make it, with hooks in it."""
    marker = outside_tmp / "PWNED"
    git(repo, "config", "core.hooksPath", ".husky/_")
    shell = sandboxed(repo)
    try:
        run(
            shell,
            f"mkdir -p .husky/_; printf '#!/bin/sh\\ntouch {marker}\\n' > .husky/_/pre-commit; "
            "chmod +x .husky/_/pre-commit",
        )
    finally:
        shell.close()
    (repo / "a.txt").write_text("c\n")
    git(repo, "commit", "-qam", "x")
    assert not marker.exists()


def test_an_included_file_named_but_missing_cannot_be_made(repo: Path, outside_tmp: Path) -> None:
    marker = outside_tmp / "PWNED"
    git(repo, "config", "include.path", "../local.gitconfig")  # from .git/config: the top
    shell = sandboxed(repo)
    try:
        run(shell, f"printf '[core]\\n\\tfsmonitor = touch {marker}\\n' > local.gitconfig")
    finally:
        shell.close()
    (repo / "a.txt").write_text("c\n")
    git(repo, "status")
    assert not marker.exists()


def test_a_git_folder_not_named_git_is_refused_to_the_editor(project: Path) -> None:
    """A worktree layout: `.git` is a file naming `.bare`, which holds the config and hooks."""
    from ohtui.sdk.sandbox import Sandbox, SandboxConfig

    git(project, "init", "-q", "--bare", ".bare")
    (project / ".git").write_text("gitdir: ./.bare\n")
    sandbox = Sandbox(SandboxConfig(), str(project))
    for path in (".bare/hooks/pre-commit", ".bare/config"):
        problem = sandbox.check_write(str(project / path))
        assert problem is not None and "git configuration" in problem, path
    assert sandbox.check_write(str(project / "src.py")) is None


def test_a_workspace_in_a_hidden_folder_keeps_its_git_folder_read_only(
    repo: Path, home: Path, outside_tmp: Path
) -> None:
    """The user works in a folder the sandbox hides the rest of (say ~/.password-store)."""
    marker = outside_tmp / "PWNED"
    (home / "secret.txt").write_text("hidden\n")
    shell = sandboxed(repo, hidden=[str(home)])
    try:
        code, out = run(shell, f"git config core.fsmonitor 'touch {marker}; false'")
        _, other = run(shell, f"ls {home}; echo END")
    finally:
        shell.close()
    assert code != 0, out
    git(repo, "status")
    assert not marker.exists()
    assert "secret.txt" not in other and "END" in other  # the rest of the folder stays hidden


def test_a_hidden_folder_made_after_the_shell_started_is_hidden(project: Path, home: Path) -> None:
    """`aws configure` run by the user while the agent's shell lives; and a hidden folder
    removed and made again (a mount covers the old one only)."""
    from ohtui.sdk.sandbox import Sandbox, SandboxConfig
    from ohtui.sdk.tools.terminal import TerminalAction
    from ohtui.sdk.tools.terminal.executor import TerminalExecutor

    (home / ".ssh").mkdir()
    (home / ".ssh" / "id").write_text("old key\n")
    executor = TerminalExecutor(
        working_dir=str(project), sandbox=lambda: Sandbox(SandboxConfig(), str(project))
    )
    try:
        first = executor(TerminalAction(command="cat ~/.aws/credentials ~/.ssh/id; echo ONE"))
        (home / ".aws").mkdir()
        (home / ".aws" / "credentials").write_text("aws secret\n")
        (home / ".ssh" / "id").unlink()
        (home / ".ssh").rmdir()
        (home / ".ssh").mkdir()
        (home / ".ssh" / "id").write_text("new key\n")
        second = executor(TerminalAction(command="cat ~/.aws/credentials ~/.ssh/id; echo TWO"))
    finally:
        executor.close()
    assert "ONE" in first.text and "old key" not in first.text
    assert "TWO" in second.text, second.text
    assert "aws secret" not in second.text and "new key" not in second.text, second.text


@pytest.mark.parametrize(
    ("key", "value", "planted"),
    [
        ("core.hooksPath", ".githooks", ".githooks/pre-commit"),
        ("core.hooksPath", "tools/../hooks", "hooks/pre-commit"),
        ("core.hooksPath", "{repo}/abs-hooks", "abs-hooks/pre-commit"),
    ],
)
def test_more_hooks_folders_named_but_missing(
    key: str, value: str, planted: str, repo: Path, outside_tmp: Path
) -> None:
    marker = outside_tmp / "PWNED"
    git(repo, "config", key, value.format(repo=repo))
    shell = sandboxed(repo)
    try:
        run(
            shell,
            f"mkdir -p $(dirname {planted}); printf '#!/bin/sh\\ntouch {marker}\\n' > {planted}; "
            f"chmod +x {planted}",
        )
    finally:
        shell.close()
    (repo / "a.txt").write_text("d\n")
    git(repo, "commit", "-qam", "x")
    assert not marker.exists()


def test_a_hidden_folder_replaced_by_a_link_after_the_start_is_hidden(
    project: Path, home: Path, outside_tmp: Path
) -> None:
    from ohtui.sdk.sandbox import Sandbox, SandboxConfig
    from ohtui.sdk.tools.terminal import TerminalAction
    from ohtui.sdk.tools.terminal.executor import TerminalExecutor

    (home / ".kube").mkdir()
    elsewhere = outside_tmp / "kube-real"
    elsewhere.mkdir()
    (elsewhere / "config").write_text("kube token\n")
    executor = TerminalExecutor(
        working_dir=str(project), sandbox=lambda: Sandbox(SandboxConfig(), str(project))
    )
    try:
        executor(TerminalAction(command="echo ONE"))
        (home / ".kube").rmdir()
        (home / ".kube").symlink_to(elsewhere)
        second = executor(TerminalAction(command="cat ~/.kube/config; echo TWO"))
    finally:
        executor.close()
    assert "TWO" in second.text and "kube token" not in second.text, second.text
