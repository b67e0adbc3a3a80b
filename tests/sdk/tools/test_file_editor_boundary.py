"""The file editor keeps to the boundary by where a file really is, not by its name: links,
hard links, `..`, hidden folders inside the workspace and ohtui's own files, in every mode.

The races (a name swapped while the editor works) are in test_file_editor_races.py.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ohtui.sdk.sandbox import Sandbox, SandboxConfig, SandboxMode
from ohtui.sdk.tools.file_editor import FileEditorAction, FileEditorObservation
from ohtui.sdk.tools.file_editor.editor import FileEditorExecutor

ALIASES = "alias ls='ls --color'\n"
CONFIG = '[sandbox]\nmode = "workspace-write"\n'


@dataclass
class App:
    """ohtui's own folders in a fake home."""

    config: Path
    """config.toml, in the (private) config folder."""
    history: Path
    """The prompt history, in the (private) data folder."""
    skill: Path
    """A skill of the user's (protected: readable, never written)."""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (home / ".bash_aliases").write_text(ALIASES)
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def app(home: Path) -> App:
    config = home / ".config" / "ohtui" / "config.toml"
    history = home / ".local" / "share" / "ohtui" / "prompt-history.jsonl"
    skill = home / ".config" / "ohtui" / "skills" / "deploy" / "SKILL.md"
    for path, text in ((config, CONFIG), (history, '{"text": "my secret plan"}\n')):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    skill.parent.mkdir(parents=True)
    skill.write_text("Deploy with care\n")
    return App(config, history, skill)


def editor_for(
    workspace: Path,
    home: Path,
    app: App,
    mode: SandboxMode = SandboxMode.WORKSPACE_WRITE,
    **config: Any,
) -> FileEditorExecutor:
    sandbox = Sandbox(
        SandboxConfig(mode=mode, **config),
        str(workspace),
        home=str(home),
        private=(str(app.config.parent), str(app.history.parent)),
        protected=(str(app.skill.parent.parent),),
    )
    return FileEditorExecutor(str(workspace), sandbox=lambda: sandbox)


@pytest.fixture
def editor(workspace: Path, home: Path, app: App) -> FileEditorExecutor:
    return editor_for(workspace, home, app)


@pytest.fixture(params=[SandboxMode.WORKSPACE_WRITE, SandboxMode.OFF], ids=["sandbox", "off"])
def any_mode(request: pytest.FixtureRequest, workspace: Path, home: Path, app: App) -> Any:
    return editor_for(workspace, home, app, mode=request.param)


def run(editor: FileEditorExecutor, **fields: Any) -> FileEditorObservation:
    return editor(FileEditorAction(**fields))


def refused(editor: FileEditorExecutor, **fields: Any) -> str:
    obs = run(editor, **fields)
    assert obs.is_error, obs.text
    return obs.text


def ok(editor: FileEditorExecutor, **fields: Any) -> FileEditorObservation:
    obs = run(editor, **fields)
    assert not obs.is_error, obs.text
    return obs


EDITS = [
    pytest.param({"command": "str_replace", "old_str": "--color", "new_str": "-G"}, id="str"),
    pytest.param({"command": "insert", "insert_line": 0, "new_str": "x"}, id="insert"),
]


# --- hard links -----------------------------------------------------------------------------


@pytest.mark.parametrize("fields", EDITS)
def test_a_hard_link_to_a_file_outside_is_not_written(
    editor: FileEditorExecutor, workspace: Path, home: Path, fields: dict[str, Any]
) -> None:
    os.link(home / ".bash_aliases", workspace / "aliases")
    message = refused(editor, path="aliases", **fields)
    assert "2 names (hard links)" in message
    assert "cp -p" in message
    assert (home / ".bash_aliases").read_text() == ALIASES


def test_a_hard_link_to_ohtui_config_is_not_written_with_the_sandbox_off(
    workspace: Path, home: Path, app: App
) -> None:
    editor = editor_for(workspace, home, app, mode=SandboxMode.OFF)
    os.link(app.config, workspace / "settings.toml")
    refused(editor, command="str_replace", path="settings.toml", old_str="workspace", new_str="x")
    assert app.config.read_text() == CONFIG


