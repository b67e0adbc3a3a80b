"""Tests of the tool framework: schemas, definitions, the registry, built-ins, observations
and security risks."""

from __future__ import annotations

import json
import operator
import types
from collections.abc import Sequence
from enum import Enum
from typing import Any, ClassVar, Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from ohtui.sdk.llm import ImageContent, TextContent
from ohtui.sdk.security import SecurityRisk
from ohtui.sdk.tool import (
    Action,
    Observation,
    Tool,
    ToolAnnotations,
    ToolArgumentError,
    ToolDefinition,
    ToolExecutor,
    list_registered_tools,
    register_tool,
    resolve_tool,
)
from ohtui.sdk.tool.builtins import (
    BUILT_IN_TOOL_CLASSES,
    BUILT_IN_TOOLS,
    DEFAULT_BUILT_IN_TOOLS,
    FinishAction,
    FinishObservation,
    FinishTool,
    ThinkAction,
    ThinkObservation,
    ThinkTool,
)

# Class and tool names carry a prefix: kinds are looked up by class name and the tool
# registry is global, so they must not collide with other test modules.


class TfwPriority(str, Enum):
    LOW = "low"
    HIGH = "high"


class TfwRange(BaseModel):
    start: int = Field(description="First line.")
    end: int | None = Field(default=None, description="Last line, inclusive.")


class TfwSearchAction(Action):
    """Search files."""

    pattern: str = Field(description="The regular expression.")
    path: str | None = Field(default=None, description="Where to search.")
    max_results: int = Field(default=20, ge=1, description="How many hits at most.")
    mode: Literal["files", "lines"] = "lines"
    priority: TfwPriority = TfwPriority.LOW
    ranges: list[TfwRange] = Field(default_factory=list, description="Line ranges.")
    window: TfwRange | None = None


class TfwSearchObservation(Observation):
    hits: int = 0


class TfwSearchExecutor(ToolExecutor[TfwSearchAction, TfwSearchObservation]):
    def __init__(self) -> None:
        self.closed = 0

    def __call__(self, action: TfwSearchAction, conversation: Any = None) -> TfwSearchObservation:
        return TfwSearchObservation.from_text(f"searched for {action.pattern}", hits=3)

    def close(self) -> None:
        self.closed += 1


class TfwSearchTool(ToolDefinition[TfwSearchAction, TfwSearchObservation]):
    created_with: ClassVar[list[tuple[Any, dict[str, Any]]]] = []

    @classmethod
    def create(cls, conv_state: Any, **params: Any) -> Sequence[TfwSearchTool]:
        cls.created_with.append((conv_state, params))
        return [
            cls(
                name="tfw_search",
                description="Search the workspace.",
                action_type=TfwSearchAction,
                observation_type=TfwSearchObservation,
                executor=TfwSearchExecutor(),
            )
        ]


def search_tool(read_only: bool = False) -> ToolDefinition[TfwSearchAction, TfwSearchObservation]:
    return ToolDefinition(
        name="tfw_search",
        description="Search the workspace.",
        action_type=TfwSearchAction,
        observation_type=TfwSearchObservation,
        annotations=ToolAnnotations(readOnlyHint=read_only),
        executor=TfwSearchExecutor(),
    )


def walk_keys(node: Any, path: str = "") -> list[tuple[str, str]]:
    """Every (path, key) of a JSON schema, except the names of properties."""
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for name, prop in value.items():
                    found.extend(walk_keys(prop, f"{path}.{name}"))
            else:
                found.append((path, key))
                found.extend(walk_keys(value, f"{path}/{key}"))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            found.extend(walk_keys(item, f"{path}[{i}]"))
    return found


def state() -> types.SimpleNamespace:
    return types.SimpleNamespace(agent_state={}, workspace=None)


# ------------------------------------------------------------------ schemas


def test_schema_is_self_contained_without_titles() -> None:
    schema = TfwSearchAction.to_mcp_schema()
    keys = {key for _, key in walk_keys(schema)}
    assert "$ref" not in keys
    assert "$defs" not in keys
    assert "title" not in keys
    assert "allOf" not in keys
    assert "$ref" not in json.dumps(schema)
    assert schema["type"] == "object"


