"""GoalController: after each run, judge and decide to go on (with a follow-up) or stop.

It does no I/O: a driver (`run_goal`, or a server's task) sends the messages and runs the
agent, so every driver decides the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from ohtui.sdk.conversation.goal.judge import GoalVerdict, judge_goal
from ohtui.sdk.conversation.goal.prompts import FOLLOWUP_PROMPT
from ohtui.sdk.event.base import Event
from ohtui.sdk.llm.llm import LLM

logger = logging.getLogger(__name__)


class GoalOutcome(BaseModel):
    """How a goal loop ended: `complete` (the judge is satisfied) or `capped` (rounds ran
    out first), after how many audit rounds, with the last verdict."""

    status: Literal["complete", "capped"]
    iterations: int = Field(ge=1, description="Audit rounds performed.")
    verdict: GoalVerdict


GoalStatusName = Literal["running", "complete", "capped", "interrupted"]
"""Where a goal loop stands."""


class GoalStatus(BaseModel):
    """A goal loop's progress, for a front end to show."""

    active: bool = Field(description="Whether the loop still runs.")
    status: GoalStatusName
    iteration: int = Field(ge=0, description="Audit rounds done.")
    max_iterations: int = Field(ge=1)
    objective: str
    verdict: GoalVerdict | None = Field(default=None, description="The last verdict, at the end.")


class GoalContinue(BaseModel):
    """Go on: send `followup`, then run again."""

    followup: str
    verdict: GoalVerdict = Field(description="The verdict of the round just judged.")


class GoalDone(BaseModel):
    """Stop, with `outcome`."""

    outcome: GoalOutcome


GoalStep = GoalContinue | GoalDone
"""What `GoalController.on_run_finished` decides."""


class GoalController:
    """Counts audit rounds, judges each, and decides; ValueError for an empty objective or
    a cap below 1."""

    def __init__(self, objective: str, judge_llm: LLM, *, max_iterations: int = 10) -> None:
        if not objective.strip():
            raise ValueError("Goal objective must not be empty.")
        if max_iterations < 1:
            raise ValueError("max_iterations must be >= 1.")
        self.objective = objective
        self.judge_llm = judge_llm
        self.max_iterations = max_iterations
        self.iteration = 0

    def start(self) -> str:
        """The first message to send: the objective."""
        return self.objective

    def on_run_finished(self, events: Sequence[Event]) -> GoalStep:
        """Judge the conversation after a run; go on with a follow-up, or stop."""
        self.iteration += 1
        verdict = judge_goal(self.judge_llm, self.objective, events)
        logger.info(
            "goal audit %d/%d: score %.2f, complete %s",
            self.iteration,
            self.max_iterations,
            verdict.score,
            verdict.complete,
        )
        if verdict.complete or self.iteration >= self.max_iterations:
            status: Literal["complete", "capped"] = "complete" if verdict.complete else "capped"
            return GoalDone(
                outcome=GoalOutcome(status=status, iterations=self.iteration, verdict=verdict)
            )
        missing = verdict.missing or "Some requirements are not yet verified."
        return GoalContinue(
            followup=FOLLOWUP_PROMPT.format(iteration=self.iteration, missing=missing),
            verdict=verdict,
        )