def test_undo_does_not_write_back_through_a_hard_link(
    editor: FileEditorExecutor, workspace: Path, home: Path
) -> None:
    (workspace / "notes.txt").write_text(ALIASES)
    ok(editor, command="str_replace", path="notes.txt", old_str="--color", new_str="-G")
    (workspace / "notes.txt").unlink()
    os.link(home / ".bash_aliases", workspace / "notes.txt")
    (home / ".bash_aliases").write_text("mine\n")
    assert "hard links" in refused(editor, command="undo_edit", path="notes.txt")
    assert (home / ".bash_aliases").read_text() == "mine\n"


def test_a_hard_linked_file_can_still_be_viewed(
    editor: FileEditorExecutor, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("shared\n")
    os.link(workspace / "a.txt", workspace / "b.txt")
    assert "shared" in ok(editor, command="view", path="b.txt").text


# --- hidden folders inside the workspace ----------------------------------------------------


def test_a_hidden_folder_inside_the_workspace_is_not_listed(
    workspace: Path, home: Path, app: App
) -> None:
    editor = editor_for(workspace, home, app, hidden=(str(workspace / "secrets"),))
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "prod.env").write_text("TOKEN=1\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("")
    text = ok(editor, command="view", path=".").text
    assert f"{workspace}/src/main.py" in text
    assert f"{workspace}/secrets/" in text  # its name, as the shell sees it: an empty folder
    assert "prod.env" not in text
    assert f"Could not read: {workspace}/secrets" in text


# --- ohtui's own files, reached by a link, in every mode -------------------------------------


def test_a_link_to_ohtui_config_is_neither_read_nor_written(
    any_mode: FileEditorExecutor, workspace: Path, app: App
) -> None:
    (workspace / "settings.toml").symlink_to(app.config)
    for fields in ({"command": "view"}, *[p.values[0] for p in EDITS]):
        message = refused(any_mode, path="settings.toml", **fields)  # type: ignore[arg-type]
        assert "belongs to the application running the agent" in message
        assert "workspace-write" not in message
    assert app.config.read_text() == CONFIG


def test_a_folder_linked_to_ohtui_data_gets_no_new_file(
    any_mode: FileEditorExecutor, workspace: Path, app: App
) -> None:
    (workspace / "data").symlink_to(app.history.parent)
    message = refused(any_mode, command="create", path="data/approval-rules.json", file_text="{}")
    assert "belongs to the application running the agent" in message
    assert not (app.history.parent / "approval-rules.json").exists()


def test_the_prompt_history_is_not_viewed_by_its_path(
    any_mode: FileEditorExecutor, app: App
) -> None:
    assert "my secret plan" not in refused(any_mode, command="view", path=str(app.history))


def test_a_skill_is_never_written(any_mode: FileEditorExecutor, workspace: Path, app: App) -> None:
    (workspace / "skill.md").symlink_to(app.skill)
    refused(any_mode, command="insert", path="skill.md", insert_line=0, new_str="curl x | sh")
    assert app.skill.read_text() == "Deploy with care\n"


def test_a_skill_is_read_with_the_sandbox_off(workspace: Path, home: Path, app: App) -> None:
    editor = editor_for(workspace, home, app, mode=SandboxMode.OFF)
    (workspace / "skill.md").symlink_to(app.skill)
    assert "Deploy with care" in ok(editor, command="view", path="skill.md").text


def test_the_repositorys_git_config_is_not_written_through_a_link(
    editor: FileEditorExecutor, workspace: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "cfg").symlink_to(".git/config")
    message = refused(
        editor, command="insert", path="cfg", insert_line=0, new_str="[core]\nfsmonitor = x"
    )
    assert "git configuration or hooks" in message
    assert "fsmonitor" not in (workspace / ".git" / "config").read_text()


# --- names that lead outside ----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["../outside.txt", "sub/../../outside.txt", "{tmp}/outside.txt", "~/outside.txt"],
)
def test_dot_dot_and_absolute_paths_outside_are_refused(
    editor: FileEditorExecutor, tmp_path: Path, path: str
) -> None:
    (tmp_path / "workspace" / "sub").mkdir()
    message = refused(editor, command="create", path=path.format(tmp=tmp_path), file_text="x\n")
    assert "outside the sandbox" in message
    assert not (tmp_path / "outside.txt").exists()
    assert not (tmp_path / "home" / "outside.txt").exists()


def test_a_link_to_a_hidden_credential_is_not_viewed(
    editor: FileEditorExecutor, workspace: Path, home: Path
) -> None:
    (workspace / "key").symlink_to(home / ".ssh" / "id_ed25519")
    message = refused(editor, command="view", path="key")
    assert "hidden by the sandbox" in message
    assert "PRIVATE KEY" not in message


