"""The cell factory: engine events become cells by their types, off the first frame's path."""

from __future__ import annotations

import subprocess
import sys

from ohtui.sdk import ActionEvent, MessageToolCall, ObservationEvent
from ohtui.sdk.event import (
    CheckpointEvent,
    CheckpointRestoreEvent,
    FileChangeRecord,
    InterruptEvent,
    PauseEvent,
)
from ohtui.sdk.tool import Observation
from ohtui.sdk.tools.file_editor import FileEditorAction
from ohtui.sdk.tools.terminal import TerminalAction, TerminalObservation
from ohtui.tui.render import action_summary, edit_preview
from ohtui.tui.widgets.cell_factory import action_cell, cells_for, present_result
from ohtui.tui.widgets.cells import ActionCell, NoticeCell
from ohtui.tui.widgets.checkpoint_cells import RestoreCell


def _action(action: TerminalAction | FileEditorAction, tool: str) -> ActionEvent:
    call = MessageToolCall(id="c1", name=tool, arguments="{}")
    return ActionEvent(
        action=action, tool_name=tool, tool_call_id="c1", tool_call=call, llm_response_id="r1"
    )


def _result(observation: Observation, tool: str = "terminal") -> ObservationEvent:
    return ObservationEvent(
        observation=observation, action_id="a1", tool_name=tool, tool_call_id="c1"
    )


def test_the_first_frame_imports_neither_the_engine_nor_the_factory() -> None:
    code = (
        "import sys, ohtui.tui.app\n"
        "print(sorted(m for m in sys.modules if m.startswith('ohtui.sdk') "
        "or m in ('ohtui.tui.widgets.cell_factory', 'ohtui.tui.render')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_subclass_of_an_engine_type_is_shown_as_that_type() -> None:
    # Dispatch is on types, not class names: a renamed subclass (e.g. a remote client's) works.
    class RemoteTerminalObservation(TerminalObservation):
        pass

    observation = RemoteTerminalObservation.from_text(
        "boom\n[exit code 2]", is_error=True, command="make", exit_code=2
    )
    view = present_result(_result(observation))
    assert view.failed
    assert view.status is not None and view.status.plain == "  ✗ exit 2"
    assert view.output == "boom"


def test_a_tool_the_tui_does_not_know_shows_its_text() -> None:
    class WeatherObservation(Observation):
        pass

    view = present_result(_result(WeatherObservation.from_text("sunny\nwarm"), "weather"))
    assert view.status is None and not view.failed
    body = view.body(1)
    assert body is not None
    assert body.plain == "  sunny\n  … 1 more line · enter to expand"


def test_terminal_actions_are_titled_by_their_command() -> None:
    event = _action(TerminalAction(command="pytest -q\necho done"), "terminal")
    assert action_summary(event) == ("pytest -q …", "pytest -q\necho done")
    cell = action_cell(event.action, event)
    assert isinstance(cell, ActionCell)
    assert cell.title.plain == "$ pytest -q …"


def test_edit_previews_use_the_engines_diff() -> None:
    replace = FileEditorAction(command="str_replace", path="a.py", old_str="x = 1", new_str="x = 2")
    preview = edit_preview(_action(replace, "file_editor"))
    assert preview is not None
    assert preview.splitlines() == ["--- a/a.py", "+++ b/a.py", "@@ -1 +1 @@", "-x = 1", "+x = 2"]

    create = FileEditorAction(command="create", path="new.py", file_text="print(1)")
    preview = edit_preview(_action(create, "file_editor"))
    assert preview is not None
    assert preview.splitlines()[:2] == ["--- /dev/null", "+++ b/new.py"]
    assert preview.splitlines()[-1] == "\\ No newline at end of file"


def test_a_stop_shows_as_one_notice_whether_paused_or_interrupted_on_a_server() -> None:
    # `ohtui serve` and OpenHands' server record an interrupt; a local stop, a pause.
    shown = {}
    for event in (PauseEvent(), InterruptEvent()):
        cells = cells_for(event, None)  # type: ignore[arg-type]  # neither asks the host
        assert len(cells) == 1 and isinstance(cells[0], NoticeCell)
        shown[event.kind] = cells[0].text
    assert shown == {
        "PauseEvent": "⏸ Paused. Send a message to go on.",
        "InterruptEvent": "⏹ Interrupted. Send a message to go on.",
    }


def test_a_checkpoint_shows_nothing_and_one_that_could_not_be_taken_a_quiet_notice() -> None:
    taken = CheckpointEvent(checkpoint_id="abc123", action_id="a1", label="rm a", files=3)
    assert cells_for(taken, None) == []  # type: ignore[arg-type]
    missing = CheckpointEvent(action_id="a1", unavailable="the workspace is too large")
    shown = cells_for(missing, None)  # type: ignore[arg-type]
    assert len(shown) == 1 and isinstance(shown[0], NoticeCell)
    assert shown[0].has_class("-muted")
    assert shown[0].text == (
        "No checkpoint: the workspace is too large — actions are not undoable, so they ask"
    )


def test_a_restore_shows_its_label_and_count_and_expands_to_the_files() -> None:
    event = CheckpointRestoreEvent(
        checkpoint_id="abc123",
        label="rm -f src/*",
        undo_checkpoint_id="def456",
        changes=[
            FileChangeRecord(path="src/a.py", status="added"),
            FileChangeRecord(path="notes.txt", status="deleted"),
        ],
    )
    [cell] = cells_for(event, None)  # type: ignore[arg-type]
    assert isinstance(cell, RestoreCell)
    line = "↶ Restored the workspace to before: rm -f src/*: 2 files changed"
    assert cell.render().plain == f"{line} · enter to list them"
    cell.expanded = True
    assert cell.render().plain == f"{line}\n  A src/a.py  added\n  D notes.txt  deleted"
