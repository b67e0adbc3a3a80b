"""The Gemini-style file tools (read_file, write_file, edit, list_directory) on real files,
confined to the workspace, and the Gemini preset that gives them to an agent."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM, Agent, Conversation, ObservationEvent, Tool
from ohtui.sdk.tools.gemini import (
    GEMINI_FILE_TOOLS,
    EditAction,
    ListDirectoryAction,
    ReadFileAction,
    WriteFileAction,
)
from ohtui.sdk.tools.gemini.edit import EditExecutor
from ohtui.sdk.tools.gemini.list_directory import ListDirectoryExecutor
from ohtui.sdk.tools.gemini.read_file import ReadFileExecutor
from ohtui.sdk.tools.gemini.write_file import WriteFileExecutor
from ohtui.sdk.tools.preset.gemini import get_gemini_agent, get_gemini_tools


def test_read_file_numbers_lines_and_pages_through_a_long_file(workspace: Path) -> None:
    (workspace / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 1201)))
    read = ReadFileExecutor(str(workspace))
    first = read(ReadFileAction(file_path="long.txt"))
    assert not first.is_error
    assert first.is_truncated and first.lines_shown == (1, 1000) and first.total_lines == 1200
    assert "     1  line 1\n" in first.file_content
    assert "offset=1000" in first.text
    page = read(ReadFileAction(file_path="long.txt", offset=1195, limit=10))
    assert not page.is_truncated and page.file_content.splitlines()[-1] == "  1200  line 1200"
    beyond = read(ReadFileAction(file_path="long.txt", offset=5000))
    assert beyond.is_error and "beyond file length (1200 lines)" in beyond.text


def test_read_file_refuses_what_it_cannot_read(workspace: Path, tmp_path: Path) -> None:
    (workspace / "blob").write_bytes(b"\0\1\2")
    (tmp_path / "secret.txt").write_text("s\n")
    (workspace / "link.txt").symlink_to(tmp_path / "secret.txt")
    read = ReadFileExecutor(str(workspace))
    assert "File not found" in read(ReadFileAction(file_path="nope.txt")).text
    (workspace / "folder").mkdir()
    assert "is a directory" in read(ReadFileAction(file_path="folder")).text
    assert "binary" in read(ReadFileAction(file_path="blob")).text
    for path in (str(tmp_path / "secret.txt"), "link.txt", "../secret.txt"):
        obs = read(ReadFileAction(file_path=path))
        assert obs.is_error and "outside the workspace" in obs.text


def test_write_file_creates_then_replaces(workspace: Path) -> None:
    write = WriteFileExecutor(str(workspace))
    created = write(WriteFileAction(file_path="pkg/mod.py", content="a = 1\n"))
    assert not created.is_error and created.is_new_file and created.old_content is None
    assert (workspace / "pkg" / "mod.py").read_text() == "a = 1\n"
    replaced = write(WriteFileAction(file_path="pkg/mod.py", content="a = 2\n"))
    assert not replaced.is_new_file and replaced.old_content == "a = 1\n"
    assert "-a = 1" in replaced.diff and "+a = 2" in replaced.diff
    assert "Updated" in str(replaced.visualize)


def test_write_file_stays_in_the_workspace(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "out").symlink_to(outside)
    write = WriteFileExecutor(str(workspace))
    for path in (str(outside / "x"), "out/x", "../x"):
        obs = write(WriteFileAction(file_path=path, content="x"))
        assert obs.is_error and "outside the workspace" in obs.text
        assert "Nothing was changed." in obs.text
    assert list(outside.iterdir()) == [] and not (tmp_path / "x").exists()


def test_edit_replaces_the_expected_number_of_occurrences(workspace: Path) -> None:
    target = workspace / "app.py"
    target.write_bytes(b"x = 1\r\ny = x\r\n")
    edit = EditExecutor(str(workspace))
    wrong = edit(EditAction(file_path="app.py", old_string="x", new_string="z"))
    assert wrong.is_error and "Expected 1 occurrence(s) but found 2" in wrong.text
    assert target.read_bytes() == b"x = 1\r\ny = x\r\n"
    done = edit(
        EditAction(file_path="app.py", old_string="x", new_string="z", expected_replacements=2)
    )
    assert not done.is_error and done.replacements_made == 2
    assert target.read_bytes() == b"z = 1\r\ny = z\r\n"
    missing = edit(EditAction(file_path="app.py", old_string="nothing", new_string="q"))
    assert missing.is_error and "0 occurrences" in missing.text
    same = edit(EditAction(file_path="app.py", old_string="z", new_string="z"))
    assert same.is_error and "identical" in same.text


def test_edit_with_an_empty_old_string_creates_only_a_new_file(workspace: Path) -> None:
    edit = EditExecutor(str(workspace))
    made = edit(EditAction(file_path="new.txt", old_string="", new_string="hello\n"))
    assert not made.is_error and made.is_new_file
    assert (workspace / "new.txt").read_text() == "hello\n"
    again = edit(EditAction(file_path="new.txt", old_string="", new_string="other"))
    assert again.is_error and "already exists" in again.text
    assert (workspace / "new.txt").read_text() == "hello\n"
    gone = edit(EditAction(file_path="none.txt", old_string="a", new_string="b"))
    assert gone.is_error and "File not found" in gone.text


def test_list_directory_lists_two_levels_without_following_links(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a" / "b" / "c").mkdir(parents=True)
    (workspace / "a" / "b" / "c" / "deep.txt").write_text("x")
    (workspace / "a" / "one.txt").write_text("12345")
    (workspace / ".hidden").write_text("h")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret").write_text("s")
    (workspace / "link").symlink_to(tmp_path / "elsewhere")
    listing = ListDirectoryExecutor(str(workspace))
    flat = listing(ListDirectoryAction())
    assert [e.name for e in flat.entries] == [".hidden", "a", "link"]
    deep = listing(ListDirectoryAction(recursive=True))
    paths = [Path(e.path).relative_to(workspace).as_posix() for e in deep.entries]
    assert paths == [".hidden", "a", "a/b", "a/one.txt", "link"]
    sizes = {e.name: e.size for e in deep.entries}
    assert sizes["one.txt"] == 5 and sizes["a"] == 0
    assert "Directory not found" in listing(ListDirectoryAction(dir_path="nope")).text
    assert "not a directory" in listing(ListDirectoryAction(dir_path="a/one.txt")).text
    outside = listing(ListDirectoryAction(dir_path=str(tmp_path)))
    assert outside.is_error and "outside the workspace" in outside.text


def test_list_directory_stops_at_its_limit(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(7):
        (workspace / f"f{n}").write_text("x")
    monkeypatch.setattr("ohtui.sdk.tools.gemini.list_directory.impl.MAX_ENTRIES", 5)
    obs = ListDirectoryExecutor(str(workspace))(ListDirectoryAction())
    assert obs.total_count == 5 and obs.is_truncated and "truncated to 5" in obs.text


def test_gemini_tools_replace_the_file_editor_in_a_real_run(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path, persistence_dir: Path
) -> None:
    assert [t.name for t in GEMINI_FILE_TOOLS] == [
        "read_file",
        "write_file",
        "edit",
        "list_directory",
    ]
    agent = Agent(llm=llm, tools=[Tool(name="terminal"), *GEMINI_FILE_TOOLS])
    llm_server.reply_tool_call(
        "write_file", {"file_path": "FACTS.txt", "content": "1\n2\n3\n", "security_risk": "LOW"}
    )
    llm_server.reply_tool_call("read_file", {"file_path": "FACTS.txt"})
    llm_server.reply_text("Written.")
    conv = Conversation(
        agent=agent, workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )
    try:
        conv.send_message("Write 3 facts into FACTS.txt.")
        conv.run()
        results = [e.observation for e in conv.state.events if isinstance(e, ObservationEvent)]
        assert [r.is_error for r in results] == [False, False]
        assert "     3  3" in results[1].text
        assert (workspace / "FACTS.txt").read_text() == "1\n2\n3\n"
        assert {"read_file", "write_file", "edit", "list_directory"} <= set(conv.agent.tools_map)
        assert "file_editor" not in conv.agent.tools_map
    finally:
        conv.close()


def test_the_gemini_preset_has_the_four_tools_and_a_condenser(llm: LLM) -> None:
    assert [t.name for t in get_gemini_tools(enable_browser=False)] == [
        "terminal",
        "read_file",
        "write_file",
        "edit",
        "list_directory",
        "task_tracker",
    ]
    agent = get_gemini_agent(llm, cli_mode=True)
    assert agent.system_prompt_kwargs == {"cli_mode": True}
    assert agent.condenser is not None and agent.condenser.llm.usage_id == "condenser"
