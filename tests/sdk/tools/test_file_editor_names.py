"""File names that are not text: a view lists them quoted, one line each, and its answer can
always be saved (a name that is not UTF-8 used to crash the run, and every resume with it)."""

from __future__ import annotations

import os
import subprocess
import types
from pathlib import Path

import pytest

from ohtui.sdk.tools.file_editor import FileEditorAction, FileEditorObservation, FileEditorTool
from ohtui.sdk.tools.file_editor.render import list_directory
from ohtui.sdk.workspace.local import LocalWorkspace
from ohtui.terminal_text import is_shown, shell_quoted

ODD_NAMES = {
    b"bad\xffname": r"bad\xffname",  # not UTF-8
    b"latin1-caf\xe9": r"latin1-caf\xe9",
    b"surrogate-\xed\xa0\x80": r"surrogate-\xed\xa0\x80",  # an encoded surrogate (CESU-8)
    b"overlong-\xc0\xaf": r"overlong-\xc0\xaf",
    b"line\nbreak.txt": r"line\nbreak.txt",  # would read as two entries
    b"fake\n/etc/passwd-looking": r"fake\n",
    b"esc\x1b]0;title\x07": r"esc\E]0;title\x07",
    b"cr\rover": r"cr\rover",
    b"tab\there": r"tab\there",
    b"bidi\xe2\x80\xaegpj.exe": r"bidi\xe2\x80\xaegpj.exe",  # U+202E
    b"c1-\xc2\x9bcsi": r"c1-\xc2\x9bcsi",  # U+009B
    b"quote'and\\slash\x01": r"quote\'and\\slash\x01",
}
PLAIN_NAMES = ["plain.txt", "café é.md", "中文 名前.py", "emoji 😀.txt", "quote'd \\ back"]


def make_editor(root: Path) -> FileEditorTool:
    state = types.SimpleNamespace(workspace=LocalWorkspace(working_dir=str(root)), agent_state={})
    [tool] = FileEditorTool.create(state)  # type: ignore[arg-type]
    return tool


def make_odd_files(root: Path) -> None:
    for raw in ODD_NAMES:
        with open(os.fsencode(root) + b"/" + raw.replace(b"/", b"_"), "w"):
            pass
    for name in PLAIN_NAMES:
        (root / name).write_text("")


def test_a_view_of_a_folder_with_odd_names_lists_each_quoted_on_its_own_line(
    tmp_path: Path,
) -> None:
    make_odd_files(tmp_path)
    observation = make_editor(tmp_path)(FileEditorAction(command="view", path="."))
    assert isinstance(observation, FileEditorObservation) and not observation.is_error
    observation.model_dump_json()  # it can be saved
    lines = observation.text.splitlines()
    entries = [line for line in lines if line.startswith((str(tmp_path), "$'"))]
    assert len(entries) == len(ODD_NAMES) + len(PLAIN_NAMES)
    for fragment in ODD_NAMES.values():
        [line] = [e for e in entries if fragment in e]
        assert line.startswith(f"$'{tmp_path}/") and line.endswith("'")
    for name in PLAIN_NAMES:
        assert f"{tmp_path}/{name}" in entries
    assert all(is_shown(c) for c in observation.text.replace("\n", ""))
    assert f"[{len(ODD_NAMES)} paths above are not plain UTF-8 text" in observation.text


def test_each_quoted_name_names_its_file_in_bash(tmp_path: Path) -> None:
    make_odd_files(tmp_path)
    quoted = [line for line in list_directory(tmp_path).splitlines() if line.startswith("$'")]
    script = "".join(f"test -e {line} && echo found\n" for line in quoted)
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["found"] * len(ODD_NAMES)


def test_odd_folders_inside_and_the_root_itself_are_quoted(tmp_path: Path) -> None:
    root = Path(os.fsdecode(os.fsencode(tmp_path) + b"/root\xff"))
    os.makedirs(os.fsencode(root) + b"/sub\xfe")
    with open(os.fsencode(root) + b"/sub\xfe/inner", "w"):
        pass
    text = list_directory(root)
    assert text.splitlines()[:3] == [
        rf"Files and directories up to 2 levels deep in $'{tmp_path}/root\xff/':",
        rf"$'{tmp_path}/root\xff/sub\xfe/'",
        rf"$'{tmp_path}/root\xff/sub\xfe/inner'",
    ]


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_plain_names_are_left_as_they_are(name: str) -> None:
    assert shell_quoted(f"/w/{name}") == f"/w/{name}"
