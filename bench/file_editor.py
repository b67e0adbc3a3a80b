"""The file editor's cost per call: each command, with no boundary, the sandbox off and on.

    python bench/file_editor.py [RUNS]

Prints, per command, the CPU time per call (the machine's load matters less to it than to
wall time) and the fastest wall time, in microseconds. `create 3 folders` makes a file in
three folders that do not exist yet: each new folder is checked by the boundary on its own.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ohtui.sdk.sandbox import Sandbox, SandboxConfig, SandboxMode
from ohtui.sdk.tools.file_editor import FileEditorAction
from ohtui.sdk.tools.file_editor.editor import FileEditorExecutor

BODY = "".join(f"line {i}\n" for i in range(200))


def measure(runs: int, call: Callable[[int], FileEditorAction], editor: FileEditorExecutor) -> str:
    fastest = float("inf")
    cpu = time.process_time()
    for i in range(runs):
        started = time.perf_counter()
        observation = editor(call(i))
        fastest = min(fastest, time.perf_counter() - started)
        assert not observation.is_error, observation.text
    per_call = (time.process_time() - cpu) / runs
    return f"{per_call * 1e6:7.0f} cpu {fastest * 1e6:7.0f} min"


def bench(runs: int, mode: SandboxMode | None) -> None:
    root = Path(tempfile.mkdtemp())
    workspace = root / "a" / "b" / "workspace"
    (workspace / "src").mkdir(parents=True)
    home = root / "home"
    (home / ".config" / "ohtui").mkdir(parents=True)
    sandbox = Sandbox(
        SandboxConfig(mode=mode or SandboxMode.OFF),
        str(workspace),
        home=str(home),
        private=(str(home / ".config" / "ohtui"),),
    )
    editor = FileEditorExecutor(str(workspace), sandbox=lambda: sandbox if mode else None)
    calls: dict[str, Callable[[int], FileEditorAction]] = {
        "create": lambda i: FileEditorAction(
            command="create", path=f"src/f{i}.txt", file_text=BODY
        ),
        "str_replace": lambda i: FileEditorAction(
            command="str_replace", path=f"src/f{i}.txt", old_str="line 100\n", new_str="L\n"
        ),
        "insert": lambda i: FileEditorAction(
            command="insert", path=f"src/f{i}.txt", insert_line=5, new_str="x"
        ),
        "view": lambda i: FileEditorAction(command="view", path=f"src/f{i}.txt"),
        "undo_edit": lambda i: FileEditorAction(command="undo_edit", path=f"src/f{i}.txt"),
        "create 3 folders": lambda i: FileEditorAction(
            command="create", path=f"new{i}/x/y/f.txt", file_text="x\n"
        ),
    }
    print(f"{mode.value if mode else 'no boundary'}:")
    for name, call in calls.items():
        print(f"  {name:17} {measure(runs, call, editor)}")


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    for mode in (None, SandboxMode.OFF, SandboxMode.WORKSPACE_WRITE):
        bench(runs, mode)