def test_schema_inlines_nested_models() -> None:
    props = TfwSearchAction.to_mcp_schema()["properties"]
    item = props["ranges"]["items"]
    assert item["type"] == "object"
    assert item["properties"]["start"] == {"type": "integer", "description": "First line."}
    assert item["required"] == ["start"]
    assert props["window"]["type"] == "object"
    assert set(props["window"]["properties"]) == {"start", "end"}


def test_schema_keeps_descriptions_constraints_and_enums() -> None:
    props = TfwSearchAction.to_mcp_schema()["properties"]
    assert props["pattern"] == {"type": "string", "description": "The regular expression."}
    assert props["max_results"]["minimum"] == 1
    assert props["max_results"]["default"] == 20
    assert props["mode"]["enum"] == ["files", "lines"]
    assert props["priority"]["enum"] == ["low", "high"]


def test_optional_fields_become_optional_plain_types() -> None:
    schema = TfwSearchAction.to_mcp_schema()
    assert schema["required"] == ["pattern"]
    path = schema["properties"]["path"]
    assert path["type"] == "string"
    assert path["description"] == "Where to search."
    assert "anyOf" not in path
    assert "default" not in path  # a null default is not advertised
    window = schema["properties"]["window"]
    assert "anyOf" not in window
    nested_end = window["properties"]["end"]
    assert nested_end["type"] == "integer"
    assert "anyOf" not in nested_end


def test_kind_is_not_a_parameter() -> None:
    schema = TfwSearchAction.to_mcp_schema()
    assert "kind" not in schema["properties"]
    assert "kind" not in schema.get("required", [])


def test_a_property_named_title_is_kept() -> None:
    class TfwTitledAction(Action):
        title: str = Field(description="The task title.")

    schema = TfwTitledAction.to_mcp_schema()
    assert schema["properties"] == {"title": {"type": "string", "description": "The task title."}}
    assert schema["required"] == ["title"]


def test_action_without_fields_has_an_empty_object_schema() -> None:
    class TfwEmptyAction(Action):
        pass

    schema = TfwEmptyAction.to_mcp_schema()
    assert schema["type"] == "object"
    assert schema["properties"] == {}


class TfwTaskItem(BaseModel):
    title: str
    notes: str = ""


class TfwNode(BaseModel):
    name: str
    children: list[TfwNode] = Field(default_factory=list)


def test_title_keys_inside_default_values_are_kept() -> None:
    class TfwPlanAction(Action):
        items: list[TfwTaskItem] = Field(default=[TfwTaskItem(title="Read the code")])

    default = TfwPlanAction.to_mcp_schema()["properties"]["items"]["default"]
    assert default == [{"title": "Read the code", "notes": ""}]


def test_recursive_models_do_not_crash_the_schema() -> None:
    class TfwTreeAction(Action):
        root: TfwNode

    try:
        schema = TfwTreeAction.to_mcp_schema()
    except ValueError as exc:  # a clear refusal would be acceptable too
        assert "TfwNode" in str(exc)
    else:
        assert "root" in schema["properties"]


# ------------------------------------------------------------------ openai tools


def test_to_openai_tool_shape() -> None:
    tool = search_tool().to_openai_tool()
    assert tool["type"] == "function"
    function = tool["function"]
    assert function["name"] == "tfw_search"
    assert function["description"] == "Search the workspace."
    parameters = function["parameters"]
    assert "security_risk" not in parameters["properties"]
    summary = parameters["properties"].pop("summary")
    assert summary["type"] == "string"
    assert "summary" not in parameters["required"]  # optional: the model may leave it out
    assert parameters == TfwSearchAction.to_mcp_schema()


def test_security_risk_is_added_to_tools_that_are_not_read_only() -> None:
    parameters = search_tool().to_openai_tool(add_security_risk_prediction=True)["function"][
        "parameters"
    ]
    risk = parameters["properties"]["security_risk"]
    assert risk["type"] == "string"
    assert risk["enum"] == ["LOW", "MEDIUM", "HIGH"]
    assert risk["description"]
    assert parameters["required"] == ["pattern", "security_risk"]


