"""Tests for the file_editor tool: every command, its errors, undo and line-ending care."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest

from ohtui.sdk.tool import Observation, Tool, resolve_tool
from ohtui.sdk.tools.file_editor import (
    FileEditorAction,
    FileEditorObservation,
    FileEditorTool,
    fileio,
)
from ohtui.sdk.workspace.local import LocalWorkspace


def make_state(root: Path) -> types.SimpleNamespace:
    return types.SimpleNamespace(workspace=LocalWorkspace(working_dir=str(root)), agent_state={})


@pytest.fixture
def editor(tmp_path: Path) -> FileEditorTool:
    [tool] = FileEditorTool.create(make_state(tmp_path))  # type: ignore[arg-type]
    return tool


def run(tool: FileEditorTool, **fields: Any) -> FileEditorObservation:
    obs = tool(FileEditorAction(**fields))
    assert isinstance(obs, FileEditorObservation)
    return obs


def ok(tool: FileEditorTool, **fields: Any) -> FileEditorObservation:
    obs = run(tool, **fields)
    assert not obs.is_error, obs.text
    return obs


def err(tool: FileEditorTool, **fields: Any) -> str:
    obs = run(tool, **fields)
    assert obs.is_error, obs.text
    return obs.text


# --- the tool itself ------------------------------------------------------------------------


def test_resolve_tool_registers_file_editor(tmp_path: Path) -> None:
    [tool] = resolve_tool(Tool(name="file_editor"), make_state(tmp_path))  # type: ignore[arg-type]
    assert isinstance(tool, FileEditorTool)
    assert tool.name == "file_editor"
    assert tool.annotations is not None
    assert not tool.is_read_only
    assert tool.annotations.destructiveHint is False
    assert str(tmp_path) in tool.description
    schema = tool.to_openai_tool()["function"]["parameters"]
    assert set(schema["properties"]) >= {"command", "path", "old_str", "view_range"}


def test_create_rejects_unknown_params(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no parameters"):
        FileEditorTool.create(make_state(tmp_path), colour="red")  # type: ignore[arg-type]


def test_observation_json_round_trip(editor: FileEditorTool, tmp_path: Path) -> None:
    obs = ok(editor, command="create", path="a.txt", file_text="hello\n")
    back = Observation.model_validate_json(obs.model_dump_json())
    assert type(back) is FileEditorObservation
    assert back == obs
    assert back.diff is not None and "+hello" in back.diff


def test_action_visualize_leaves_out_file_text(tmp_path: Path) -> None:
    action = FileEditorAction(command="create", path="x.py", file_text="SECRET\nline\n")
    shown = action.visualize.plain
    assert "create x.py" in shown
    assert "2 lines" in shown
    assert "SECRET" not in shown


def test_one_line_is_one_line_not_one_lines(editor: FileEditorTool, tmp_path: Path) -> None:
    obs = ok(editor, command="create", path="one.txt", file_text="hello\n")
    assert "Created" in obs.text and "(1 line)." in obs.text
    action = FileEditorAction(command="create", path="x.py", file_text="only\n")
    assert "(1 line)" in action.visualize.plain


def test_observation_visualize_colours_the_diff(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one\ntwo\n")
    obs = ok(editor, command="str_replace", path="f.txt", old_str="two", new_str="TWO")
    text = obs.visualize
    styles = {
        text.plain[span.start : span.end].rstrip("\n"): str(span.style) for span in text.spans
    }
    assert styles["+TWO"] == "green"
    assert styles["-two"] == "red"
    assert styles["@@ -1,2 +1,2 @@"] == "cyan"


def test_observation_visualize_reads_dashes_inside_a_hunk_as_a_removal(
    editor: FileEditorTool, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("keep\n-- old rule\n")
    obs = ok(editor, command="str_replace", path="f.txt", old_str="-- old rule", new_str="new")
    text = obs.visualize
    styles = {
        text.plain[span.start : span.end].rstrip("\n"): str(span.style) for span in text.spans
    }
    assert styles["--- old rule"] == "red"  # "--- " inside a hunk is not a file header
    assert styles["--- a/f.txt"] == "bold"


def test_view_visualize_is_the_text(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("one\n")
    obs = ok(editor, command="view", path="f.txt")
    assert obs.diff is None
    assert obs.visualize.plain == obs.text


# --- paths ----------------------------------------------------------------------------------


def test_relative_path_resolves_against_workspace(editor: FileEditorTool, tmp_path: Path) -> None:
    obs = ok(editor, command="create", path="sub/dir/new.txt", file_text="x\n")
    target = tmp_path / "sub" / "dir" / "new.txt"
    assert target.read_text() == "x\n"
    assert obs.path == str(target)
    assert obs.prev_exist is False


def test_tilde_expands_to_home(
    editor: FileEditorTool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    ok(editor, command="create", path="~/notes.txt", file_text="hi\n")
    assert (home / "notes.txt").read_text() == "hi\n"


def test_missing_path_says_so_and_points_to_a_directory(
    editor: FileEditorTool, tmp_path: Path
) -> None:
    message = err(editor, command="view", path="nowhere/file.txt")
    assert "does not exist" in message
    assert f"view the directory {tmp_path} " in message


def test_str_replace_on_missing_file_suggests_create(editor: FileEditorTool) -> None:
    message = err(editor, command="str_replace", path="gone.py", old_str="a", new_str="b")
    assert "does not exist" in message
    assert "create" in message


@pytest.mark.parametrize(
    "fields",
    [
        {"command": "str_replace", "old_str": "a", "new_str": "b"},
        {"command": "insert", "insert_line": 0, "new_str": "b"},
    ],
)
def test_directory_given_to_an_edit_is_an_error(
    editor: FileEditorTool, tmp_path: Path, fields: dict[str, Any]
) -> None:
    (tmp_path / "pkg").mkdir()
    message = err(editor, path="pkg", **fields)
    assert "is a directory" in message


def test_empty_path_is_an_error(editor: FileEditorTool) -> None:
    assert "path" in err(editor, command="view", path="  ")


# --- view -----------------------------------------------------------------------------------


def test_view_numbers_lines_like_cat_n(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("alpha\nbeta\n")
    obs = ok(editor, command="view", path="f.py")
    assert "     1\talpha\n     2\tbeta" in obs.text
    assert obs.prev_exist is True


def test_view_empty_file(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    assert "is empty" in ok(editor, command="view", path="empty.txt").text


@pytest.mark.parametrize(
    ("view_range", "shown", "hidden"),
    [([2, 3], ["     2\tl2", "     3\tl3"], ["l1", "l4"]), ([4, -1], ["     5\tl5"], ["l3"])],
)
def test_view_range(
    editor: FileEditorTool,
    tmp_path: Path,
    view_range: list[int],
    shown: list[str],
    hidden: list[str],
) -> None:
    (tmp_path / "f.txt").write_text("".join(f"l{i}\n" for i in range(1, 6)))
    text = ok(editor, command="view", path="f.txt", view_range=view_range).text
    for line in shown:
        assert line in text
    for line in hidden:
        assert f"\t{line}\n" not in text + "\n"


@pytest.mark.parametrize(
    ("view_range", "expected"),
    [
        ([0, 2], "start 0 is out of range"),
        ([9, 10], "start 9 is out of range"),
        ([4, 2], "end 2 is before start 4"),
        ([1, 99], "end 99 is past the end: the file has 5 lines"),
        ([1], "must be two numbers"),
    ],
)
def test_view_range_errors(
    editor: FileEditorTool, tmp_path: Path, view_range: list[int], expected: str
) -> None:
    (tmp_path / "f.txt").write_text("".join(f"l{i}\n" for i in range(1, 6)))
    assert expected in err(editor, command="view", path="f.txt", view_range=view_range)


def test_view_range_on_directory_is_an_error(editor: FileEditorTool, tmp_path: Path) -> None:
    assert "only applies to files" in err(editor, command="view", path=".", view_range=[1, 2])


def test_long_file_is_cut_with_a_view_range_hint(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{'x' * 80} {i}\n" for i in range(1000)))
    text = ok(editor, command="view", path="big.txt").text
    assert len(text) < 17_000
    assert "Output cut after line" in text
    assert "view_range" in text
    assert f"{'x' * 80} 999" not in text


def test_view_directory_two_levels_skipping_hidden_and_heavy(
    editor: FileEditorTool, tmp_path: Path
) -> None:
    for rel in [
        "src/pkg/deep/too_deep.py",
        "src/main.py",
        "README.md",
        ".env",
        ".git/config",
        "node_modules/lib/index.js",
        "src/__pycache__/main.pyc",
        ".venv/bin/python",
    ]:
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("")
    text = ok(editor, command="view", path=str(tmp_path)).text
    lines = text.splitlines()
    assert f"{tmp_path}/src/" in lines
    assert f"{tmp_path}/src/pkg/" in lines
    assert f"{tmp_path}/src/main.py" in lines
    assert f"{tmp_path}/README.md" in lines
    assert "too_deep" not in text
    for hidden in (".env", ".git", "node_modules", "__pycache__", ".venv"):
        assert f"/{hidden}" not in text
    assert "5 hidden or bulky entries" in text


def test_view_directory_is_capped(editor: FileEditorTool, tmp_path: Path) -> None:
    for i in range(320):
        (tmp_path / f"f{i:03}.txt").write_text("")
    text = ok(editor, command="view", path=".").text
    assert "Listing cut at 300 entries" in text
    assert "f299.txt" in text
    assert "f300.txt" not in text


# --- create ---------------------------------------------------------------------------------


def test_create_writes_file_and_diff(editor: FileEditorTool, tmp_path: Path) -> None:
    obs = ok(editor, command="create", path="a/b.txt", file_text="one\ntwo\n")
    assert (tmp_path / "a" / "b.txt").read_text() == "one\ntwo\n"
    assert obs.diff is not None
    assert obs.diff.startswith("--- /dev/null\n+++ b/a/b.txt\n")
    assert "+one\n+two\n" in obs.diff
    assert "2 lines" in obs.text


def test_create_refuses_existing_file(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("original\n")
    message = err(editor, command="create", path="keep.txt", file_text="new\n")
    assert "already exists" in message
    assert "str_replace" in message and "view" in message
    assert (tmp_path / "keep.txt").read_text() == "original\n"


def test_create_needs_file_text(editor: FileEditorTool, tmp_path: Path) -> None:
    assert "file_text" in err(editor, command="create", path="x.txt")
    assert not (tmp_path / "x.txt").exists()


# --- str_replace ----------------------------------------------------------------------------


def test_str_replace_edits_and_shows_snippet(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("def f():\n    return 1\n")
    obs = ok(editor, command="str_replace", path="f.py", old_str="return 1", new_str="return 2")
    assert (tmp_path / "f.py").read_text() == "def f():\n    return 2\n"
    assert "     2\t    return 2" in obs.text
    assert obs.diff is not None
    assert "--- a/f.py\n+++ b/f.py\n" in obs.diff
    assert "-    return 1\n+    return 2\n" in obs.diff


def test_str_replace_with_empty_new_str_deletes(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("keep\ndrop\nkeep too\n")
    ok(editor, command="str_replace", path="f.txt", old_str="drop\n", new_str="")
    assert (tmp_path / "f.txt").read_text() == "keep\nkeep too\n"


@pytest.mark.parametrize("old_str", [None, ""])
def test_str_replace_needs_old_str(
    editor: FileEditorTool, tmp_path: Path, old_str: str | None
) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    assert "non-empty `old_str`" in err(
        editor, command="str_replace", path="f.txt", old_str=old_str, new_str="y"
    )


def test_str_replace_same_text_is_an_error(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    assert "the same" in err(editor, command="str_replace", path="f.txt", old_str="x", new_str="x")


def test_str_replace_no_match(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("alpha\nbeta\n")
    message = err(editor, command="str_replace", path="f.txt", old_str="gamma", new_str="x")
    assert "No match" in message
    assert "exactly" in message
    assert (tmp_path / "f.txt").read_text() == "alpha\nbeta\n"


def test_str_replace_hints_at_whitespace(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x = 0\ndef f():\n    return 1\n")
    message = err(
        editor, command="str_replace", path="f.py", old_str="def f():\n  return 1", new_str="y"
    )
    assert "No match" in message
    assert "whitespace differs" in message
    assert "line 2" in message


def test_str_replace_hints_when_only_first_line_matches(
    editor: FileEditorTool, tmp_path: Path
) -> None:
    (tmp_path / "f.py").write_text("def f():\n    return 1\n")
    message = err(
        editor, command="str_replace", path="f.py", old_str="def f():\n    return 2", new_str="y"
    )
    assert "first line appears in the file (line 1)" in message


def test_str_replace_multiple_matches_lists_lines(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x = 1\nother\nx = 1\nx = 1\n")
    message = err(editor, command="str_replace", path="f.txt", old_str="x = 1", new_str="y")
    assert "occurs 3 times" in message
    assert "lines 1, 3, 4" in message
    assert "surrounding lines" in message


# --- insert ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [(0, "new\na\nb\n"), (1, "a\nnew\nb\n"), (2, "a\nb\nnew\n")],
)
def test_insert_after_line(
    editor: FileEditorTool, tmp_path: Path, line: int, expected: str
) -> None:
    (tmp_path / "f.txt").write_text("a\nb\n")
    obs = ok(editor, command="insert", path="f.txt", insert_line=line, new_str="new")
    assert (tmp_path / "f.txt").read_text() == expected
    assert f"{line + 1:6}\tnew" in obs.text
    assert obs.diff is not None and "+new\n" in obs.diff


@pytest.mark.parametrize("line", [-1, 3])
def test_insert_line_out_of_range(editor: FileEditorTool, tmp_path: Path, line: int) -> None:
    (tmp_path / "f.txt").write_text("a\nb\n")
    message = err(editor, command="insert", path="f.txt", insert_line=line, new_str="x")
    assert f"insert_line {line} is out of range" in message
    assert "between 0 (the top) and 2" in message


def test_insert_needs_line_and_text(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\n")
    assert "insert_line" in err(editor, command="insert", path="f.txt", new_str="x")
    assert "new_str" in err(editor, command="insert", path="f.txt", insert_line=0)


def test_insert_at_end_keeps_missing_final_newline(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb")
    ok(editor, command="insert", path="f.txt", insert_line=2, new_str="c\n")
    assert (tmp_path / "f.txt").read_text() == "a\nb\nc"


def test_str_replace_keeps_missing_final_newline(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb")
    obs = ok(editor, command="str_replace", path="f.txt", old_str="b", new_str="B")
    assert (tmp_path / "f.txt").read_text() == "a\nB"
    assert obs.diff is not None and "\\ No newline at end of file" in obs.diff


# --- line endings ---------------------------------------------------------------------------


def test_crlf_is_preserved_by_str_replace(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    ok(editor, command="str_replace", path="win.txt", old_str="one\ntwo", new_str="1\n2\n2b")
    assert (tmp_path / "win.txt").read_bytes() == b"1\r\n2\r\n2b\r\nthree\r\n"


def test_crlf_old_str_from_model_also_matches(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    ok(editor, command="str_replace", path="win.txt", old_str="one\r\ntwo", new_str="x\r\ny")
    assert (tmp_path / "win.txt").read_bytes() == b"x\r\ny\r\n"


def test_crlf_is_preserved_by_insert(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"a\r\nb\r\n")
    ok(editor, command="insert", path="win.txt", insert_line=1, new_str="mid\nmid2")
    assert (tmp_path / "win.txt").read_bytes() == b"a\r\nmid\r\nmid2\r\nb\r\n"


def test_crlf_view_hides_carriage_returns(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"a\r\nb\r\n")
    assert "\r" not in ok(editor, command="view", path="win.txt").text


def test_utf8_bom_is_preserved(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    ok(editor, command="str_replace", path="bom.txt", old_str="hello", new_str="bye")
    assert (tmp_path / "bom.txt").read_bytes() == b"\xef\xbb\xbfbye\n"


# --- undo -----------------------------------------------------------------------------------


def test_undo_restores_exact_bytes_step_by_step(editor: FileEditorTool, tmp_path: Path) -> None:
    original = b"a\r\nb\r\n"
    (tmp_path / "f.txt").write_bytes(original)
    ok(editor, command="str_replace", path="f.txt", old_str="a", new_str="A")
    after_first = (tmp_path / "f.txt").read_bytes()
    ok(editor, command="insert", path="f.txt", insert_line=0, new_str="top")
    obs = ok(editor, command="undo_edit", path="f.txt")
    assert (tmp_path / "f.txt").read_bytes() == after_first
    assert obs.diff is not None and "-top\n" in obs.diff
    ok(editor, command="undo_edit", path="f.txt")
    assert (tmp_path / "f.txt").read_bytes() == original
    assert "no edit to undo for" in err(editor, command="undo_edit", path="f.txt")


def test_undo_of_create_deletes_the_file(editor: FileEditorTool, tmp_path: Path) -> None:
    ok(editor, command="create", path="new.txt", file_text="hi\n")
    obs = ok(editor, command="undo_edit", path="new.txt")
    assert not (tmp_path / "new.txt").exists()
    assert "deleted" in obs.text
    assert obs.diff is not None and "+++ /dev/null" in obs.diff


def test_undo_without_history(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    message = err(editor, command="undo_edit", path="f.txt")
    assert message == f"There is no edit to undo for {tmp_path / 'f.txt'} in this session."


def test_undo_is_per_path(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    ok(editor, command="str_replace", path="a.txt", old_str="a", new_str="A")
    assert "no edit to undo" in err(editor, command="undo_edit", path="b.txt")
    ok(editor, command="undo_edit", path=str(tmp_path / "a.txt"))  # same file, absolute path
    assert (tmp_path / "a.txt").read_text() == "a\n"


def test_failed_edit_leaves_no_undo_entry(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    err(editor, command="str_replace", path="f.txt", old_str="nope", new_str="y")
    assert "no edit to undo" in err(editor, command="undo_edit", path="f.txt")


# --- files the editor refuses ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [(b"PK\x00\x03binary", "binary"), (b"caf\xe9 latin-1\n", "not valid UTF-8")],
)
@pytest.mark.parametrize(
    "fields",
    [
        {"command": "view"},
        {"command": "str_replace", "old_str": "caf", "new_str": "x"},
        {"command": "insert", "insert_line": 0, "new_str": "x"},
    ],
)
def test_refuses_non_text_files(
    editor: FileEditorTool,
    tmp_path: Path,
    content: bytes,
    expected: str,
    fields: dict[str, Any],
) -> None:
    (tmp_path / "blob.bin").write_bytes(content)
    assert expected in err(editor, path="blob.bin", **fields)
    assert (tmp_path / "blob.bin").read_bytes() == content


def test_refuses_files_over_the_size_limit(
    editor: FileEditorTool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fileio, "MAX_FILE_BYTES", 100)
    (tmp_path / "big.txt").write_text("x" * 200)
    message = err(editor, command="str_replace", path="big.txt", old_str="x", new_str="y")
    assert "limit" in message
    assert (tmp_path / "big.txt").read_text() == "x" * 200


def test_os_errors_become_error_observations(editor: FileEditorTool, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    message = err(editor, command="create", path="afile/child.txt", file_text="x")
    assert "Could not create" in message