def test_a_chain_of_links_that_ends_outside_is_refused(
    editor: FileEditorExecutor, workspace: Path, home: Path
) -> None:
    (workspace / "c").symlink_to(home / ".bash_aliases")
    (workspace / "b").symlink_to("c")
    (workspace / "a").symlink_to(workspace / "b")
    assert "outside the sandbox" in refused(
        editor, command="str_replace", path="a", old_str="--color", new_str="x"
    )
    assert (home / ".bash_aliases").read_text() == ALIASES


def test_a_proc_magic_link_to_outside_is_refused(
    editor: FileEditorExecutor, workspace: Path, home: Path
) -> None:
    (workspace / "m").symlink_to(f"/proc/self/root{home}/.bash_aliases")
    assert "outside the sandbox" in refused(
        editor, command="insert", path="m", insert_line=0, new_str="x"
    )
    assert (home / ".bash_aliases").read_text() == ALIASES


def test_read_only_mode_writes_nothing(workspace: Path, home: Path, app: App) -> None:
    editor = editor_for(workspace, home, app, mode=SandboxMode.READ_ONLY)
    (workspace / "f.txt").write_text("a\n")
    assert "read-only" in refused(editor, command="create", path="new.txt", file_text="x")
    assert "read-only" in refused(
        editor, command="str_replace", path="f.txt", old_str="a", new_str="b"
    )
    assert "a" in ok(editor, command="view", path="f.txt").text
    assert not (workspace / "new.txt").exists()


# --- what still works -----------------------------------------------------------------------


def test_a_workspace_reached_through_a_link_is_the_workspace(
    tmp_path: Path, workspace: Path, home: Path, app: App
) -> None:
    (tmp_path / "ws-link").symlink_to(workspace)
    editor = editor_for(tmp_path / "ws-link", home, app)
    ok(editor, command="create", path="deep/er/new.txt", file_text="one\n")
    ok(editor, command="str_replace", path="deep/er/new.txt", old_str="one", new_str="two")
    assert (workspace / "deep" / "er" / "new.txt").read_text() == "two\n"
    ok(editor, command="undo_edit", path="deep/er/new.txt")
    ok(editor, command="undo_edit", path="deep/er/new.txt")
    assert not (workspace / "deep" / "er" / "new.txt").exists()


def test_a_link_inside_the_workspace_is_followed(
    editor: FileEditorExecutor, workspace: Path
) -> None:
    (workspace / "real").mkdir()
    (workspace / "real" / "f.txt").write_text("one\n")
    (workspace / "alias").symlink_to("real")
    ok(editor, command="str_replace", path="alias/f.txt", old_str="one", new_str="two")
    ok(editor, command="create", path="alias/g.txt", file_text="g\n")
    assert (workspace / "real" / "f.txt").read_text() == "two\n"
    assert (workspace / "real" / "g.txt").read_text() == "g\n"


# --- more names that lead outside, tried after the fix ----------------------------------------


def test_a_relative_link_climbing_out_is_refused(
    editor: FileEditorExecutor, workspace: Path, home: Path
) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "up").symlink_to("../../home/.bash_aliases")
    refused(editor, command="insert", path="sub/up", insert_line=0, new_str="x")
    assert (home / ".bash_aliases").read_text() == ALIASES


def test_a_path_through_proc_self_root_is_refused(editor: FileEditorExecutor, home: Path) -> None:
    path = f"/proc/self/root{home}/.bash_aliases"
    assert "outside the sandbox" in refused(
        editor, command="str_replace", path=path, old_str="--color", new_str="x"
    )
    assert (home / ".bash_aliases").read_text() == ALIASES


def test_a_folder_linked_to_a_missing_folder_outside_gets_nothing(
    editor: FileEditorExecutor, workspace: Path, home: Path
) -> None:
    (workspace / "conf").symlink_to(home / "not-yet")
    refused(editor, command="create", path="conf/sub/x.txt", file_text="x")
    assert not (home / "not-yet").exists()


def test_a_chain_of_too_many_links_to_outside_is_refused(
    editor: FileEditorExecutor, workspace: Path, home: Path
) -> None:
    (workspace / "l0").symlink_to(home / ".bash_aliases")
    for i in range(1, 45):
        (workspace / f"l{i}").symlink_to(f"l{i - 1}")
    refused(editor, command="insert", path="l44", insert_line=0, new_str="x")
    assert (home / ".bash_aliases").read_text() == ALIASES
