"""Condenser semantics: defaults, validation, requirements, where the cut falls."""

from __future__ import annotations

import pytest
from condense_events import action, agent, history, observation, system, user
from llm_server import ScriptedLLMServer
from pydantic import ValidationError

from ohtui.sdk import LLM, Agent, Condensation
from ohtui.sdk.context import (
    CondenserBase,
    LLMSummarizingCondenser,
    NoCondensationAvailableException,
    NoOpCondenser,
    PipelineCondenser,
    RollingCondenser,
    View,
)
from ohtui.sdk.context.condenser.base import CondensationRequirement
from ohtui.sdk.context.condenser.llm_summarizing_condenser import Reason
from ohtui.sdk.event.condenser import CondensationRequest, CondensationSummaryEvent


def test_the_sdk_defaults(llm: LLM) -> None:
    condenser = LLMSummarizingCondenser(llm=llm)
    assert (condenser.max_size, condenser.max_tokens, condenser.keep_first) == (240, None, 2)
    assert condenser.minimum_progress == 0.1
    assert condenser.handles_condensation_requests()
    assert not NoOpCondenser().handles_condensation_requests()


def test_keep_first_must_leave_room(llm: LLM) -> None:
    with pytest.raises(ValidationError, match=r"keep_first .* must be less than max_size"):
        LLMSummarizingCondenser(llm=llm, max_size=10, keep_first=4)
    with pytest.raises(ValidationError):
        LLMSummarizingCondenser(llm=llm, minimum_progress=1.0)


def test_noop_returns_the_view_unchanged() -> None:
    view = View.from_events(history(3))
    assert NoOpCondenser().condense(view) is view


def test_no_reason_below_the_thresholds(llm: LLM) -> None:
    condenser = LLMSummarizingCondenser(llm=llm, max_size=20)
    view = View.from_events(history(5))  # 12 events
    assert condenser.condensation_requirement(view) is None
    assert condenser.condense(view) is view


def test_size_is_soft_and_a_request_is_hard(llm: LLM) -> None:
    condenser = LLMSummarizingCondenser(llm=llm, max_size=10)
    big = View.from_events(history(6))
    assert condenser.get_condensation_reasons(big) == {Reason.EVENTS}
    assert condenser.condensation_requirement(big) is CondensationRequirement.SOFT
    asked = View.from_events([*history(2), CondensationRequest()])
    assert condenser.condensation_requirement(asked) is CondensationRequirement.HARD


def test_too_many_tokens_is_hard_and_counts_with_the_agent_model(llm: LLM) -> None:
    condenser = LLMSummarizingCondenser(llm=llm, max_size=1000, max_tokens=200)
    events = [system(), user("task")] + [agent("word " * 40) for _ in range(6)]
    view = View.from_events(events)
    assert condenser.get_condensation_reasons(view, agent_llm=llm) == {Reason.TOKENS}
    start, end = condenser._forgotten_range(view, llm)
    assert start == 2
    kept_tokens = llm.get_token_count([e.to_llm_message() for e in [*view[:start], *view[end:]]])
    assert kept_tokens <= 200  # about half the limit is left, the task included


def test_the_agent_window_caps_max_tokens(llm: LLM) -> None:
    condenser = LLMSummarizingCondenser(llm=llm, max_tokens=100_000)
    small = llm.model_copy(update={"max_input_tokens": 50})
    view = View.from_events([system(), user("task " * 100)])
    assert Reason.TOKENS in condenser.get_condensation_reasons(view, agent_llm=small)


def test_the_cut_keeps_the_task_and_never_splits_a_batch(llm_server: ScriptedLLMServer, llm):
    llm_server.reply_text("the summary")
    condenser = LLMSummarizingCondenser(llm=llm, max_size=8, keep_first=1)
    events = [
        system(),
        user("the task"),
        action("a", "r1"),
        action("b", "r1"),
        observation("a"),
        observation("b"),
        action("c"),
        observation("c"),
        agent("x"),
        agent("y"),
    ]
    result = condenser.condense(View.from_events(events))
    assert isinstance(result, Condensation)
    # keep_first=1 would cut after the system prompt: the task is protected all the same
    forgotten = result.forgotten_event_ids
    assert events[0].id not in forgotten and events[1].id not in forgotten
    assert {e.id for e in events[2:6]} <= forgotten  # the whole batch, with its results
    assert result.summary == "the summary" and result.summary_offset == 2
    view = View.from_events([*events, result])
    assert isinstance(view[2], CondensationSummaryEvent)


def test_too_little_progress_means_no_condensation(llm: LLM) -> None:
    condenser = LLMSummarizingCondenser(llm=llm, max_size=200, minimum_progress=0.9)
    view = View.from_events([*history(4), CondensationRequest()])
    with pytest.raises(NoCondensationAvailableException, match="minimum_progress"):
        condenser.get_condensation(view)


def test_a_hard_requirement_without_a_condensation_falls_back_to_a_reset(
    llm_server: ScriptedLLMServer, llm: LLM
) -> None:
    llm_server.reply_text("everything so far")
    condenser = LLMSummarizingCondenser(llm=llm, max_size=200, minimum_progress=0.9)
    events = [*history(4), CondensationRequest()]
    result = condenser.condense(View.from_events(events))
    assert isinstance(result, Condensation)
    assert result.summary_offset == 2
    assert result.forgotten_event_ids == {e.id for e in events[2:10]}


def test_a_failing_summary_on_a_soft_requirement_sends_the_view(
    llm_server: ScriptedLLMServer, llm: LLM
) -> None:
    llm_server.reply_error(500)
    condenser = LLMSummarizingCondenser(llm=llm, max_size=10)
    view = View.from_events(history(6))
    assert condenser.condense(view) is view


def test_the_pipeline_stops_at_the_first_condensation(
    llm_server: ScriptedLLMServer, llm: LLM
) -> None:
    llm_server.reply_text("S")

    class Counting(NoOpCondenser):
        def condense(self, view, agent_llm=None):  # type: ignore[no-untyped-def]
            calls.append(len(view))
            return view

    calls: list[int] = []
    pipeline = PipelineCondenser(
        condensers=[Counting(), LLMSummarizingCondenser(llm=llm, max_size=10), Counting()]
    )
    assert pipeline.handles_condensation_requests()
    result = pipeline.condense(View.from_events(history(6)))
    assert isinstance(result, Condensation)
    assert calls == [14]


def test_condensers_are_rolling_and_serialize_with_the_agent(llm: LLM) -> None:
    condenser = LLMSummarizingCondenser(llm=llm, max_size=50, keep_first=4)
    assert isinstance(condenser, RollingCondenser)
    agent_ = Agent(llm=llm, condenser=PipelineCondenser(condensers=[condenser]))
    restored = Agent.model_validate_json(agent_.model_dump_json())
    assert isinstance(restored.condenser, PipelineCondenser)
    [inner] = restored.condenser.condensers
    assert isinstance(inner, LLMSummarizingCondenser)
    assert (inner.max_size, inner.keep_first) == (50, 4)
    assert isinstance(CondenserBase.model_validate(condenser.model_dump()), LLMSummarizingCondenser)
