"""The default policy with a model that rates everything LOW: every destructive command asks
or is confined and undoable, and everyday work runs without a dialog when it can be undone."""

from __future__ import annotations

from pathlib import Path

import pytest
from what_asks import Outcome, outcome
from what_asks_corpus import DESTRUCTIVE, EVERYDAY


@pytest.mark.parametrize("command", DESTRUCTIVE)
def test_a_destructive_command_asks_when_nothing_could_undo_it(
    workspace: Path, command: str
) -> None:
    assert outcome(command, str(workspace), undoable=False) is Outcome.ASKS


@pytest.mark.parametrize("command", DESTRUCTIVE)
def test_a_destructive_command_runs_unasked_only_after_a_checkpoint(
    workspace: Path, command: str
) -> None:
    assert outcome(command, str(workspace), undoable=True) is not Outcome.READS


def test_everyday_commands_mostly_run_unasked_in_the_sandbox(workspace: Path) -> None:
    unasked = [c for c in EVERYDAY if outcome(c, str(workspace), undoable=True) is not Outcome.ASKS]
    assert len(unasked) >= 55, sorted(set(EVERYDAY) - set(unasked))


def test_without_undo_only_reading_runs_unasked(workspace: Path) -> None:
    outcomes = {c: outcome(c, str(workspace), undoable=False) for c in EVERYDAY}
    assert Outcome.UNDOABLE not in outcomes.values()
    assert outcomes["git status"] is Outcome.READS
    assert outcomes["make"] is Outcome.ASKS