def test_security_risk_is_added_when_no_annotations() -> None:
    tool = ToolDefinition(name="tfw_plain", description="d", action_type=TfwSearchAction)
    assert not tool.is_read_only
    parameters = tool.to_openai_tool(add_security_risk_prediction=True)["function"]["parameters"]
    assert "security_risk" in parameters["required"]


def test_security_risk_is_not_added_to_read_only_tools() -> None:
    for tool in (search_tool(read_only=True), FinishTool(), ThinkTool()):
        assert tool.is_read_only
        parameters = tool.to_openai_tool(add_security_risk_prediction=True)["function"][
            "parameters"
        ]
        assert "security_risk" not in parameters["properties"]
        assert "security_risk" not in parameters.get("required", [])


def test_security_risk_is_not_added_twice() -> None:
    tool = search_tool()
    tool.to_openai_tool(add_security_risk_prediction=True)
    parameters = tool.to_openai_tool(add_security_risk_prediction=True)["function"]["parameters"]
    assert parameters["required"].count("security_risk") == 1
    assert "security_risk" not in TfwSearchAction.to_mcp_schema()["properties"]


# ------------------------------------------------------------------ arguments


def test_action_from_arguments_validates() -> None:
    action = search_tool().action_from_arguments(
        {"pattern": "def main", "ranges": [{"start": 1, "end": 9}], "priority": "high"}
    )
    assert isinstance(action, TfwSearchAction)
    assert action.pattern == "def main"
    assert action.ranges == [TfwRange(start=1, end=9)]
    assert action.priority is TfwPriority.HIGH
    assert action.path is None


def test_bad_argument_names_tool_and_field() -> None:
    with pytest.raises(ToolArgumentError) as info:
        search_tool().action_from_arguments({"pattern": "x", "max_results": "many"})
    message = str(info.value)
    assert "tfw_search" in message
    assert "max_results" in message
    assert "pattern" in message  # the expected parameters are listed
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value.__cause__, ValidationError)


def test_missing_argument_is_reported() -> None:
    with pytest.raises(ToolArgumentError, match=r"'tfw_search'.*pattern: Field required"):
        search_tool().action_from_arguments({})


def test_unknown_argument_is_reported() -> None:
    with pytest.raises(ToolArgumentError, match="colour"):
        search_tool().action_from_arguments({"pattern": "x", "colour": "red"})


def test_nested_bad_argument_has_its_path() -> None:
    with pytest.raises(ToolArgumentError, match=r"ranges\.0\.start"):
        search_tool().action_from_arguments({"pattern": "x", "ranges": [{"start": "one"}]})


def test_constraint_violation_is_reported() -> None:
    with pytest.raises(ToolArgumentError, match="max_results"):
        search_tool().action_from_arguments({"pattern": "x", "max_results": 0})


def test_actions_are_frozen_and_round_trip_through_the_base() -> None:
    action = TfwSearchAction(pattern="x", window=TfwRange(start=2))
    with pytest.raises(ValidationError):
        action.pattern = "y"  # type: ignore[misc]
    restored = Action.model_validate_json(action.model_dump_json())
    assert type(restored) is TfwSearchAction
    assert restored == action


# ------------------------------------------------------------------ execution


def test_tool_call_runs_the_executor() -> None:
    tool = search_tool()
    observation = tool(TfwSearchAction(pattern="TODO"))
    assert isinstance(observation, TfwSearchObservation)
    assert observation.text == "searched for TODO"
    assert observation.hits == 3
    tool.close()
    assert isinstance(tool.executor, TfwSearchExecutor)
    assert tool.executor.closed == 1


def test_tool_without_executor_cannot_run() -> None:
    tool = ToolDefinition(name="tfw_noexec", description="d", action_type=TfwSearchAction)
    with pytest.raises(NotImplementedError, match="tfw_noexec"):
        tool(TfwSearchAction(pattern="x"))
    tool.close()  # nothing to close, no error


def test_finish_tool_executes() -> None:
    tool = FinishTool()
    action = tool.action_from_arguments({"message": "Fixed the parser; tests pass."})
    assert isinstance(action, FinishAction)
    observation = tool(action)
    assert isinstance(observation, FinishObservation)
    assert observation.text == "Fixed the parser; tests pass."
    assert not observation.is_error
    assert tool.name == "finish"
    assert "message" in tool.to_openai_tool()["function"]["parameters"]["required"]


