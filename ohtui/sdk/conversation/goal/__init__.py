"""Goal completion (the SDK's `/goal`): send an objective, run the agent, let a second
"judge" LLM audit the transcript, and re-prompt with what it found missing until the judge
sees the objective provably done or a round cap is reached.

`GoalController` decides (no I/O); `run_goal` drives a conversation with it.
"""

from ohtui.sdk.conversation.goal.controller import (
    GoalContinue,
    GoalController,
    GoalDone,
    GoalOutcome,
    GoalStatus,
    GoalStatusName,
    GoalStep,
)
from ohtui.sdk.conversation.goal.judge import GoalVerdict, judge_goal
from ohtui.sdk.conversation.goal.runner import run_goal

__all__ = [
    "GoalContinue",
    "GoalController",
    "GoalDone",
    "GoalOutcome",
    "GoalStatus",
    "GoalStatusName",
    "GoalStep",
    "GoalVerdict",
    "judge_goal",
    "run_goal",
]
