"""The `summary` argument every tool call may carry (OpenHands 1.58's schema), end to end:
offered to the model for every tool, accepted by every tool, kept on the ActionEvent.

Each test runs a real conversation against the scripted OpenAI-compatible server.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from ohtui.sdk import (
    LLM,
    Action,
    ActionEvent,
    Agent,
    AgentErrorEvent,
    Conversation,
    LocalConversation,
    Observation,
    ObservationEvent,
    Tool,
    ToolDefinition,
    ToolExecutor,
    register_tool,
)
from ohtui.sdk.conversation.state import ConversationState


class SumTicketAction(Action):
    """A tool whose own parameter is called `summary`."""

    summary: str = Field(description="The ticket's title.")


class SumTicketObservation(Observation):
    title: str = ""


class SumTicketExecutor(ToolExecutor[SumTicketAction, SumTicketObservation]):
    def __call__(self, action: SumTicketAction, conversation: Any = None) -> SumTicketObservation:
        return SumTicketObservation.from_text(f"filed {action.summary}", title=action.summary)


class SumTicketTool(ToolDefinition[SumTicketAction, SumTicketObservation]):
    @classmethod
    def create(
        cls, conv_state: ConversationState | None = None, **params: Any
    ) -> Sequence[SumTicketTool]:
        return [
            cls(
                description="File a ticket.",
                action_type=SumTicketAction,
                observation_type=SumTicketObservation,
                executor=SumTicketExecutor(),
            )
        ]


register_tool("sum_ticket", SumTicketTool)


@pytest.fixture
def conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[LocalConversation]:
    tools = [Tool(name=name) for name in ("terminal", "file_editor", "task_tracker", "sum_ticket")]
    conv = Conversation(
        agent=Agent(llm=llm, tools=tools),
        workspace=workspace,
        persistence_dir=persistence_dir,
        visualizer=None,
    )
    yield conv
    conv.close()


def test_every_tool_is_offered_a_summary(conversation, llm_server) -> None:
    llm_server.reply_text("Hello.")
    conversation.send_message("hi")
    conversation.run()
    tools = {t["function"]["name"]: t["function"] for t in llm_server.requests[0]["tools"]}
    assert set(tools) == {
        "terminal",
        "file_editor",
        "task_tracker",
        "sum_ticket",
        "finish",
        "think",
    }
    for name, function in tools.items():
        summary = function["parameters"]["properties"]["summary"]
        assert summary["type"] == "string", name
        assert "summary" not in function["parameters"].get("required", []) or name == "sum_ticket"
    assert tools["sum_ticket"]["parameters"]["properties"]["summary"]["description"] == (
        "The ticket's title."
    )


def test_summaries_are_accepted_by_every_tool_and_kept(conversation, llm_server) -> None:
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "echo hi", "summary": "  Say hi  "}),
            (
                "file_editor",
                {
                    "command": "create",
                    "path": "a.txt",
                    "file_text": "x\n",
                    "summary": "Write a.txt",
                },
            ),
            ("task_tracker", {"command": "view", "summary": "Show the plan"}),
            ("think", {"thought": "ok", "summary": "Reflect"}),
            ("terminal", {"command": "echo bye"}),
            ("terminal", {"command": "echo odd", "summary": 42}),
        ]
    )
    llm_server.reply_tool_call("finish", {"message": "done", "summary": "Report back"})
    conversation.send_message("go")
    conversation.run()

    events = conversation.state.events
    assert not [e for e in events if isinstance(e, AgentErrorEvent)]
    actions = [e for e in events if isinstance(e, ActionEvent)]
    assert [a.summary for a in actions] == [
        "Say hi",
        "Write a.txt",
        "Show the plan",
        "Reflect",
        None,  # not given
        None,  # not a string: ignored rather than refused
        "Report back",
    ]
    for action in actions:
        assert action.action is not None
        assert "summary" not in action.action.model_dump()
    observations = [e for e in events if isinstance(e, ObservationEvent)]
    assert "hi" in observations[0].observation.text
    assert (Path(conversation.workspace.working_dir) / "a.txt").read_text() == "x\n"
    assert "Summary: Say hi" in actions[0].visualize.plain
    assert "Summary:" not in actions[4].visualize.plain

    restored = ActionEvent.model_validate_json(actions[0].model_dump_json())
    assert restored.summary == "Say hi"


def test_a_tools_own_summary_parameter_reaches_the_tool(conversation, llm_server) -> None:
    llm_server.reply_tool_call("sum_ticket", {"summary": "Login is broken"})
    llm_server.reply_text("Filed.")
    conversation.send_message("file it")
    conversation.run()

    [action] = [e for e in conversation.state.events if isinstance(e, ActionEvent)]
    assert isinstance(action.action, SumTicketAction)
    assert action.action.summary == "Login is broken"
    assert action.summary == "Login is broken"  # the tool's own words describe the call too
    [observation] = [e for e in conversation.state.events if isinstance(e, ObservationEvent)]
    assert observation.observation.text == "filed Login is broken"
