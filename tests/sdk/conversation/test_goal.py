"""run_goal: the agent is re-prompted with what the judge found missing until the judge
finds the objective done, or the rounds run out (the SDK's 54_goal_completion_loop)."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_server import Reply, ScriptedLLMServer

from ohtui.sdk import LLM, Agent, Conversation, MessageEvent
from ohtui.sdk.conversation.goal import GoalController, run_goal


def _user_texts(conversation: object) -> list[str]:
    events = conversation.state.events  # type: ignore[attr-defined]
    return [
        e.llm_message.text for e in events if isinstance(e, MessageEvent) and e.source == "user"
    ]


def test_the_judge_drives_the_agent_until_the_goal_is_shown_done(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    judge = llm.model_copy(update={"usage_id": "goal-judge"})
    llm_server.reply_text("I wrote mathx.py.")  # the agent's first run
    llm_server.reply_text('{"score": 0.3, "complete": false, "missing": "tests never ran"}')
    llm_server.reply_text("pytest: 1 passed")  # the agent, re-prompted
    llm_server.reply_text('Verdict: {"score": 1.0, "complete": true, "missing": ""} ok')
    with Conversation(agent=Agent(llm=llm, tools=[]), workspace=workspace, visualizer=None) as c:
        outcome = run_goal(c, "make pytest pass for mathx.py", judge, max_iterations=3)
        assert outcome.status == "complete" and outcome.iterations == 2
        assert outcome.verdict.score == 1.0
        objective, followup = _user_texts(c)
        assert objective == "make pytest pass for mathx.py"
        assert "tests never ran" in followup and "audit round 1" in followup
    judge_prompt = llm_server.requests[1]["messages"][0]["content"]
    judge_prompt = judge_prompt if isinstance(judge_prompt, str) else judge_prompt[0]["text"]
    assert "make pytest pass for mathx.py" in judge_prompt
    assert "assistant: I wrote mathx.py." in judge_prompt
    assert "system:" not in judge_prompt  # the agent's system prompt is left out
    assert "tools" not in llm_server.requests[1]


def test_an_unreadable_verdict_never_counts_as_done_and_the_cap_holds(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    llm_server.set_default(Reply(text="Looks great to me!"))
    with Conversation(agent=Agent(llm=llm, tools=[]), workspace=workspace, visualizer=None) as c:
        outcome = run_goal(c, "do it", llm, max_iterations=2)
    assert outcome.status == "capped" and outcome.iterations == 2
    assert outcome.verdict.score == 0.0 and "could not be parsed" in outcome.verdict.missing


def test_an_empty_objective_or_no_rounds_are_refused(llm: LLM) -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        GoalController("  ", llm)
    with pytest.raises(ValueError, match="max_iterations"):
        GoalController("x", llm, max_iterations=0)
