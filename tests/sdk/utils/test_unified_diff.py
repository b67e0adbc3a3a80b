"""Unified diffs as text: split by file with their counts, and reversed exactly as git would
write the other direction (checked against real git on a real repository)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ohtui.sdk.utils.unified_diff import reverse, split_patches


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.quotePath=true"]
    done = subprocess.run(
        [*command, *args], cwd=root, capture_output=True, env=env, check=True, text=True
    )
    return done.stdout


def two_commits(root: Path) -> None:
    files = {
        "m.txt": b"a\nb\nc\nd\n",
        "gone.txt": b"old\n",
        "b.bin": b"x\0",
        "no-eol.txt": b"noeol",
        "sp ace\t.txt": b"q\n",
        "mode.sh": b"m\n",
        "dash.txt": b"-- minus\n",
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "1")
    (root / "m.txt").write_bytes(b"a\nB\nc\nd\ne\n")
    (root / "gone.txt").unlink()
    (root / "b.bin").write_bytes(b"y\0")
    (root / "new.txt").write_bytes(b"new\n")
    (root / "no-eol.txt").write_bytes(b"noeol2")
    (root / "sp ace\t.txt").write_bytes(b"Q\n")
    (root / "mode.sh").chmod(0o755)
    (root / "dash.txt").write_bytes(b"++ plus\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "2")


def test_reversing_gives_what_git_writes_the_other_way(tmp_path: Path) -> None:
    two_commits(tmp_path)
    forward = git(tmp_path, "diff-tree", "-r", "-p", "--no-renames", "HEAD~1", "HEAD")
    backward = git(tmp_path, "diff-tree", "-r", "-p", "--no-renames", "HEAD", "HEAD~1")
    assert reverse(backward) == forward
    assert reverse(forward) == backward


def test_files_are_split_and_counted(tmp_path: Path) -> None:
    two_commits(tmp_path)
    diff = git(tmp_path, "diff-tree", "-r", "-p", "--no-renames", "HEAD~1", "HEAD")
    patches, cut = split_patches(diff)
    assert not cut
    assert [(p.path, p.status, p.added, p.removed, p.binary) for p in patches] == [
        ("b.bin", "modified", 0, 0, True),
        ("dash.txt", "modified", 1, 1, False),
        ("gone.txt", "deleted", 0, 1, False),
        ("m.txt", "modified", 2, 1, False),
        ("mode.sh", "modified", 0, 0, False),
        ("new.txt", "added", 1, 0, False),
        ("no-eol.txt", "modified", 1, 1, False),
        ("sp ace\t.txt", "modified", 1, 1, False),
    ]
    assert "".join(p.text + "\n" for p in patches) == diff


def test_a_cut_diff_keeps_its_note_and_says_it_was_cut() -> None:
    diff = (
        "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n"
        "[diff cut at 200,000 bytes: ask for fewer paths to see the rest]\n"
    )
    patches, cut = split_patches(diff)
    assert cut and [p.path for p in patches] == ["a"] and patches[0].text.endswith("+y")
    assert patches[0].cut  # only its start is there
    reversed_diff = reverse(diff)
    assert reversed_diff.splitlines()[-3:] == ["-y", "+x", diff.splitlines()[-1]]


def test_a_plain_unified_diff_is_split_at_its_headers() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-1\n+2\n--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+new\n"
    patches, _ = split_patches(diff)
    assert [(p.path, p.status, p.added, p.removed) for p in patches] == [
        ("x", "modified", 1, 1),
        ("y", "added", 1, 0),
    ]
