"""The file editor touches regular files only: devices, pipes, sockets and link loops are refused.

Every command runs in a forked child with a memory cap and a deadline, so a regression that
reads /dev/zero to the end or waits on a pipe fails here instead of eating the machine.
"""

from __future__ import annotations

import os
import resource
import select
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ohtui.sdk import LLM, Agent, Conversation, Tool
from ohtui.sdk.tools.file_editor import (
    FileEditorAction,
    FileEditorObservation,
    FileEditorTool,
    fileio,
)
from ohtui.sdk.workspace.local import LocalWorkspace

DEADLINE = 20.0
MEMORY_HEADROOM = 1024 * 1024 * 1024


def in_child(work: Callable[[], str], deadline: float = DEADLINE) -> str:
    """What `work` returns, run in a forked child with capped memory, killed past `deadline`."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(read_end)
            pages = int(Path("/proc/self/statm").read_text().split()[0])
            cap = pages * os.sysconf("SC_PAGE_SIZE") + MEMORY_HEADROOM
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            with os.fdopen(write_end, "wb") as out:
                out.write(work().encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    chunks: list[bytes] = []
    end = time.monotonic() + deadline
    try:
        while (left := end - time.monotonic()) > 0 and select.select([read_end], [], [], left)[0]:
            if not (chunk := os.read(read_end, 65536)):
                break
            chunks.append(chunk)
        else:
            os.kill(pid, signal.SIGKILL)
            pytest.fail(f"still running after {deadline} s: the command blocked")
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child failed (out of memory?)"
    return b"".join(chunks).decode()


@pytest.fixture
def editor(workspace: Path) -> FileEditorTool:
    state: Any = type("State", (), {"workspace": LocalWorkspace(working_dir=str(workspace))})
    [tool] = FileEditorTool.create(state)
    return tool


def guarded(tool: FileEditorTool, **fields: Any) -> FileEditorObservation:
    """The observation of one command, run safely in a child."""
    sent = in_child(lambda: tool(FileEditorAction(**fields)).model_dump_json())
    return FileEditorObservation.model_validate_json(sent)


def refused(tool: FileEditorTool, **fields: Any) -> str:
    obs = guarded(tool, **fields)
    assert obs.is_error, obs.text
    return obs.text


@pytest.fixture
def fifo(workspace: Path) -> Path:
    path = workspace / "pipe"
    os.mkfifo(path)
    return path


@pytest.fixture
def unix_socket(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(workspace)  # a relative bind keeps clear of the 108-byte path limit
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("sock")
        server.listen()
        yield workspace / "sock"


EDITS = [
    pytest.param({"command": "view"}, id="view"),
    pytest.param({"command": "view", "view_range": [1, 5]}, id="view-range"),
    pytest.param({"command": "str_replace", "old_str": "a", "new_str": "b"}, id="str_replace"),
    pytest.param({"command": "insert", "insert_line": 0, "new_str": "b"}, id="insert"),
]


@pytest.mark.parametrize("fields", EDITS)
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused_unread(editor: FileEditorTool, device: str, fields: Any) -> None:
    message = refused(editor, path=device, **fields)
    assert f"{device} is a character device, not a regular file" in message
    assert "terminal" in message


@pytest.mark.parametrize("fields", EDITS)
def test_a_link_to_a_device_names_where_it_leads(
    editor: FileEditorTool, workspace: Path, fields: Any
) -> None:
    (workspace / "data.txt").symlink_to("/dev/zero")
    message = refused(editor, path="data.txt", **fields)
    assert "(a link to /dev/zero) is a character device" in message


@pytest.mark.parametrize("fields", EDITS)
def test_a_named_pipe_is_refused_without_waiting(
    editor: FileEditorTool, fifo: Path, fields: Any
) -> None:
    started = time.monotonic()
    message = refused(editor, path=str(fifo), **fields)
    assert f"{fifo} is a named pipe (FIFO), not a regular file" in message
    assert time.monotonic() - started < DEADLINE / 2


@pytest.mark.parametrize("fields", EDITS)
def test_a_socket_is_refused_as_a_socket(
    editor: FileEditorTool, unix_socket: Path, fields: Any
) -> None:
    message = refused(editor, path=str(unix_socket), **fields)
    assert f"{unix_socket} is a socket, not a regular file" in message


@pytest.mark.parametrize(
    "fields", [*EDITS, pytest.param({"command": "create", "file_text": "x"}, id="create")]
)
def test_a_symlink_loop_says_it_is_a_loop(
    editor: FileEditorTool, workspace: Path, fields: Any
) -> None:
    (workspace / "a").symlink_to("b")
    (workspace / "b").symlink_to("a")
    message = refused(editor, path="a", **fields)
    assert f"{workspace / 'a'} is a symbolic link loop" in message
    assert "does not exist" not in message
    assert (workspace / "a").is_symlink() and (workspace / "b").is_symlink()


def test_create_over_a_device_or_pipe_changes_nothing(
    editor: FileEditorTool, workspace: Path, fifo: Path
) -> None:
    (workspace / "zero").symlink_to("/dev/zero")
    for path in (fifo, workspace / "zero", Path("/dev/null")):
        message = refused(editor, command="create", path=str(path), file_text="x")
        assert "not a regular file" in message
    assert os.readlink(workspace / "zero") == "/dev/zero"


def test_create_does_not_write_through_a_dangling_link(
    editor: FileEditorTool, workspace: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside") / "planted.txt"
    (workspace / "notes.txt").symlink_to(outside)
    message = refused(editor, command="create", path="notes.txt", file_text="x")
    assert f"a symbolic link to {outside}, which does not exist" in message
    assert not outside.exists()


def test_a_huge_sparse_file_is_refused_by_size(editor: FileEditorTool, workspace: Path) -> None:
    huge = workspace / "huge.log"
    subprocess.run(["truncate", "-s", "100G", str(huge)], check=True)
    for fields in ({"command": "view"}, {"command": "insert", "insert_line": 0, "new_str": "x"}):
        message = refused(editor, path="huge.log", **fields)
        assert "10 MB limit" in message
    assert huge.stat().st_size == 100 * 1024**3


def test_a_file_that_understates_its_size_is_still_bounded(
    editor: FileEditorTool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fileio, "MAX_FILE_BYTES", 64)
    maps = Path("/proc/self/maps")
    assert maps.stat().st_size == 0  # /proc reports no size, yet reading it yields kilobytes
    message = refused(editor, command="view", path=str(maps))
    assert "larger than the editor's" in message


def test_undo_never_writes_into_what_replaced_the_file(
    editor: FileEditorTool, workspace: Path
) -> None:
    target = workspace / "f.txt"
    target.write_text("one\n")

    # One child runs it all, so the editor's undo history carries from step to step.
    def edit_swap_undo() -> str:
        editor(FileEditorAction(command="str_replace", path="f.txt", old_str="one", new_str="two"))
        target.unlink()
        os.mkfifo(target)
        refused = editor(FileEditorAction(command="undo_edit", path="f.txt"))
        assert target.is_fifo()
        target.unlink()  # the file is back: the refused undo must still be there to run
        target.write_text("two\n")
        editor(FileEditorAction(command="undo_edit", path="f.txt"))
        return refused.model_dump_json()

    obs = FileEditorObservation.model_validate_json(in_child(edit_swap_undo))
    assert obs.is_error
    assert f"{target} is a named pipe (FIFO)" in obs.text
    assert target.read_text() == "one\n"


def test_a_directory_with_special_entries_is_listed(
    editor: FileEditorTool, workspace: Path, fifo: Path, unix_socket: Path
) -> None:
    (workspace / "loop").symlink_to("loop")
    (workspace / "zero").symlink_to("/dev/zero")
    (workspace / "real.txt").write_text("x\n")
    obs = guarded(editor, command="view", path=str(workspace))
    assert not obs.is_error, obs.text
    for name in ("loop", "pipe", "sock", "zero", "real.txt"):
        assert str(workspace / name) in obs.text


def test_regular_files_still_work_after_all_that(editor: FileEditorTool, workspace: Path) -> None:
    (workspace / "link.txt").symlink_to("real.txt")
    assert not guarded(editor, command="create", path="real.txt", file_text="one\n").is_error
    edited = guarded(editor, command="str_replace", path="link.txt", old_str="one", new_str="two")
    assert not edited.is_error, edited.text
    assert (workspace / "real.txt").read_text() == "two\n"
    assert (workspace / "link.txt").is_symlink()


# --- end to end: a model asks for special files in a conversation ---------------------------


def test_a_conversation_survives_a_model_reading_special_files(
    llm_server: Any, llm: LLM, workspace: Path, persistence_dir: Path, fifo: Path
) -> None:
    (workspace / "loop").symlink_to("loop")
    (workspace / "zero").symlink_to("/dev/zero")
    targets = ["/dev/zero", "/dev/urandom", str(fifo), "zero", "loop"]
    llm_server.reply_tool_calls(
        [("file_editor", {"command": "view", "path": target}) for target in targets]
    )
    llm_server.reply_tool_call("finish", {"message": "done"})

    def converse() -> str:
        agent = Agent(llm=llm, tools=[Tool(name="file_editor")])
        conversation = Conversation(
            agent=agent, workspace=workspace, persistence_dir=persistence_dir, visualizer=None
        )
        conversation.send_message("look at these")
        conversation.run()
        conversation.close()
        return conversation.state.execution_status.value

    assert in_child(converse, deadline=60) == "finished"
    tool_results = [
        message["content"]
        for message in llm_server.requests[1]["messages"]
        if message["role"] == "tool"
    ]
    texts = [
        "".join(part.get("text", "") for part in content) if isinstance(content, list) else content
        for content in tool_results
    ]
    assert len(texts) == len(targets)
    assert "/dev/zero is a character device" in texts[0]
    assert "/dev/urandom is a character device" in texts[1]
    assert "named pipe (FIFO)" in texts[2]
    assert "(a link to /dev/zero) is a character device" in texts[3]
    assert "symbolic link loop" in texts[4]
