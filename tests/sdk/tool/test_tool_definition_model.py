"""ToolDefinition as a pydantic model: derived names, frozen copies, JSON round trips,
executors, MCP and Responses shapes, the arguments every call may carry, and the registry."""

from __future__ import annotations

import json
import types
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, Field, ValidationError

from ohtui.sdk.conversation.state import ConversationState
from ohtui.sdk.tool import (
    Action,
    Observation,
    Schema,
    Tool,
    ToolAnnotations,
    ToolDefinition,
    ToolExecutor,
    list_registered_tools,
    list_usable_tools,
    register_tool,
    registry,
    resolve_tool,
)
from ohtui.sdk.tool.builtins import (
    DEFAULT_BUILT_IN_TOOLS,
    FinishAction,
    FinishTool,
    ThinkTool,
)
from ohtui.sdk.tool.tool import _camel_to_snake, tool_name_of
from ohtui.sdk.tools.file_editor import FileEditorTool
from ohtui.sdk.tools.task_tracker import TaskTrackerTool
from ohtui.sdk.tools.terminal import TerminalTool

# Class and tool names carry a prefix: kinds are looked up by class name and the tool
# registry is global, so they must not collide with other test modules.


class TdmLookupAction(Action):
    """Look a word up."""

    word: str = Field(description="The word.")
    lang: str | None = Field(default=None, description="Its language.")


class TdmLookupObservation(Observation):
    definition: str = ""


class TdmLookupExecutor(ToolExecutor[TdmLookupAction, TdmLookupObservation]):
    def __call__(self, action: TdmLookupAction, conversation: Any = None) -> TdmLookupObservation:
        return TdmLookupObservation.from_text("found", definition=f"{action.word}: a word")


class TdmDictionaryLookupTool(ToolDefinition[TdmLookupAction, TdmLookupObservation]):
    @classmethod
    def create(
        cls, conv_state: ConversationState | None = None, **params: Any
    ) -> Sequence[TdmDictionaryLookupTool]:
        return [
            cls(
                description="Look words up.",
                action_type=TdmLookupAction,
                observation_type=TdmLookupObservation,
                executor=TdmLookupExecutor(),
                **params,
            )
        ]


class TdmNamedTool(ToolDefinition[TdmLookupAction, TdmLookupObservation]):
    name: ClassVar[str] = "tdm_custom_name"


class TdmUnusableTool(TdmDictionaryLookupTool):
    @classmethod
    def is_usable(cls) -> bool:
        return False


def lookup(**fields: Any) -> TdmDictionaryLookupTool:
    [tool] = TdmDictionaryLookupTool.create(**fields)
    return tool


# ------------------------------------------------------------------ names


@pytest.mark.parametrize(
    ("class_name", "name"),
    [
        ("TerminalTool", "terminal"),
        ("FileEditorTool", "file_editor"),
        ("BrowserToolSet", "browser_tool_set"),
        ("XMLParser", "xml_parser"),
        ("HTTPClient", "http_client"),
        ("ABC", "abc"),
        ("Tool", "tool"),
    ],
)
def test_name_of_a_class(class_name: str, name: str) -> None:
    assert tool_name_of(class_name) == name


@pytest.mark.parametrize(
    ("class_name", "snake"),
    [
        ("TerminalTool", "terminal_tool"),
        ("PlanningFileEditorTool", "planning_file_editor_tool"),
        ("XMLParser", "xml_parser"),
        ("AB", "ab"),
        ("A", "a"),
    ],
)
def test_the_sdks_camel_to_snake_keeps_the_tool_suffix(class_name: str, snake: str) -> None:
    assert _camel_to_snake(class_name) == snake


def test_tools_are_named_after_their_class() -> None:
    assert TerminalTool.name == "terminal"
    assert FileEditorTool.name == "file_editor"
    assert TaskTrackerTool.name == "task_tracker"
    assert FinishTool.name == "finish"
    assert ThinkTool.name == "think"
    assert TdmDictionaryLookupTool.name == "tdm_dictionary_lookup"
    assert lookup().name == "tdm_dictionary_lookup"


