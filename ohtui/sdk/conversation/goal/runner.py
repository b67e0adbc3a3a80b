"""run_goal: a conversation driven towards an objective until the judge is satisfied."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.sdk.conversation.goal.controller import GoalController, GoalDone, GoalOutcome

if TYPE_CHECKING:
    from ohtui.sdk.conversation.base import BaseConversation
    from ohtui.sdk.llm.llm import LLM


def run_goal(
    conversation: BaseConversation,
    objective: str,
    judge_llm: LLM,
    *,
    max_iterations: int = 10,
) -> GoalOutcome:
    """Send `objective`, run the agent, and after each run let `judge_llm` audit the
    conversation: re-prompt with what it finds missing, until it finds the objective done
    (`complete`) or `max_iterations` rounds were judged (`capped`).

    Everything lands in `conversation`'s own history; the judge's calls are recorded
    nowhere but in `judge_llm`'s metrics. A run's error (ConversationRunError) ends the
    loop and is raised.
    """
    controller = GoalController(objective, judge_llm, max_iterations=max_iterations)
    conversation.send_message(controller.start())
    while True:
        conversation.run()
        step = controller.on_run_finished(conversation.state.active_branch())
        if isinstance(step, GoalDone):
            return step.outcome
        conversation.send_message(step.followup)
