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


# --- what a workspace may hold where a rules file should be ---------------------------------


def index_within(root: Path, seconds: float = 10.0) -> set[str]:
    """The index of `root`, or a test failure if building it takes longer (a hang)."""
    import threading

    found: list[set[str]] = []
    worker = threading.Thread(
        target=lambda: found.append(set(index_workspace(root).paths)), daemon=True
    )
    worker.start()
    worker.join(seconds)
    assert found, f"indexing {root} hung (a rules file that never ends?)"
    return found[0]


def fifo(path: Path) -> None:
    import os

    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


@pytest.mark.parametrize(
    "where",
    [".gitignore", "src/.gitignore", ".git/info/exclude", ".git", "deep/er/.gitignore"],
)
def test_a_fifo_where_rules_are_read_never_hangs_the_index(tmp_path: Path, where: str) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/main.py").write_text("x")
    if where.startswith(".git/"):
        (tmp_path / ".git/info").mkdir(parents=True)
    fifo(tmp_path / where)
    assert "src/main.py" in index_within(tmp_path)


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom"])
def test_a_rules_file_linked_to_an_endless_device_is_not_read(tmp_path: Path, target: str) -> None:
    (tmp_path / "a.py").write_text("x")
    (tmp_path / ".gitignore").symlink_to(target)
    assert index_within(tmp_path) == {"a.py"}


def test_a_huge_rules_file_is_left_unread(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x")
    (tmp_path / "b.log").write_text("x")
    with (tmp_path / ".gitignore").open("w") as out:
        out.write("*.log\n")
        out.write(("#" * 1023 + "\n") * 3000)  # 3 MB of comments
    assert index_within(tmp_path) == {"a.py", "b.log"}


def test_a_gitignore_that_links_outside_is_not_followed(tmp_path: Path) -> None:
    """As git does since 2.32: a symbolic link in place of a .gitignore is not read."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws/a.py").write_text("x")
    (tmp_path / "outside").write_text("*.py\n")
    (tmp_path / "ws/.gitignore").symlink_to(tmp_path / "outside")
    assert index_within(tmp_path / "ws") == {"a.py"}


def test_a_gitdir_pointer_to_a_fifo_or_a_missing_folder_adds_no_rule(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text("x")
    fifo(tmp_path / "elsewhere/info/exclude")
    fifo(tmp_path / "elsewhere/commondir")
    (workspace / ".git").write_text(f"gitdir: {tmp_path / 'elsewhere'}\n")
    assert index_within(workspace) == {"a.py"}
    (workspace / ".git").write_text("gitdir: /nonexistent/nowhere\n")
    assert index_within(workspace) == {"a.py"}


# Later tries of the same classes, written after the fix and not around it.


def test_a_gitignore_that_is_a_folder_or_a_socket_adds_no_rule(tmp_path: Path) -> None:
    import socket

    (tmp_path / "a.log").write_text("x")
    (tmp_path / ".gitignore").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/b.log").write_text("x")
    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(str(tmp_path / "sub/.gitignore"))
        assert index_within(tmp_path) == {"a.log", "sub/", "sub/b.log"}
    finally:
        listener.close()


@pytest.mark.parametrize("target", ["/dev/null", "/dev/tty", "/proc/self/environ"])
def test_a_gitignore_linked_to_a_special_file_is_not_followed(tmp_path: Path, target: str) -> None:
    (tmp_path / "a.py").write_text("x")
    (tmp_path / ".gitignore").symlink_to(target)
    assert index_within(tmp_path) == {"a.py"}


def test_the_exclude_file_linked_to_an_endless_device_adds_no_rule(tmp_path: Path) -> None:
    (tmp_path / ".git/info").mkdir(parents=True)
    (tmp_path / ".git/info/exclude").symlink_to("/dev/zero")
    (tmp_path / "a.py").write_text("x")
    assert index_within(tmp_path) == {"a.py"}


def test_a_git_file_linked_to_a_fifo_or_pointing_into_one_adds_no_rule(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.py").write_text("x")
    fifo(tmp_path / "pipe")
    (workspace / ".git").symlink_to(tmp_path / "pipe")
    assert index_within(workspace) == {"a.py"}
    (workspace / ".git").unlink()
    (workspace / ".git").write_text(f"gitdir: {tmp_path / 'pipe'}\n")
    assert index_within(workspace) == {"a.py"}


def test_a_commondir_climbing_out_reads_no_device(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (tmp_path / "gd").mkdir()
    (tmp_path / "gd/commondir").write_text("../../../../../../../../dev\n")
    workspace.mkdir()
    (workspace / "a.py").write_text("x")
    (workspace / ".git").write_text(f"gitdir: {tmp_path / 'gd'}\n")
    assert index_within(workspace) == {"a.py"}


def test_a_gitignore_of_bad_bytes_still_reads_its_good_lines(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x")
    (tmp_path / "b.log").write_text("x")
    (tmp_path / ".gitignore").write_bytes(b"\xff\xfe\x00junk\x00\n*.log\n\x80\x81\n")
    assert index_within(tmp_path) == {"a.py"}


def test_a_rules_file_at_the_limit_is_read_and_one_byte_more_is_not(tmp_path: Path) -> None:
    from ohtui.tui.ignore_rules import MAX_RULES_FILE

    (tmp_path / "a.py").write_text("x")
    (tmp_path / "b.log").write_text("x")
    rules = "*.log\n"
    padding = MAX_RULES_FILE - len(rules)
    (tmp_path / ".gitignore").write_text(rules + "#" * (padding - 1) + "\n")
    assert index_within(tmp_path) == {"a.py"}
    (tmp_path / ".gitignore").write_text(rules + "#" * padding + "\n")
    assert index_within(tmp_path) == {"a.py", "b.log"}


def test_a_nested_gitignore_linked_to_the_top_one_is_not_read_twice(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.log\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/.gitignore").symlink_to(tmp_path / ".gitignore")
    (tmp_path / "sub/keep.txt").write_text("x")
    (tmp_path / "sub/x.log").write_text("x")
    assert index_within(tmp_path) == {"sub/", "sub/keep.txt"}


def test_many_deep_wildcards_stay_quick(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("**/**/**/**/**/**/**/**/z*z*z*z*z*z*z*z*q\n")
    deep = tmp_path / "/".join(["d"] * 12)
    deep.mkdir(parents=True)
    (deep / ("z" * 60)).write_text("x")
    started = time.monotonic()
    assert f"{'d/' * 12}{'z' * 60}" in index_within(tmp_path)
    assert time.monotonic() - started < 5