def test_a_subclass_may_declare_its_name() -> None:
    tool = TdmNamedTool(description="d", action_type=TdmLookupAction)
    assert TdmNamedTool.name == tool.name == "tdm_custom_name"
    assert tool.to_openai_tool()["function"]["name"] == "tdm_custom_name"


def test_an_instance_may_carry_its_own_name_through_json() -> None:
    tool = lookup(name="tdm_per_instance")
    assert tool.name == "tdm_per_instance"
    assert TdmDictionaryLookupTool.name == "tdm_dictionary_lookup"  # the class is untouched
    restored = ToolDefinition.model_validate_json(tool.model_dump_json())
    assert restored.name == "tdm_per_instance"
    assert lookup().name == "tdm_dictionary_lookup"


def test_a_nameless_tool_is_refused_with_what_to_do() -> None:
    with pytest.raises(ValidationError, match=r"pass name=\.\.\."):
        ToolDefinition(description="d", action_type=TdmLookupAction)
    with pytest.raises(ValidationError, match="non-empty string"):
        lookup(name="")


# ------------------------------------------------------------------ frozen


def test_a_tool_is_frozen_and_copies_are_new_tools() -> None:
    tool = lookup()
    with pytest.raises(ValidationError, match="frozen"):
        tool.description = "changed"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        tool.executor = None  # type: ignore[misc]
    renamed = tool.model_copy(update={"name": "tdm_renamed", "meta": {"v": 2}})
    assert (renamed.name, renamed.meta) == ("tdm_renamed", {"v": 2})
    assert (tool.name, tool.meta) == ("tdm_dictionary_lookup", None)


def test_set_executor_returns_a_new_tool() -> None:
    bare = lookup().model_copy(update={"executor": None})
    executor = TdmLookupExecutor()
    ready = bare.set_executor(executor)
    assert ready is not bare
    assert bare.executor is None
    assert ready.executor is executor
    assert ready.name == bare.name


def test_as_executable() -> None:
    tool = lookup()
    executable = tool.as_executable()
    assert executable.executor is tool.executor
    observation = executable(TdmLookupAction(word="ox"))
    assert isinstance(observation, TdmLookupObservation)
    with pytest.raises(NotImplementedError, match="Tool 'tdm_dictionary_lookup' has no executor"):
        lookup().model_copy(update={"executor": None}).as_executable()


def test_action_type_must_be_an_action_class() -> None:
    with pytest.raises(ValidationError):
        TdmDictionaryLookupTool(description="d", action_type="TdmNoSuchAction")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        TdmDictionaryLookupTool(description="d", action_type=TdmLookupObservation)  # type: ignore[arg-type]


# ------------------------------------------------------------------ JSON


def test_json_round_trip_through_the_base_class() -> None:
    tool = FinishTool.create()[0]
    data = json.loads(tool.model_dump_json())
    assert data["kind"] == "FinishTool"
    assert data["name"] == "finish"
    assert data["action_type"] == "FinishAction"
    assert data["observation_type"] == "FinishObservation"
    assert "executor" not in data  # a runtime object, never written
    restored = ToolDefinition.model_validate_json(tool.model_dump_json())
    assert type(restored) is FinishTool
    assert restored.action_type is FinishAction
    assert restored.model_dump() == tool.model_dump()
    assert ToolDefinition.model_validate(data).model_dump() == tool.model_dump()


def test_tools_inside_other_models_keep_their_class() -> None:
    class TdmToolbox(BaseModel):
        first: ToolDefinition[Any, Any]  # the type parameters are hints, as in the SDK
        all: list[ToolDefinition]

    box = TdmToolbox(first=lookup(), all=[FinishTool(), ThinkTool(), lookup()])
    restored = TdmToolbox.model_validate_json(box.model_dump_json())
    assert type(restored.first) is TdmDictionaryLookupTool
    assert [type(t) for t in restored.all] == [FinishTool, ThinkTool, TdmDictionaryLookupTool]
    assert [t.model_dump() for t in restored.all] == [t.model_dump() for t in box.all]