def test_think_tool_executes() -> None:
    tool = ThinkTool()
    action = tool.action_from_arguments({"thought": "Check the edge case first."})
    assert isinstance(action, ThinkAction)
    observation = tool(action)
    assert isinstance(observation, ThinkObservation)
    assert "logged" in observation.text
    assert tool.name == "think"


def test_built_in_tools() -> None:
    assert {cls().name for cls in DEFAULT_BUILT_IN_TOOLS} == {"finish", "think"}
    assert {cls().name for cls in BUILT_IN_TOOLS} == {"finish", "think"}  # the SDK's meaning
    assert {cls().name for cls in BUILT_IN_TOOL_CLASSES.values()} == {
        "finish",
        "think",
        "switch_llm",
    }
    with pytest.raises(ToolArgumentError, match="finish"):
        FinishTool().action_from_arguments({"msg": "wrong field"})


# ------------------------------------------------------------------ registry


def test_register_a_tool_definition_subclass() -> None:
    register_tool("tfw_subclass_tool", TfwSearchTool)
    conv_state = state()
    [tool] = resolve_tool(Tool(name="tfw_subclass_tool", params={"depth": 2}), conv_state)  # type: ignore[arg-type]
    assert isinstance(tool, TfwSearchTool)
    assert tool.name == "tfw_search"
    assert TfwSearchTool.created_with[-1] == (conv_state, {"depth": 2})
    assert "tfw_subclass_tool" in list_registered_tools()


def test_register_a_tool_instance_is_shared() -> None:
    instance = search_tool()
    register_tool("tfw_instance_tool", instance)
    [first] = resolve_tool(Tool(name="tfw_instance_tool"), state())  # type: ignore[arg-type]
    [second] = resolve_tool(Tool(name="tfw_instance_tool"), state())  # type: ignore[arg-type]
    assert first is instance
    assert second is instance


def test_a_factory_callable_is_rejected_with_what_to_do() -> None:
    def factory(conv_state: Any, **params: Any) -> list[ToolDefinition[Any, Any]]:
        return [search_tool()]

    with pytest.raises(TypeError, match=r"tfw_factory_tool.*create\(\) classmethod"):
        register_tool("tfw_factory_tool", factory)  # type: ignore[arg-type]
    assert "tfw_factory_tool" not in list_registered_tools()


def test_registering_again_replaces_the_tool() -> None:
    register_tool("tfw_replaced_tool", FinishTool())
    register_tool("tfw_replaced_tool", ThinkTool)
    [tool] = resolve_tool(Tool(name="tfw_replaced_tool"), state())  # type: ignore[arg-type]
    assert tool.name == "think"


def test_a_shared_instance_takes_no_parameters() -> None:
    register_tool("tfw_instance_params_tool", search_tool())
    with pytest.raises(ValueError, match=r"tfw_instance_params_tool.*\['depth'\]"):
        resolve_tool(Tool(name="tfw_instance_params_tool", params={"depth": 2}), state())  # type: ignore[arg-type]


def test_unknown_tool_lists_known_tools() -> None:
    register_tool("tfw_known_tool", FinishTool())
    with pytest.raises(ValueError, match="tfw_no_such_tool") as info:
        resolve_tool(Tool(name="tfw_no_such_tool"), state())  # type: ignore[arg-type]
    message = str(info.value)
    assert "tfw_known_tool" in message
    assert "terminal" in message  # built-ins are known too


def test_built_in_tool_names_are_listed() -> None:
    assert {"terminal", "file_editor", "task_tracker"} <= set(list_registered_tools())


def test_register_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        register_tool("", FinishTool())
    with pytest.raises(TypeError, match="tfw_bad"):
        register_tool("tfw_bad", 42)  # type: ignore[arg-type]
    assert "tfw_bad" not in list_registered_tools()


def test_tool_spec_validation() -> None:
    with pytest.raises(ValidationError):
        Tool(name="")
    spec = Tool(name="terminal", params={"timeout": 5})
    with pytest.raises(ValidationError):
        spec.name = "other"  # type: ignore[misc]
    assert Tool.model_validate_json(spec.model_dump_json()) == spec


