"""Agent.tool_concurrency_limit: one step's tool calls run at the same time when the tools
allow it, and are recorded in the order the model asked for them."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from llm_server import ScriptedLLMServer
from pydantic import Field, ValidationError

from ohtui.sdk import LLM, Agent, LocalConversation, Tool
from ohtui.sdk.event import AgentErrorEvent, ObservationEvent
from ohtui.sdk.tool import (
    Action,
    DeclaredResources,
    Observation,
    ToolDefinition,
    ToolExecutor,
    register_tool,
)


class ConcurrencyNapAction(Action):
    """Nap for a while."""

    label: str = Field(description="Which nap.")


class ConcurrencyNapObservation(Observation):
    """A nap taken."""


class ConcurrencyNapExecutor(ToolExecutor[ConcurrencyNapAction, ConcurrencyNapObservation]):
    """Naps, noting when each nap started and ended; a nap labelled 'boom' raises."""

    spans: ClassVar[dict[str, tuple[float, float]]] = {}
    lock = threading.Lock()

    def __call__(
        self, action: ConcurrencyNapAction, conversation: object = None
    ) -> ConcurrencyNapObservation:
        start = time.monotonic()
        time.sleep(0.3)
        with self.lock:
            self.spans[action.label] = (start, time.monotonic())
        if action.label == "boom":
            raise RuntimeError("the nap went wrong")
        return ConcurrencyNapObservation.from_text(f"napped {action.label}")


class ConcurrencyFreeNapTool(ToolDefinition[ConcurrencyNapAction, ConcurrencyNapObservation]):
    """Declares that its naps share nothing."""

    def declared_resources(self, action: Action) -> DeclaredResources:
        return DeclaredResources(keys=(), declared=True)

    @classmethod
    def create(cls, conv_state: Any = None, **params: Any) -> Sequence[ConcurrencyFreeNapTool]:
        return [
            cls(
                description="Nap.",
                action_type=ConcurrencyNapAction,
                observation_type=ConcurrencyNapObservation,
                executor=ConcurrencyNapExecutor(),
            )
        ]


class ConcurrencyShyNapTool(ToolDefinition[ConcurrencyNapAction, ConcurrencyNapObservation]):
    """Declares nothing: its calls run one at a time."""

    @classmethod
    def create(cls, conv_state: Any = None, **params: Any) -> Sequence[ConcurrencyShyNapTool]:
        return [
            cls(
                description="Nap alone.",
                action_type=ConcurrencyNapAction,
                observation_type=ConcurrencyNapObservation,
                executor=ConcurrencyNapExecutor(),
            )
        ]


register_tool(ConcurrencyFreeNapTool.name, ConcurrencyFreeNapTool)
register_tool(ConcurrencyShyNapTool.name, ConcurrencyShyNapTool)


def _run(
    llm: LLM, server: ScriptedLLMServer, workspace: Path, tool: str, limit: int, labels: list[str]
) -> LocalConversation:
    ConcurrencyNapExecutor.spans.clear()
    server.reply_tool_calls([(tool, {"label": label}) for label in labels])
    server.reply_tool_call("finish", {"message": "rested"})
    agent = Agent(llm=llm, tools=[Tool(name=tool)], tool_concurrency_limit=limit)
    conversation = LocalConversation(agent=agent, workspace=workspace, visualizer=None)
    conversation.send_message("nap")
    conversation.run()
    return conversation


def _overlap(a: str, b: str) -> bool:
    spans = ConcurrencyNapExecutor.spans
    return spans[a][0] < spans[b][1] and spans[b][0] < spans[a][1]


def test_calls_that_share_nothing_run_together_and_are_recorded_in_order(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conversation = _run(llm, llm_server, workspace, "concurrency_free_nap", 3, ["a", "b", "c"])

    assert _overlap("a", "b") and _overlap("b", "c")
    texts = [
        e.observation.text
        for e in conversation.state.events
        if isinstance(e, ObservationEvent) and e.tool_name == "concurrency_free_nap"
    ]
    assert texts == ["napped a", "napped b", "napped c"]
    conversation.close()


def test_one_at_a_time_by_default_and_for_tools_that_declare_nothing(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    _run(llm, llm_server, workspace, "concurrency_free_nap", 1, ["a", "b"]).close()
    assert not _overlap("a", "b")

    _run(llm, llm_server, workspace, "concurrency_shy_nap", 4, ["c", "d"]).close()
    assert not _overlap("c", "d")


def test_a_failing_call_is_reported_and_the_others_still_run(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conversation = _run(llm, llm_server, workspace, "concurrency_free_nap", 2, ["boom", "ok"])

    errors = [e for e in conversation.state.events if isinstance(e, AgentErrorEvent)]
    assert len(errors) == 1 and "the nap went wrong" in errors[0].error
    assert any(
        isinstance(e, ObservationEvent) and e.observation.text == "napped ok"
        for e in conversation.state.events
    )
    conversation.close()


def test_the_limit_is_at_least_one() -> None:
    llm = LLM(model="openai/test-model", api_key="sk-test")
    with pytest.raises(ValidationError, match="tool_concurrency_limit"):
        Agent(llm=llm, tools=[], tool_concurrency_limit=0)
    assert Agent(llm=llm, tools=[]).tool_concurrency_limit == 1


SHARED_EXECUTOR = ConcurrencyNapExecutor()


class ConcurrencyLeftNapTool(ToolDefinition[ConcurrencyNapAction, ConcurrencyNapObservation]):
    """Declares nothing, and shares its executor with the right-hand tool."""

    @classmethod
    def create(cls, conv_state: Any = None, **params: Any) -> Sequence[ConcurrencyLeftNapTool]:
        return [
            cls(
                description="Nap left.",
                action_type=ConcurrencyNapAction,
                observation_type=ConcurrencyNapObservation,
                executor=SHARED_EXECUTOR,
            )
        ]


class ConcurrencyRightNapTool(ConcurrencyLeftNapTool):
    """The same executor under another name."""


register_tool(ConcurrencyLeftNapTool.name, ConcurrencyLeftNapTool)
register_tool(ConcurrencyRightNapTool.name, ConcurrencyRightNapTool)


def test_tools_sharing_an_executor_never_run_at_once(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    ConcurrencyNapExecutor.spans.clear()
    llm_server.reply_tool_calls(
        [("concurrency_left_nap", {"label": "l"}), ("concurrency_right_nap", {"label": "r"})]
    )
    llm_server.reply_tool_call("finish", {"message": "rested"})
    agent = Agent(
        llm=llm,
        tools=[Tool(name="concurrency_left_nap"), Tool(name="concurrency_right_nap")],
        tool_concurrency_limit=2,
    )
    conversation = LocalConversation(agent=agent, workspace=workspace, visualizer=None)
    conversation.send_message("nap")

    conversation.run()

    assert set(ConcurrencyNapExecutor.spans) == {"l", "r"}
    assert not _overlap("l", "r")  # one shell is never driven by two calls at once
    conversation.close()