def test_an_unknown_kind_is_named() -> None:
    data = {"name": "x", "description": "d", "action_type": "FinishAction", "kind": "TdmNoTool"}
    with pytest.raises(ValueError, match="Unexpected kind 'TdmNoTool' for ToolDefinition"):
        ToolDefinition.model_validate_json(json.dumps(data))


# ------------------------------------------------------------------ create


def test_built_in_tools_need_no_conversation() -> None:
    for tool_class in DEFAULT_BUILT_IN_TOOLS:
        [tool] = tool_class.create()
        assert tool.executor is not None
        assert tool.annotations is not None and tool.annotations.readOnlyHint
        with pytest.raises(ValueError, match="no parameters"):
            tool_class.create(None, colour="red")


@pytest.mark.parametrize("tool_class", [TerminalTool, FileEditorTool, TaskTrackerTool])
def test_workspace_tools_say_they_need_a_conversation(tool_class: type[ToolDefinition]) -> None:
    with pytest.raises(ValueError, match=rf"{tool_class.__name__}.create\(\) needs"):
        tool_class.create()


# ------------------------------------------------------------------ running


class TdmLooseExecutor(ToolExecutor[TdmLookupAction, Any]):
    def __init__(self, result: object) -> None:
        self.result = result

    def __call__(self, action: TdmLookupAction, conversation: Any = None) -> Any:
        return self.result


def loose(result: object, observation_type: type[Observation] | None) -> TdmDictionaryLookupTool:
    return TdmDictionaryLookupTool(
        description="d",
        action_type=TdmLookupAction,
        observation_type=observation_type,
        executor=TdmLooseExecutor(result),
    )


def test_a_dict_result_becomes_the_declared_observation() -> None:
    tool = loose({"definition": "ox: a bovine"}, TdmLookupObservation)
    observation = tool(TdmLookupAction(word="ox"))
    assert isinstance(observation, TdmLookupObservation)
    assert observation.definition == "ox: a bovine"


def test_without_a_declared_type_the_kind_decides() -> None:
    result = {"kind": "TdmLookupObservation", "definition": "ox"}
    assert isinstance(loose(result, None)(TdmLookupAction(word="ox")), TdmLookupObservation)
    model = TdmLookupObservation(definition="ox")
    assert loose(model, None)(TdmLookupAction(word="ox")) is model


def test_an_observation_comes_back_as_it_is() -> None:
    error = Observation.from_text("the lookup service is down", is_error=True)
    assert loose(error, TdmLookupObservation)(TdmLookupAction(word="ox")) is error


def test_another_model_becomes_the_declared_observation() -> None:
    class TdmForeignResult(BaseModel):
        definition: str

    result = loose(TdmForeignResult(definition="ox"), TdmLookupObservation)(
        TdmLookupAction(word="ox")
    )
    assert isinstance(result, TdmLookupObservation)
    assert result.definition == "ox"


def test_a_result_that_is_no_observation_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"Output must be dict or BaseModel.*returned list"):
        loose([1, 2], None)(TdmLookupAction(word="ox"))


# ------------------------------------------------------------------ schemas


def test_actions_and_observations_are_frozen_schemas() -> None:
    assert issubclass(Action, Schema)
    assert issubclass(Observation, Schema)
    action = TdmLookupAction(word="ox")
    with pytest.raises(ValidationError, match="Instance is frozen"):
        action.word = "cow"  # type: ignore[misc]
    schema = TdmLookupAction.to_mcp_schema()
    assert schema["required"] == ["word"]
    assert schema["properties"]["lang"] == {"type": "string", "description": "Its language."}
    assert "kind" not in schema["properties"]


