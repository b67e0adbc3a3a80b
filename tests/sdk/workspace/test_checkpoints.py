"""Workspace checkpoints against real git and real files."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from ohtui.sdk.workspace.checkpoints import CheckpointStore, CheckpointUnavailable, FileChange


@pytest.fixture
def store(tmp_path: Path, workspace: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path / "conversation" / "checkpoints", workspace)


def tree(root: Path) -> dict[str, tuple[str, bytes, bool]]:
    """Every file and link under root (outside .git): kind, content or target, exec bit."""
    found = {}
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            path = os.path.join(top, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                found[rel] = ("link", os.readlink(path).encode(), False)
            else:
                found[rel] = ("file", Path(path).read_bytes(), os.access(path, os.X_OK))
    return found


def folders(root: Path) -> set[str]:
    return {os.path.relpath(top, root) for top, _, _ in os.walk(root)} - {"."}


def test_round_trip_of_every_kind_of_change(store: CheckpointStore, workspace: Path) -> None:
    (workspace / "src" / "deep" / "er").mkdir(parents=True)
    (workspace / "src" / "main.py").write_text("print(1)\n")
    (workspace / "src" / "deep" / "er" / "x.txt").write_text("x\n")
    (workspace / "run.sh").write_text("#!/bin/sh\n")
    (workspace / "gone later.txt").write_text("é\n")
    (workspace / "ünï cødé.md").write_text("unicode\n")
    os.symlink("src/main.py", workspace / "link")
    before = tree(workspace)
    first = store.take("before: edit")
    assert first.files == 6

    (workspace / "src" / "main.py").write_text("print(2)\n")
    (workspace / "run.sh").chmod(0o755)
    (workspace / "gone later.txt").unlink()
    (workspace / "link").unlink()
    os.symlink("run.sh", workspace / "link")
    (workspace / "new dir" / "a b").mkdir(parents=True)
    (workspace / "new dir" / "a b" / "new.txt").write_text("new\n")
    (workspace / "src" / "deep" / "er" / "x.txt").unlink()
    after = tree(workspace)

    expected = [
        FileChange("gone later.txt", "added"),
        FileChange("link", "modified"),
        FileChange("new dir/a b/new.txt", "deleted"),
        FileChange("run.sh", "modified"),
        FileChange("src/deep/er/x.txt", "added"),
        FileChange("src/main.py", "modified"),
    ]
    assert store.changes(first.id) == expected
    diff = store.diff(first.id)
    assert "-print(2)\n+print(1)" in diff and "old mode 100755\nnew mode 100644" in diff
    assert "new dir/a b/new.txt" in store.diff(first.id, paths=["new dir"])
    assert "src/main.py" not in store.diff(first.id, paths=["new dir"])

    undo, applied = store.restore(first.id)
    assert applied == expected
    assert tree(workspace) == before
    assert "new dir" not in folders(workspace)  # left empty by the restore: removed
    assert store.changes(first.id) == []

    _, again = store.restore(undo.id)  # the restore itself is undone
    assert tree(workspace) == after
    assert {change.path for change in again} == {change.path for change in expected}


def test_list_is_newest_first_and_survives_a_new_store(
    store: CheckpointStore, workspace: Path
) -> None:
    (workspace / "a").write_text("1")
    one = store.take("before: one")
    two = store.take("before: two\nwith a second line ✓")  # an unchanged workspace too
    (workspace / "a").write_text("2")
    three = store.take("before: three")
    assert [c.id for c in store.list()] == [three.id, two.id, one.id]
    again = CheckpointStore(store.store_dir, workspace)
    assert again.list() == [three, two, one]
    assert again.get(two.id) == two and two.label == "before: two\nwith a second line ✓"
    assert again.get("0" * 40) is None and again.get("HEAD") is None
    again.restore(one.id)
    assert (workspace / "a").read_text() == "1"
    assert os.stat(store.store_dir).st_mode & 0o777 == 0o700


def test_ignored_files_are_never_deleted_nor_restored(
    store: CheckpointStore, workspace: Path
) -> None:
    (workspace / ".gitignore").write_text("*.log\nbuild/\n")
    (workspace / "keep.txt").write_text("k")
    (workspace / "old.log").write_text("log 1")
    first = store.take("before")
    (workspace / "old.log").write_text("log 2")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_text("object")
    (workspace / "keep.txt").unlink()
    assert store.changes(first.id) == [FileChange("keep.txt", "added")]
    store.restore(first.id)
    assert (workspace / "old.log").read_text() == "log 2"
    assert (workspace / "build" / "out.o").read_text() == "object"
    assert (workspace / "keep.txt").read_text() == "k"


def test_a_file_ignored_later_stops_being_tracked(store: CheckpointStore, workspace: Path) -> None:
    (workspace / "data.csv").write_text("1")
    store.take("before")
    (workspace / ".gitignore").write_text("*.csv\n")
    second = store.take("before")
    (workspace / "data.csv").unlink()
    (workspace / "data.csv").write_text("2")
    assert store.changes(second.id) == []
    assert second.files == 1  # only .gitignore


def git_state(repo: Path) -> dict[str, str]:
    hashes = {}
    for path in sorted((repo / ".git").rglob("*")):
        if path.is_file():
            hashes[str(path.relative_to(repo))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


def git(repo: Path, *args: str) -> str:
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": os.environ["PATH"]}
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo, env=env, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip


def test_the_users_repository_is_never_touched(store: CheckpointStore, workspace: Path) -> None:
    git(workspace, "init", "-q")
    (workspace / "tracked.txt").write_text("1")
    git(workspace, "add", "tracked.txt")
    git(workspace, "commit", "-qm", "one")
    (workspace / "tracked.txt").write_text("2")
    git(workspace, "stash", "-q")
    (workspace / "staged.txt").write_text("s")
    git(workspace, "add", "staged.txt")
    (workspace / "tracked.txt").write_text("3")
    status = git(workspace, "status", "--porcelain")
    before = git_state(workspace)

    first = store.take("before")
    assert ".git" not in {c.path.split("/")[0] for c in store.changes(store.take("x").id)}
    (workspace / "tracked.txt").write_text("4")
    (workspace / "staged.txt").unlink()
    store.restore(first.id)
    store.diff(first.id)

    assert git_state(workspace) == before
    assert git(workspace, "--no-optional-locks", "status", "--porcelain") == status
    assert git(workspace, "stash", "list").count("\n") == 1
    assert (workspace / "tracked.txt").read_text() == "3"


def test_hostile_workspace_config_and_attributes_run_nothing(
    store: CheckpointStore, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "marker"
    evil = f"touch {marker}"
    git(workspace, "init", "-q")
    hooks = workspace / ".git" / "hooks"
    for hook in ("pre-commit", "post-checkout", "post-index-change", "fsmonitor-watchman"):
        (hooks / hook).write_text(f"#!/bin/sh\n{evil}\n")
        (hooks / hook).chmod(0o755)
    with open(workspace / ".git" / "config", "a") as config:
        config.write(f'[core]\n\tfsmonitor = "{evil}"\n\thooksPath = .git/hooks\n')
        config.write(f'[filter "evil"]\n\tclean = {evil}\n\tsmudge = {evil}\n')
        config.write(f'[diff "evil"]\n\ttextconv = {evil}\n')
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f'[filter "evil"]\n\tclean = {evil}\n\tsmudge = {evil}\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", evil)
    monkeypatch.setenv("GIT_DIR", str(workspace / ".git"))
    (workspace / ".gitattributes").write_text("* filter=evil diff=evil text eol=crlf\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / ".gitattributes").write_text("* filter=evil\n")
    (workspace / "lf.txt").write_bytes(b"one\ntwo\n")
    (workspace / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")

    first = store.take("before")
    (workspace / "lf.txt").write_bytes(b"changed\n")
    (workspace / "crlf.txt").unlink()
    assert "-changed" in store.diff(first.id)
    store.restore(first.id)

    assert not marker.exists()
    assert (workspace / "lf.txt").read_bytes() == b"one\ntwo\n"
    assert (workspace / "crlf.txt").read_bytes() == b"one\r\ntwo\r\n"


def test_nested_repositories_are_skipped_whole(store: CheckpointStore, workspace: Path) -> None:
    (workspace / "vendor" / "lib").mkdir(parents=True)
    git(workspace / "vendor" / "lib", "init", "-q")
    (workspace / "vendor" / "lib" / "code.c").write_text("int x;")
    (workspace / "mine.txt").write_text("m")
    first = store.take("before")
    assert first.files == 1
    (workspace / "vendor" / "lib" / "code.c").write_text("int y;")
    (workspace / "vendor" / "lib" / "more.c").write_text("int z;")
    assert store.changes(first.id) == []
    store.restore(first.id)
    assert (workspace / "vendor" / "lib" / "more.c").exists()


def test_too_large_a_workspace_is_refused_with_a_reason(tmp_path: Path, workspace: Path) -> None:
    (workspace / "node_modules" / "pkg").mkdir(parents=True)
    for number in range(12):
        (workspace / "node_modules" / "pkg" / f"{number}.js").write_text("x")
    small = CheckpointStore(tmp_path / "store", workspace, max_files=10)
    with pytest.raises(CheckpointUnavailable) as raised:
        small.take("before")
    message = str(raised.value)
    assert "more than 10 files (12)" in message and "node_modules (12 files)" in message
    assert ".gitignore" in message
    (workspace / ".gitignore").write_text("node_modules/\n")
    assert small.take("before").files == 1

    (workspace / "big.bin").write_bytes(b"x" * 3000)
    tight = CheckpointStore(tmp_path / "tight", workspace, max_bytes=2048)
    with pytest.raises(CheckpointUnavailable, match=r"more than 2.0 KB in files"):
        tight.take("before")


def test_a_file_over_the_size_limit_is_skipped_and_kept(tmp_path: Path, workspace: Path) -> None:
    store = CheckpointStore(tmp_path / "store", workspace, max_file_bytes=100)
    (workspace / "small.txt").write_text("s")
    (workspace / "grows.txt").write_text("g")
    first = store.take("before")
    assert first.files == 2
    (workspace / "huge.bin").write_bytes(b"h" * 101)
    (workspace / "grows.txt").write_bytes(b"g" * 200)
    second = store.take("before")
    assert second.files == 1  # grows.txt is no longer tracked
    (workspace / "small.txt").unlink()
    store.restore(second.id)
    assert (workspace / "huge.bin").read_bytes() == b"h" * 101
    assert (workspace / "small.txt").exists()
    with pytest.raises(CheckpointUnavailable, match=r"grows\.txt exists but is not in"):
        store.restore(first.id)  # it would overwrite 200 untracked bytes
    assert (workspace / "grows.txt").read_bytes() == b"g" * 200


def test_a_symlink_to_outside_is_never_written_through(
    store: CheckpointStore, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".gitignore").write_text("out\n")
    (workspace / "out").mkdir()
    (workspace / "out" / "f.txt").write_text("f")
    (workspace / ".gitignore").write_text("")
    first = store.take("before")  # tracks out/f.txt
    (workspace / "out" / "f.txt").unlink()
    (workspace / "out").rmdir()
    os.symlink(outside, workspace / "out")
    (workspace / ".gitignore").write_text("out\n")  # the link is not tracked
    with pytest.raises(CheckpointUnavailable, match="through out, a symlink"):
        store.restore(first.id)
    assert list(outside.iterdir()) == []

    (workspace / ".gitignore").write_text("")  # now the link is tracked: it is replaced
    store.restore(first.id)
    assert list(outside.iterdir()) == []
    assert not (workspace / "out").is_symlink()
    assert (workspace / "out" / "f.txt").read_text() == "f"


def test_a_crash_leaves_nothing_that_blocks_the_next_checkpoint(
    store: CheckpointStore, workspace: Path
) -> None:
    (workspace / "a").write_text("1")
    first = store.take("before")
    root = store.store_dir
    (root / "index.lock").write_text("left by a killed git")
    (root / "totals").unlink()  # as if killed while the index was being changed
    (root / "lock").write_text("")
    (root / ".tmp-1-checkpoints").write_text("half a ref")
    (workspace / "a").write_text("2")
    second = store.take("before")
    assert second.files == 1
    assert [c.id for c in store.list()] == [second.id, first.id]
    (root / "refs" / "heads" / "checkpoints").write_text("garbage")
    third = store.take("after the garbage")
    assert store.list() == [third]  # the chain starts again rather than failing
    store.restore(first.id)
    assert (workspace / "a").read_text() == "1"


def test_unavailable_when_the_workspace_is_gone(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "store", tmp_path / "nowhere")
    with pytest.raises(CheckpointUnavailable, match="no longer exists"):
        store.take("before")
    assert store.list() == []
    with pytest.raises(CheckpointUnavailable, match="no checkpoint"):
        CheckpointStore(tmp_path / "store", tmp_path).restore("a" * 40)


def test_a_store_inside_the_workspace_is_not_checkpointed(workspace: Path) -> None:
    store = CheckpointStore(workspace / ".ohtui" / "checkpoints", workspace)
    (workspace / "a").write_text("1")
    assert store.take("before").files == 1
    assert store.take("again").files == 1


def test_a_long_diff_is_cut_with_a_note(store: CheckpointStore, workspace: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"line {n}\n" for n in range(5000)))
    (workspace / "bin").write_bytes(b"\0\1\2")
    first = store.take("before")
    (workspace / "big.txt").write_text("")
    (workspace / "bin").write_bytes(b"\0\3")
    assert "Binary files" in store.diff(first.id, paths=["bin"])
    cut = store.diff(first.id, max_bytes=1000)
    assert len(cut) < 1100 and cut.endswith("ask for fewer paths to see the rest]\n")
