"""The terminal's SDK options: one executor shared by several tools (`executor=`), and
`no_change_timeout_seconds`, which stops a command that goes quiet. Real bash throughout."""

from __future__ import annotations

import time
import types
from pathlib import Path

import pytest

from ohtui.sdk.conversation.secret_registry import SecretRegistry
from ohtui.sdk.tool import Tool, resolve_tool
from ohtui.sdk.tools.terminal import TerminalAction, TerminalExecutor, TerminalTool
from ohtui.sdk.workspace.local import LocalWorkspace


def make_state(root: Path, secrets: SecretRegistry | None = None) -> types.SimpleNamespace:
    return types.SimpleNamespace(
        workspace=LocalWorkspace(working_dir=str(root)),
        env_observation_persistence_dir=str(root.parent / "obs"),
        secret_registry=secrets,
        sandbox=None,
        agent_state={},
    )


def test_a_shared_executor_runs_both_tools_in_one_shell(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    shared = TerminalExecutor(working_dir=str(tmp_path))
    [first] = TerminalTool.create(state, executor=shared)  # type: ignore[arg-type]
    [second] = TerminalTool.create(state, executor=shared)  # type: ignore[arg-type]
    try:
        assert first.executor is shared and second.executor is shared
        first(TerminalAction(command="export SHARED=yes"))
        seen = shared(TerminalAction(command="echo $SHARED"))  # called directly, as a helper
        assert "yes" in seen.text and seen.exit_code == 0
        assert "yes" in second(TerminalAction(command="echo $SHARED")).text
    finally:
        first.close()
        second.close()  # the same executor again: closing twice is harmless
    assert shared.session.closed


def test_a_shared_executor_gets_the_conversations_secrets(tmp_path: Path) -> None:
    secrets = SecretRegistry()
    secrets.update_secrets({"API_TOKEN": "tok-123456"})
    shared = TerminalExecutor(working_dir=str(tmp_path))
    [tool] = TerminalTool.create(make_state(tmp_path, secrets), executor=shared)  # type: ignore[arg-type]
    try:
        obs = tool(TerminalAction(command="echo $API_TOKEN"))
        assert "tok-123456" not in obs.text and "<secret-hidden>" in obs.text
    finally:
        tool.close()


def test_a_quiet_command_is_stopped_after_no_change_timeout(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    [tool] = resolve_tool(
        Tool(name="terminal", params={"no_change_timeout_seconds": 0.5}),
        state,  # type: ignore[arg-type]
    )
    try:
        assert "prints nothing new for 0.5 s" in tool.description
        started = time.monotonic()
        obs = tool(TerminalAction(command="echo start; sleep 30; echo never"))
        assert time.monotonic() - started < 10
        assert obs.timed_out and obs.exit_code is None and obs.is_error
        assert "start" in obs.text and "never" not in obs.text
        assert "printed nothing new for 0.5 s" in obs.text
        # output that keeps coming is not quiet
        busy = tool(TerminalAction(command="for i in 1 2 3 4; do echo $i; sleep 0.2; done"))
        assert busy.exit_code == 0 and not busy.timed_out
    finally:
        tool.close()


def test_bad_terminal_options_are_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no_change_timeout_seconds must be a positive"):
        TerminalExecutor(working_dir=str(tmp_path), no_change_timeout_seconds=0)
    with pytest.raises(ValueError, match="executor"):
        TerminalTool.create(make_state(tmp_path), username="root")  # type: ignore[arg-type]