def test_to_mcp_tool() -> None:
    annotations = ToolAnnotations(title="Lookup", readOnlyHint=True)
    tool = lookup(annotations=annotations, meta={"version": "1"})
    mcp = tool.to_mcp_tool()
    assert mcp["name"] == "tdm_dictionary_lookup"
    assert mcp["description"] == "Look words up."
    assert mcp["inputSchema"] == TdmLookupAction.to_mcp_schema()
    assert mcp["annotations"] == annotations
    assert mcp["_meta"] == {"version": "1"}
    assert "definition" in mcp["outputSchema"]["properties"]
    bare = TdmDictionaryLookupTool(description="d", action_type=TdmLookupAction).to_mcp_tool()
    assert {"annotations", "_meta", "outputSchema"}.isdisjoint(bare)


def test_to_responses_tool_has_the_chat_parameters() -> None:
    tool = lookup()
    responses = tool.to_responses_tool(add_security_risk_prediction=True)
    chat = tool.to_openai_tool(add_security_risk_prediction=True)["function"]
    assert responses["type"] == "function"
    assert responses["strict"] is False
    assert responses["name"] == chat["name"]
    assert responses["description"] == chat["description"]
    assert responses["parameters"] == chat["parameters"]
    assert tool._get_tool_schema(add_security_risk_prediction=True) == chat["parameters"]


def test_every_tool_offers_an_optional_summary_after_the_risk() -> None:
    parameters = lookup().to_openai_tool(add_security_risk_prediction=True)["function"][
        "parameters"
    ]
    assert list(parameters["properties"])[:3] == ["security_risk", "summary", "word"]
    assert parameters["properties"]["summary"]["type"] == "string"
    assert sorted(parameters["required"]) == ["security_risk", "word"]  # ours stays required
    for tool in (FinishTool(), ThinkTool()):
        assert "summary" in tool.to_openai_tool()["function"]["parameters"]["properties"]


def test_a_tools_own_summary_parameter_is_kept() -> None:
    class TdmTicketAction(Action):
        summary: str = Field(description="The ticket's title.")

    tool = ToolDefinition(name="tdm_ticket", description="d", action_type=TdmTicketAction)
    parameters = tool.to_openai_tool()["function"]["parameters"]
    assert parameters["properties"]["summary"]["description"] == "The ticket's title."
    assert parameters["required"] == ["summary"]


# ------------------------------------------------------------------ registry


def state() -> types.SimpleNamespace:
    return types.SimpleNamespace(agent_state={}, workspace=None)


def test_list_usable_tools_asks_each_tool() -> None:
    register_tool("tdm_unusable", TdmUnusableTool)
    register_tool("tdm_usable", TdmDictionaryLookupTool)
    register_tool("tdm_unusable_instance", TdmUnusableTool.create()[0])
    assert {"tdm_unusable", "tdm_usable", "tdm_unusable_instance"} <= set(list_registered_tools())
    usable = list_usable_tools()
    assert "tdm_usable" in usable
    assert "tdm_unusable" not in usable
    assert "tdm_unusable_instance" not in usable
    assert {"terminal", "file_editor", "task_tracker"} <= set(usable)


def test_restoring_the_registrys_mappings_undoes_a_registration() -> None:
    """The SDK's tests snapshot `_REG` and `_MODULE_QUALNAMES` and put them back after."""
    saved, modules = dict(registry._REG), dict(registry._MODULE_QUALNAMES)
    register_tool("tdm_scratch", TdmDictionaryLookupTool)
    assert registry._REG["tdm_scratch"] is TdmDictionaryLookupTool
    assert registry._MODULE_QUALNAMES["terminal"] == "ohtui.sdk.tools.terminal"
    registry._REG.clear()
    registry._REG.update(saved)
    registry._MODULE_QUALNAMES.clear()
    registry._MODULE_QUALNAMES.update(modules)
    assert "tdm_scratch" not in list_registered_tools()
    assert "terminal" in list_registered_tools()


def test_a_registered_class_gets_the_spec_params() -> None:
    register_tool("tdm_params", TdmDictionaryLookupTool)
    [tool] = resolve_tool(Tool(name="tdm_params", params={"meta": {"a": 1}}), state())  # type: ignore[arg-type]
    assert tool.meta == {"a": 1}
