"""The apply_patch tool on real files: the patch format, all-or-nothing application, the
workspace boundary, and (through a real conversation) the checkpoint that undoes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Conversation,
    MessageToolCall,
    ObservationEvent,
    PatternSecurityAnalyzer,
    SecurityRisk,
)
from ohtui.sdk.tools.apply_patch import (
    ApplyPatchAction,
    ApplyPatchExecutor,
    ApplyPatchObservation,
    ApplyPatchTool,
)
from ohtui.sdk.tools.apply_patch.core import ActionType
from ohtui.sdk.tools.preset.gpt5 import get_gpt5_agent, get_gpt5_tools


def patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"])


def apply(root: Path, text: str) -> ApplyPatchObservation:
    return ApplyPatchExecutor(str(root))(ApplyPatchAction(patch=text))


def test_add_update_and_delete_a_file(workspace: Path) -> None:
    facts = workspace / "FACTS.txt"
    added = apply(workspace, patch("*** Add File: FACTS.txt", "+One fact."))
    assert not added.is_error and facts.read_text() == "One fact."
    assert added.commit and added.commit.changes["FACTS.txt"].type is ActionType.ADD
    updated = apply(workspace, patch("*** Update File: FACTS.txt", "@@", " One fact.", "+Two."))
    assert not updated.is_error and facts.read_text() == "One fact.\nTwo."
    assert updated.diff and "+Two." in updated.diff
    deleted = apply(workspace, patch("*** Delete File: FACTS.txt"))
    assert not deleted.is_error and not facts.exists()
    assert deleted.text.startswith("Done!")


def test_several_hunks_and_files_in_one_patch(workspace: Path) -> None:
    (workspace / "a.txt").write_text("a1\na2\na3\na4\na5\n")
    (workspace / "b.txt").write_text("b1\nb2\n")
    (workspace / "gone.txt").write_text("bye\n")
    obs = apply(
        workspace,
        patch(
            "*** Update File: a.txt",
            "@@",
            " a1",
            "-a2",
            "+A2",
            " a3",
            "@@ a4",
            "-a5",
            "+A5",
            "*** Update File: b.txt",
            " b1",
            "-b2",
            "+B2",
            "*** Delete File: gone.txt",
            "*** Add File: new/c.txt",
            "+c",
        ),
    )
    assert not obs.is_error, obs.text
    assert (workspace / "a.txt").read_text() == "a1\nA2\na3\na4\nA5\n"
    assert (workspace / "b.txt").read_text() == "b1\nB2\n"
    assert not (workspace / "gone.txt").exists()
    assert (workspace / "new" / "c.txt").read_text() == "c"
    assert obs.fuzz == 0


def test_a_move_writes_the_new_path_and_removes_the_old(workspace: Path) -> None:
    (workspace / "old.py").write_text("x = 1\n")
    obs = apply(
        workspace, patch("*** Update File: old.py", "*** Move to: pkg/new.py", "-x = 1", "+x = 2")
    )
    assert not obs.is_error, obs.text
    assert not (workspace / "old.py").exists()
    assert (workspace / "pkg" / "new.py").read_text() == "x = 2\n"


def test_line_endings_are_kept_and_loose_matches_are_counted(workspace: Path) -> None:
    target = workspace / "win.txt"
    target.write_bytes(b"one  \r\ntwo\r\n")
    obs = apply(workspace, patch("*** Update File: win.txt", " one", "-two", "+TWO"))
    assert not obs.is_error, obs.text
    assert target.read_bytes() == b"one  \r\nTWO\r\n"
    assert obs.fuzz == 1 and "loosely" in obs.text


def test_a_patch_that_does_not_apply_changes_nothing(workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    (workspace / "b.txt").write_text("b\n")
    obs = apply(
        workspace,
        patch("*** Update File: a.txt", "-a", "+A", "*** Update File: b.txt", "-zzz", "+Z"),
    )
    assert obs.is_error
    assert "Hunk 1 of b.txt does not apply" in obs.text and "Nothing was changed" in obs.text
    assert (workspace / "a.txt").read_text() == "a\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("*** Update File: x\n", "must start with '*** Begin Patch'"),
        ("*** Begin Patch\n*** Add File: x\n+x", "must end with a line '*** End Patch'"),
        (patch("garbage"), "Line 2 of the patch is not a file header"),
        (patch("*** Add File: x", "no plus"), "does not start with '+'"),
        (patch("*** Update File: missing.txt", "-a", "+b"), "does not exist"),
        (patch("*** Delete File: missing.txt"), "does not exist"),
        (patch("*** Add File: x", "+1", "*** Add File: x", "+2"), "changes x twice"),
    ],
)
def test_bad_patches_say_what_is_wrong(workspace: Path, text: str, message: str) -> None:
    obs = apply(workspace, text)
    assert obs.is_error and message in obs.text
    assert list(workspace.iterdir()) == []


def test_adding_over_an_existing_file_is_refused(workspace: Path) -> None:
    (workspace / "x").write_text("keep\n")
    obs = apply(workspace, patch("*** Add File: x", "+new"))
    assert obs.is_error and "already exists" in obs.text
    assert (workspace / "x").read_text() == "keep\n"


def test_paths_outside_the_workspace_are_refused(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "out").symlink_to(outside)
    for path in ("/etc/passwd", "../escape.txt", str(outside / "x.txt")):
        obs = apply(workspace, patch(f"*** Add File: {path}", "+x"))
        assert obs.is_error and "Absolute or escaping paths are not allowed" in obs.text
    # A link inside the workspace leading out of it is refused where the file really is.
    linked = apply(workspace, patch("*** Add File: out/x.txt", "+x"))
    assert linked.is_error and "outside the workspace" in linked.text
    assert list(outside.iterdir()) == [] and not (tmp_path / "escape.txt").exists()


def test_the_responses_schema_is_the_minimal_one() -> None:
    tool = ApplyPatchTool(description="d", action_type=ApplyPatchAction)
    assert tool.to_responses_tool()["parameters"] == {
        "type": "object",
        "properties": {"patch": {"type": "string"}},
        "required": ["patch"],
    }


def patch_event(text: str) -> ActionEvent:
    return ActionEvent(
        action=ApplyPatchAction(patch=text),
        tool_name="apply_patch",
        tool_call_id="c1",
        tool_call=MessageToolCall(id="c1", name="apply_patch", arguments="{}"),
        llm_response_id="r1",
    )


def test_the_pattern_analyzer_reads_the_paths_a_patch_writes(workspace: Path) -> None:
    analyzer = PatternSecurityAnalyzer().with_workspace(str(workspace))
    inside = patch_event(patch("*** Add File: notes.txt", "+x"))
    assert analyzer.with_undo(True).security_risk(inside) is SecurityRisk.LOW
    assert analyzer.with_undo(False).security_risk(inside) is SecurityRisk.MEDIUM
    hook = patch_event(patch("*** Add File: .git/hooks/pre-commit", "+x"))
    assert analyzer.with_undo(True).security_risk(hook) is SecurityRisk.HIGH
    away = patch_event(patch("*** Update File: /etc/hosts", "+x"))
    assert analyzer.with_undo(True).security_risk(away) is SecurityRisk.HIGH


def test_gpt5_agent_patches_after_a_checkpoint_that_undoes_it(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path, persistence_dir: Path
) -> None:
    assert [t.name for t in get_gpt5_tools(enable_browser=False)] == [
        "terminal",
        "apply_patch",
        "task_tracker",
    ]
    (workspace / "README.md").write_text("old\n")
    agent = get_gpt5_agent(llm, cli_mode=True)
    llm_server.reply_tool_call(
        "apply_patch",
        {"patch": patch("*** Update File: README.md", "-old", "+new"), "security_risk": "LOW"},
    )
    llm_server.reply_text("done")
    conv = Conversation(
        agent=agent,
        workspace=workspace,
        persistence_dir=persistence_dir,
        visualizer=None,
        checkpoints=True,
    )
    try:
        conv.send_message("Update the README.")
        conv.run()
        [observation] = [e for e in conv.state.events if isinstance(e, ObservationEvent)]
        assert not observation.observation.is_error, observation.observation.text
        assert (workspace / "README.md").read_text() == "new\n"
        [checkpoint] = conv.list_checkpoints()
        assert checkpoint.action_id == observation.action_id
        assert checkpoint.label == "apply_patch README.md"
        conv.restore_checkpoint()
        assert (workspace / "README.md").read_text() == "old\n"
    finally:
        conv.close()
