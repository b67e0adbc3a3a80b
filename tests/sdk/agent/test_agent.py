"""Tests for Agent: the system prompt, the tools offered, tool calls and their errors.

Every test runs a real conversation against the scripted OpenAI-compatible server
(tests/llm_server.py) through litellm; nothing in litellm is patched.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from datetime import date
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest
from pydantic import Field, SecretStr

from ohtui.sdk import (
    LLM,
    Action,
    ActionEvent,
    Agent,
    AgentErrorEvent,
    Conversation,
    ConversationExecutionStatus,
    LLMSecurityAnalyzer,
    LocalConversation,
    MessageEvent,
    Observation,
    ObservationEvent,
    SecurityRisk,
    SystemPromptEvent,
    Tool,
    ToolDefinition,
    ToolExecutor,
    get_agent_final_response,
    register_tool,
)
from ohtui.sdk.conversation import StaticSecret
from ohtui.sdk.event.base import Event

ALL_TOOLS = ("terminal", "file_editor", "task_tracker")
EXPLODING_TOOL = "agent_test_exploding"

Factory = Callable[..., LocalConversation]
T = TypeVar("T")


# --- a custom tool whose executor always raises ------------------------------------------


class AgentTestExplodeAction(Action):
    """Arguments of the exploding test tool."""

    reason: str = Field(description="What to blow up.")


class AgentTestExplodeObservation(Observation):
    """Never produced: the executor raises."""


class AgentTestExplodeExecutor(ToolExecutor[AgentTestExplodeAction, AgentTestExplodeObservation]):
    """Raises on every call."""

    def __call__(
        self, action: AgentTestExplodeAction, conversation: object = None
    ) -> AgentTestExplodeObservation:
        raise RuntimeError(f"kaboom: {action.reason}")


class AgentTestExplodingTool(ToolDefinition[AgentTestExplodeAction, AgentTestExplodeObservation]):
    """A tool that always fails."""

    @classmethod
    def create(cls, conv_state: Any, **params: Any) -> Sequence[AgentTestExplodingTool]:
        return [
            cls(
                name=EXPLODING_TOOL,
                description="Always fails.",
                action_type=AgentTestExplodeAction,
                observation_type=AgentTestExplodeObservation,
                executor=AgentTestExplodeExecutor(),
            )
        ]


register_tool(EXPLODING_TOOL, AgentTestExplodingTool)


# --- helpers -----------------------------------------------------------------------------


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    """Build conversations (a fresh Agent each) and close them all at the end."""
    made: list[LocalConversation] = []

    def make(tools: Sequence[str] = ALL_TOOLS, **kwargs: Any) -> LocalConversation:
        kwargs.setdefault("visualizer", None)
        agent = Agent(llm=llm, tools=[Tool(name=name) for name in tools])
        conv = Conversation(
            agent=agent, workspace=workspace, persistence_dir=persistence_dir, **kwargs
        )
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def of_type(events: Sequence[Event], cls: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, cls)]


def tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def content_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return content or ""


# --- system prompt and tools -------------------------------------------------------------


def test_system_prompt_states_workspace_date_and_tools(make_conversation, llm_server) -> None:
    llm_server.reply_text("Hello.")
    conv = make_conversation()
    conv.send_message("hi")
    conv.run()

    system = llm_server.requests[0]["messages"][0]
    assert system["role"] == "system"
    prompt = content_text(system)
    assert conv.workspace.working_dir in prompt
    assert date.today().isoformat() in prompt
    for name in (*ALL_TOOLS, "finish", "think"):
        assert f"- {name}:" in prompt

    [recorded] = of_type(conv.state.events, SystemPromptEvent)
    assert recorded.system_prompt.text == prompt
    assert isinstance(conv.state.events[0], SystemPromptEvent)


def test_the_model_is_told_which_secrets_it_may_use(make_conversation, llm_server) -> None:
    llm_server.reply_text("Noted.")
    secrets = {
        "GITHUB_TOKEN": StaticSecret(
            value=SecretStr("ghp-value-1234"), description="Pushes to the fork"
        ),
        "DB_PASSWORD": "db-value-5678",
    }
    conv = make_conversation(secrets=secrets)
    conv.send_message("hi")
    conv.run()

    prompt = content_text(llm_server.requests[0]["messages"][0])
    context = cast(Agent, conv.agent).get_dynamic_context(conv.state)
    assert context is not None
    assert context in prompt
    assert "<CUSTOM_SECRETS>" in context
    assert "- GITHUB_TOKEN: Pushes to the fork" in context
    assert "- DB_PASSWORD" in context
    assert "$GITHUB_TOKEN" in context or "environment variable" in context
    assert "ghp-value-1234" not in prompt
    assert "db-value-5678" not in prompt
    [recorded] = of_type(conv.state.events, SystemPromptEvent)
    assert recorded.dynamic_context is not None
    assert recorded.dynamic_context.text == context
    assert recorded.to_llm_message().text.replace("\n", "") == prompt.replace("\n", "")


def test_without_secrets_the_prompt_has_no_dynamic_context(make_conversation, llm_server) -> None:
    llm_server.reply_text("Hello.")
    conv = make_conversation()
    conv.send_message("hi")
    conv.run()
    assert cast(Agent, conv.agent).get_dynamic_context(conv.state) is None
    [recorded] = of_type(conv.state.events, SystemPromptEvent)
    assert recorded.dynamic_context is None
    assert "CUSTOM_SECRETS" not in content_text(llm_server.requests[0]["messages"][0])


def test_tools_sent_to_the_llm(make_conversation, llm_server) -> None:
    llm_server.reply_text("Hello.")
    conv = make_conversation()
    conv.send_message("hi")
    conv.run()

    tools = llm_server.requests[0]["tools"]
    names = [t["function"]["name"] for t in tools]
    assert sorted(names) == sorted([*ALL_TOOLS, "finish", "think"])
    for tool in tools:
        assert tool["type"] == "function"
        assert tool["function"]["parameters"]["type"] == "object"
        assert tool["function"]["description"]
    by_name = {t["function"]["name"]: t["function"] for t in tools}
    assert "command" in by_name["terminal"]["parameters"]["required"]
    assert by_name["finish"]["parameters"]["required"] == ["message"]
    [recorded] = of_type(conv.state.events, SystemPromptEvent)
    assert sorted(recorded.tool_names) == sorted(names)


def test_builtin_tools_are_always_offered(make_conversation, llm_server) -> None:
    llm_server.reply_text("Hello.")
    conv = make_conversation(tools=())
    conv.send_message("hi")
    conv.run()
    names = {t["function"]["name"] for t in llm_server.requests[0]["tools"]}
    assert names == {"finish", "think"}


# --- tool calls --------------------------------------------------------------------------


def test_parallel_tool_calls_share_one_assistant_message(make_conversation, llm_server) -> None:
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "echo one"}),
            ("think", {"thought": "halfway"}),
            ("terminal", {"command": "echo two"}),
        ],
        text="Let me check.",
    )
    llm_server.reply_tool_call("finish", {"message": "checked"})
    conv = make_conversation()
    conv.send_message("check things")
    conv.run()

    assert conv.state.execution_status is ConversationExecutionStatus.FINISHED
    actions = of_type(conv.state.events, ActionEvent)
    assert [a.tool_name for a in actions] == ["terminal", "think", "terminal", "finish"]
    batch = actions[:3]
    assert len({a.llm_response_id for a in batch}) == 1
    assert batch[0].llm_response_id != actions[3].llm_response_id
    assert [a.tool_call_id for a in batch] == ["call_1_0", "call_1_1", "call_1_2"]
    # The model's text goes with the first call of the batch only.
    assert [t.text for t in batch[0].thought] == ["Let me check."]
    assert batch[1].thought == [] and batch[2].thought == []

    observations = of_type(conv.state.events, ObservationEvent)
    assert [o.tool_call_id for o in observations[:3]] == ["call_1_0", "call_1_1", "call_1_2"]
    assert "one" in observations[0].observation.text
    assert "two" in observations[2].observation.text

    messages = llm_server.requests[1]["messages"]
    assistants = [m for m in messages if m["role"] == "assistant"]
    assert len(assistants) == 1
    [assistant] = assistants
    assert content_text(assistant) == "Let me check."
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_1_0", "call_1_1", "call_1_2"]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == [
        "terminal",
        "think",
        "terminal",
    ]
    index = messages.index(assistant)
    following = messages[index + 1 :]
    assert [m["role"] for m in following] == ["tool", "tool", "tool"]
    assert [m["tool_call_id"] for m in following] == ["call_1_0", "call_1_1", "call_1_2"]
    assert "one" in content_text(following[0])
    assert content_text(following[1]) == "Your thought has been logged."
    assert "two" in content_text(following[2])
    assert get_agent_final_response(conv.state.events) == "checked"


def test_reasoning_content_is_kept_on_the_action(make_conversation, llm_server) -> None:
    llm_server.reply_tool_call("think", {"thought": "plan"}, reasoning="I should plan first.")
    llm_server.reply_text("Done.", reasoning="All planned.")
    conv = make_conversation()
    conv.send_message("plan")
    conv.run()

    [action] = of_type(conv.state.events, ActionEvent)
    assert action.reasoning_content == "I should plan first."
    final = of_type(conv.state.events, MessageEvent)[-1]
    assert final.source == "agent"
    assert final.reasoning_content == "All planned."


BAD_CALLS = [
    pytest.param(
        "no_such_tool",
        {"x": 1},
        ["There is no tool named 'no_such_tool'", "terminal", "finish"],
        id="unknown-tool",
    ),
    pytest.param(
        "terminal",
        '{"command": "echo hi"',
        ["not valid JSON", "terminal"],
        id="malformed-json",
    ),
    pytest.param(
        "terminal",
        '["echo hi"]',
        ["must be a JSON object", "list"],
        id="arguments-are-a-list",
    ),
    pytest.param(
        "terminal",
        {"timeout": 5},
        ["Invalid arguments for tool 'terminal'", "command", "Field required"],
        id="missing-required-field",
    ),
    pytest.param(
        "file_editor",
        {"command": "delete", "path": "a.txt"},
        ["Invalid arguments for tool 'file_editor'", "command"],
        id="invalid-enum-value",
    ),
    pytest.param(
        "terminal",
        {"command": "echo hi", "bogus": True},
        ["Invalid arguments for tool 'terminal'", "bogus"],
        id="unexpected-field",
    ),
]


@pytest.mark.parametrize(("name", "arguments", "expected"), BAD_CALLS)
def test_bad_tool_call_becomes_an_agent_error_the_model_sees(
    make_conversation,
    llm_server,
    name: str,
    arguments: dict[str, Any] | str,
    expected: list[str],
) -> None:
    llm_server.reply_tool_call(name, arguments, call_id="bad_call")
    llm_server.reply_tool_call("finish", {"message": "recovered"})
    conv = make_conversation()
    conv.send_message("do it")
    conv.run()  # must not raise

    assert conv.state.execution_status is ConversationExecutionStatus.FINISHED
    [bad] = [a for a in of_type(conv.state.events, ActionEvent) if a.tool_call_id == "bad_call"]
    assert bad.action is None
    assert bad.tool_name == name
    [error] = of_type(conv.state.events, AgentErrorEvent)
    assert error.tool_call_id == "bad_call"
    assert error.tool_name == name
    for fragment in expected:
        assert fragment in error.error
    assert not [
        o for o in of_type(conv.state.events, ObservationEvent) if o.tool_call_id == "bad_call"
    ]

    assert len(llm_server.requests) == 2
    results = tool_messages(llm_server.requests[1])
    [result] = [m for m in results if m["tool_call_id"] == "bad_call"]
    assert content_text(result) == error.error
    [assistant] = [m for m in llm_server.requests[1]["messages"] if m["role"] == "assistant"]
    assert assistant["tool_calls"][0]["id"] == "bad_call"
    assert get_agent_final_response(conv.state.events) == "recovered"


def test_a_bad_call_does_not_stop_the_good_calls_of_its_batch(
    make_conversation, llm_server
) -> None:
    llm_server.reply_tool_calls(
        [("terminal", {"command": "echo good"}), ("nope", {}), ("terminal", "{oops")]
    )
    llm_server.reply_tool_call("finish", {"message": "ok"})
    conv = make_conversation()
    conv.send_message("go")
    conv.run()

    assert conv.state.execution_status is ConversationExecutionStatus.FINISHED
    errors = of_type(conv.state.events, AgentErrorEvent)
    assert sorted(e.tool_call_id for e in errors) == ["call_1_1", "call_1_2"]
    [good] = [
        o for o in of_type(conv.state.events, ObservationEvent) if o.tool_call_id == "call_1_0"
    ]
    assert "good" in good.observation.text
    results = tool_messages(llm_server.requests[1])
    assert sorted(m["tool_call_id"] for m in results) == ["call_1_0", "call_1_1", "call_1_2"]


def test_a_tool_that_raises_becomes_an_agent_error(make_conversation, llm_server) -> None:
    llm_server.reply_tool_call(EXPLODING_TOOL, {"reason": "the bridge"}, call_id="boom")
    llm_server.reply_tool_call("finish", {"message": "survived"})
    conv = make_conversation(tools=[*ALL_TOOLS, EXPLODING_TOOL])
    conv.send_message("explode")
    conv.run()

    assert conv.state.execution_status is ConversationExecutionStatus.FINISHED
    [error] = of_type(conv.state.events, AgentErrorEvent)
    assert error.tool_call_id == "boom"
    assert error.tool_name == EXPLODING_TOOL
    assert "RuntimeError" in error.error and "kaboom: the bridge" in error.error
    [action] = [a for a in of_type(conv.state.events, ActionEvent) if a.tool_call_id == "boom"]
    assert isinstance(action.action, AgentTestExplodeAction)
    [result] = [m for m in tool_messages(llm_server.requests[1]) if m["tool_call_id"] == "boom"]
    assert "kaboom: the bridge" in content_text(result)
    assert get_agent_final_response(conv.state.events) == "survived"


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("LOW", SecurityRisk.LOW),
        ("MEDIUM", SecurityRisk.MEDIUM),
        ("high", SecurityRisk.HIGH),
        ("EXTREME", SecurityRisk.UNKNOWN),
    ],
)
def test_security_risk_argument_is_accepted_and_stored(
    make_conversation, llm_server, sent: str, stored: SecurityRisk
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo risky", "security_risk": sent})
    llm_server.reply_tool_call("finish", {"message": "ok"})
    conv = make_conversation()
    conv.set_security_analyzer(LLMSecurityAnalyzer())
    conv.send_message("go")
    conv.run()

    assert not of_type(conv.state.events, AgentErrorEvent)
    action = of_type(conv.state.events, ActionEvent)[0]
    assert action.security_risk is stored
    assert action.action is not None
    assert "security_risk" not in action.action.model_dump()
    assert json.loads(action.tool_call.arguments)["security_risk"] == sent
    observation = of_type(conv.state.events, ObservationEvent)[0]
    assert "risky" in observation.observation.text


def test_without_an_analyzer_the_models_rating_is_ignored(make_conversation, llm_server) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo risky", "security_risk": "LOW"})
    llm_server.reply_tool_call("finish", {"message": "ok"})
    conv = make_conversation()
    conv.send_message("go")
    conv.run()
    assert of_type(conv.state.events, ActionEvent)[0].security_risk is SecurityRisk.UNKNOWN


def test_without_security_risk_the_action_risk_is_unknown(make_conversation, llm_server) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo plain"})
    llm_server.reply_tool_call("finish", {"message": "ok"})
    conv = make_conversation()
    conv.send_message("go")
    conv.run()
    assert of_type(conv.state.events, ActionEvent)[0].security_risk is SecurityRisk.UNKNOWN