# ------------------------------------------------------------------ observations


def test_observation_from_text() -> None:
    observation = FinishObservation.from_text("hello")
    assert observation.content == [TextContent(text="hello")]
    assert observation.text == "hello"
    assert observation.is_error is False
    assert list(observation.to_llm_content) == [TextContent(text="hello")]


def test_observation_from_text_with_extra_fields() -> None:
    observation = TfwSearchObservation.from_text("3 hits", hits=3)
    assert observation.hits == 3
    restored = Observation.model_validate_json(observation.model_dump_json())
    assert type(restored) is TfwSearchObservation
    assert restored == observation


def test_error_observation_content_is_prefixed_for_the_model() -> None:
    observation = FinishObservation.from_text("permission denied", is_error=True)
    content = list(observation.to_llm_content)
    assert len(content) == 2
    assert isinstance(content[0], TextContent)
    assert content[0].text.startswith("[The tool reported an error]")
    assert content[1] == TextContent(text="permission denied")
    assert observation.text == "permission denied"  # the prefix is only for the model
    assert "red" in str(observation.visualize.style)


def test_observation_text_skips_images() -> None:
    observation = FinishObservation(
        content=[
            TextContent(text="before "),
            ImageContent(image_urls=["data:image/png;base64,AAAA"]),
            TextContent(text="after"),
        ]
    )
    assert observation.text == "before after"
    assert list(observation.to_llm_content) == list(observation.content)


def test_empty_error_observation_has_no_prefix_only_content() -> None:
    observation = FinishObservation(is_error=True)
    assert list(observation.to_llm_content) == []


# ------------------------------------------------------------------ security risk


def test_security_risk_ordering() -> None:
    assert SecurityRisk.LOW < SecurityRisk.MEDIUM < SecurityRisk.HIGH
    assert SecurityRisk.HIGH > SecurityRisk.LOW
    assert SecurityRisk.MEDIUM <= SecurityRisk.MEDIUM
    assert SecurityRisk.MEDIUM >= SecurityRisk.LOW
    assert not SecurityRisk.HIGH < SecurityRisk.LOW
    assert max([SecurityRisk.MEDIUM, SecurityRisk.HIGH, SecurityRisk.LOW]) is SecurityRisk.HIGH
    assert sorted([SecurityRisk.HIGH, SecurityRisk.LOW, SecurityRisk.MEDIUM]) == [
        SecurityRisk.LOW,
        SecurityRisk.MEDIUM,
        SecurityRisk.HIGH,
    ]


@pytest.mark.parametrize("other", [SecurityRisk.LOW, SecurityRisk.MEDIUM, SecurityRisk.HIGH])
def test_unknown_risk_cannot_be_compared(other: SecurityRisk) -> None:
    with pytest.raises(ValueError, match="UNKNOWN"):
        _ = operator.lt(SecurityRisk.UNKNOWN, other)
    with pytest.raises(ValueError, match="UNKNOWN"):
        _ = other >= SecurityRisk.UNKNOWN
    with pytest.raises(ValueError, match="UNKNOWN"):
        other.is_riskier(SecurityRisk.UNKNOWN)


def test_security_risk_is_riskier() -> None:
    assert SecurityRisk.HIGH.is_riskier(SecurityRisk.MEDIUM)
    assert SecurityRisk.MEDIUM.is_riskier(SecurityRisk.MEDIUM)
    assert not SecurityRisk.MEDIUM.is_riskier(SecurityRisk.MEDIUM, reflexive=False)
    assert not SecurityRisk.LOW.is_riskier(SecurityRisk.HIGH)


def test_security_risk_compares_only_with_risks() -> None:
    with pytest.raises(TypeError):
        _ = SecurityRisk.LOW < "HIGH"
    assert SecurityRisk.LOW == "LOW"  # still a str enum for JSON
    assert str(SecurityRisk.HIGH) == "HIGH"
    assert SecurityRisk("MEDIUM") is SecurityRisk.MEDIUM


def test_security_risk_badge() -> None:
    badge = SecurityRisk.HIGH.visualize
    assert badge.plain.strip() == "HIGH"
    assert "red" in str(badge.style)
