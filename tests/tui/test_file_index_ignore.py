"""The file index and `@` completion honour `.gitignore`: nested files, `!` patterns, the
repository's exclude file, and a folder that is no git repository at all."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import OptionList

from ohtui.tui.file_index import index_workspace
from ohtui.tui.ignore_rules import IgnoreRules
from ohtui.tui.widgets.composer import INDEXING_LABEL, Composer

FILES = (
    "README.md",
    "app.log",
    "build/out.o",
    "artifacts/bundle.js",
    "src/main.py",
    "src/debug.log",
    "src/gen/schema.gen.py",
    "src/gen/keep.gen.py",
    "src/gen/handwritten.py",
    "src/artifacts/kept.txt",
    "notes/private.md",
    "notes/public.md",
)
ROOT_IGNORE = "build/\n*.log\n/artifacts/\n"
NESTED_IGNORE = "# generated code\n*.gen.py\n!keep.gen.py\n"
OFFERED = {
    "README.md",
    "notes/",
    "notes/public.md",
    "src/",
    "src/artifacts/",  # `/artifacts/` is anchored to the top
    "src/artifacts/kept.txt",
    "src/gen/",
    "src/gen/handwritten.py",
    "src/gen/keep.gen.py",  # taken back by `!`
    "src/main.py",
}


def make_tree(root: Path) -> Path:
    """The files, the top `.gitignore` and a nested one in `src/gen/`."""
    for relative in FILES:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")
    (root / ".gitignore").write_text(ROOT_IGNORE, encoding="utf-8")
    (root / "src/gen/.gitignore").write_text(NESTED_IGNORE, encoding="utf-8")
    return root


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A git repository whose `.git/info/exclude` also ignores `notes/private.md`."""
    root = make_tree(tmp_path / "repo")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".git/info/exclude").write_text("# local\nnotes/private.md\n", encoding="utf-8")
    return root


def test_a_repository_offers_what_git_would_track(repository: Path) -> None:
    assert set(index_workspace(repository).paths) == OFFERED
    tracked_or_untracked = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"],
        cwd=repository,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert {p for p in OFFERED if not p.endswith("/")} == set(tracked_or_untracked) - {
        ".gitignore",
        "src/gen/.gitignore",
    }


def test_a_folder_outside_git_honours_its_gitignore_files(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "plain")
    assert set(index_workspace(root).paths) == OFFERED | {"notes/private.md"}


def test_a_linked_worktree_reads_the_shared_exclude_file(repository: Path) -> None:
    git = ["git", "-C", str(repository), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "files"], check=True)
    linked = repository.parent / "linked"
    subprocess.run([*git, "worktree", "add", "-q", str(linked)], check=True)
    assert (linked / ".git").is_file()
    assert set(index_workspace(linked).paths) == OFFERED


def test_rules_above_the_workspace_do_not_hide_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    make_tree(home / "project")
    subprocess.run(["git", "init", "-q", str(home)], check=True)
    (home / ".gitignore").write_text("*\n", encoding="utf-8")  # a home folder kept in git
    assert set(index_workspace(home / "project").paths) >= {"README.md", "src/main.py"}


def test_no_gitignore_adds_no_rule(tmp_path: Path) -> None:
    rules = IgnoreRules.at_top(tmp_path).entering(str(tmp_path), "")
    assert rules.layers == ()
    (tmp_path / ".gitignore").write_text("# only a comment\n\n", encoding="utf-8")
    assert IgnoreRules.at_top(tmp_path).entering(str(tmp_path), "").layers == ()


@pytest.mark.parametrize(
    ("patterns", "path", "ignored"),
    [
        ("*.log\n", "deep/er/x.log", True),
        ("*.log\n", "x.log/", True),  # a folder named like it too
        ("logs/\n", "logs", False),  # a file: the pattern names folders only
        ("logs/\n", "a/logs/", True),
        ("/top.txt\n", "top.txt", True),
        ("/top.txt\n", "a/top.txt", False),
        ("a/*.txt\n", "a/b.txt", True),
        ("a/*.txt\n", "a/b/c.txt", False),
        ("a/**/c.txt\n", "a/b/d/c.txt", True),
        ("*.txt\n!keep.txt\n", "keep.txt", False),
        ("[ab].md\n", "b.md", True),
        ("\\#hash\n", "#hash", True),
    ],
)
def test_patterns_read_as_git_reads_them(
    tmp_path: Path, patterns: str, path: str, ignored: bool
) -> None:
    (tmp_path / ".gitignore").write_text(patterns, encoding="utf-8")
    rules = IgnoreRules.at_top(tmp_path).entering(str(tmp_path), "")
    name = path[path.rstrip("/").rfind("/") + 1 :]
    assert rules.ignores(path, name) is ignored


class Host(App[None]):
    """A bare app around one Composer offering the files of `workspace`."""

    def __init__(self, workspace: Path) -> None:
        super().__init__()
        self.composer = Composer(workspace=workspace, history=None, commands=())

    def compose(self) -> ComposeResult:
        yield self.composer

    def on_mount(self) -> None:
        self.composer.focus_input()


def labels(app: Host) -> list[str]:
    """The completion menu's rows as plain text."""
    return [str(option.prompt) for option in app.query_one("#completions", OptionList).options]


async def wait_for(pilot: Pilot[None], app: Host, shown: list[str]) -> None:
    """Let the app run until the menu shows `shown`, failing after 5 seconds."""
    deadline = time.monotonic() + 5
    while labels(app) != shown:
        assert time.monotonic() < deadline, labels(app)
        await pilot.pause(0.01)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_at_completion_does_not_offer_ignored_files(repository: Path) -> None:
    app = Host(repository)
    async with app.run_test() as pilot:
        await pilot.press("@")
        deadline = time.monotonic() + 5
        while not app.composer.completion_open or INDEXING_LABEL in labels(app):
            assert time.monotonic() < deadline
            await pilot.pause(0.01)
        offered = labels(app)
        assert set(offered) <= OFFERED and "README.md" in offered
        await pilot.press(*"gen")
        await wait_for(pilot, app, ["src/gen/", "src/gen/handwritten.py", "src/gen/keep.gen.py"])
        for _ in "gen":
            await pilot.press("backspace")
        await pilot.press(*".log")
        await pilot.pause(0.3)  # a substring search would run off the UI thread
        assert not any(label.endswith(".log") for label in labels(app))


def test_a_folder_nothing_ignores_is_told_at_once(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\nbuild/\n/top.txt\n", encoding="utf-8")
    rules = IgnoreRules.at_top(tmp_path).entering(str(tmp_path), "")
    assert not rules.may_ignore("src/", ["a.py", "b.txt", "top.txt", "logs/"])
    assert rules.may_ignore("src/", ["a.py", "x.log", "b.py"])  # a name in the middle
    assert rules.may_ignore("src/", ["a.py", "build/"])
    assert rules.may_ignore("", ["a.py", "top.txt"])
