"""Our events -> OpenHands 1.58 event JSON (what `ohtui serve` sends and pages).

An OpenHands client validates every frame with its own `Event` models, which forbid extra
fields: ohtui-only fields are dropped here, a few are renamed or reshaped (a terminal
observation's `timeout` is a bool there), and events with no OpenHands counterpart are not
sent at all (`event_to_wire` returns None), but for ohtui's own kinds (checkpoints), sent
only to a client that asked for ohtui's fields. Tools and actions OpenHands does not know travel
as its generic MCP tool shapes, so a client can still show them.
"""

from __future__ import annotations

from typing import Any

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.conversation_state import ConversationStateUpdateEvent
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.observation import ObservationEvent
from ohtui.sdk.event.llm_convertible.system import SystemPromptEvent

KNOWN_TOOLS: dict[str, tuple[str, str, str]] = {
    "terminal": ("TerminalTool", "TerminalAction", "TerminalObservation"),
    "file_editor": ("FileEditorTool", "FileEditorAction", "FileEditorObservation"),
    "task_tracker": ("TaskTrackerTool", "TaskTrackerAction", "TaskTrackerObservation"),
    "finish": ("FinishTool", "FinishAction", "FinishObservation"),
    "think": ("ThinkTool", "ThinkAction", "ThinkObservation"),
}
"""Our tool name -> OpenHands (tool kind, action kind, observation kind)."""
KNOWN_ACTIONS = {action for _, action, _ in KNOWN_TOOLS.values()}
KNOWN_OBSERVATIONS = {observation for _, _, observation in KNOWN_TOOLS.values()}
SENT_KINDS = {
    "MessageEvent",
    "SystemPromptEvent",
    "ActionEvent",
    "ObservationEvent",
    "UserRejectObservation",
    "AgentErrorEvent",
    "PauseEvent",
    "InterruptEvent",
    "ConversationStateUpdateEvent",
    "ConversationErrorEvent",
    "Condensation",
    "CondensationRequest",
    "CondensationSummaryEvent",
    "HookExecutionEvent",
    "LLMCompletionLogEvent",
}
"""Event kinds both sides have; any other of ours stays on this side of the wire."""
OHTUI_KINDS = frozenset({"CheckpointEvent", "CheckpointRestoreEvent"})
OHTUI_TOOL_KINDS = frozenset({"ClientToolAction", "ClientToolObservation"})
"""Actions and observations of ohtui's own, sent as they are to a client that reads ohtui's
fields (to others, as the MCP kinds OpenHands has for a tool it does not know)."""
"""Event kinds only ohtui has: sent only to a client that reads ohtui's own fields (an
OpenHands client validates every frame against its own kinds)."""
_EVENT_EXTRAS = {"ActionEvent": {"security_risk_reason"}, "CondensationRequest": {"focus"}}
OHTUI_FIELD_KINDS = frozenset(_EVENT_EXTRAS) | OHTUI_KINDS
"""Event kinds sent two ways: with ohtui's fields, and without (or not at all) for others
(see `event_to_wire`)."""
_FILE_EDITOR_EXTRAS = {"diff"}


def event_to_wire(event: Event, *, ohtui_fields: bool = False) -> dict[str, Any] | None:
    """`event` as OpenHands JSON (None values left out), or None when it is not sent.
    `ohtui_fields`: for a client that reads them (see wire.extensions), ours stay in, and
    ohtui's own kinds are sent as they are."""
    if event.kind in OHTUI_KINDS:
        return event.model_dump(mode="json", exclude_none=True) if ohtui_fields else None
    if event.kind not in SENT_KINDS:
        return None
    if isinstance(event, ConversationStateUpdateEvent):
        return state_update_to_wire(event.key, event.value, event_id=event.id, at=event.timestamp)
    data = event.model_dump(mode="json", exclude_none=True)
    if not ohtui_fields:
        for name in _EVENT_EXTRAS.get(event.kind, ()):
            data.pop(name, None)
    if isinstance(event, SystemPromptEvent):
        data["tools"] = [t for t in map(_tool_to_wire, data.get("tools", [])) if t is not None]
    elif isinstance(event, ActionEvent) and "action" in data:
        if not (ohtui_fields and data["action"].get("kind") in OHTUI_TOOL_KINDS):
            data["action"] = _action_to_wire(data["action"])
    elif isinstance(event, ObservationEvent) and not (
        ohtui_fields and data["observation"].get("kind") in OHTUI_TOOL_KINDS
    ):
        data["observation"] = _observation_to_wire(data["observation"], event.tool_name)
    return data


def state_update_to_wire(
    key: str, value: Any, *, event_id: str | None = None, at: str | None = None
) -> dict[str, Any]:
    """A ConversationStateUpdateEvent frame with an already JSON-ready `value`."""
    update = ConversationStateUpdateEvent(key=key, value=None)
    data = update.model_dump(mode="json", exclude_none=True)
    if event_id is not None:
        data["id"] = event_id
    if at is not None:
        data["timestamp"] = at
    data["value"] = _jsonable(value)
    return data


def streaming_delta(content: str | None, reasoning_content: str | None) -> dict[str, Any]:
    """A StreamingDeltaEvent frame (never persisted)."""
    frame: dict[str, Any] = {
        "id": _new_id(),
        "timestamp": _now(),
        "source": "agent",
        "kind": "StreamingDeltaEvent",
    }
    if content:
        frame["content"] = content
    if reasoning_content:
        frame["reasoning_content"] = reasoning_content
    return frame


def _tool_to_wire(tool: dict[str, Any]) -> dict[str, Any] | None:
    function = tool.get("function", tool)
    name = str(function.get("name", ""))
    kinds = KNOWN_TOOLS.get(name)
    if kinds is None:
        return None  # OpenHands has no generic tool definition; the prompt still lists it
    kind, action, observation = kinds
    return {
        "kind": kind,
        "description": str(function.get("description", "")),
        "action_type": action,
        "observation_type": observation,
    }


def _action_to_wire(action: dict[str, Any]) -> dict[str, Any]:
    if action.get("kind") in KNOWN_ACTIONS:
        return action
    data = {k: v for k, v in action.items() if k != "kind"}
    return {"data": data, "kind": "MCPToolAction"}


def _observation_to_wire(observation: dict[str, Any], tool_name: str) -> dict[str, Any]:
    kind = observation.get("kind")
    if kind == "TerminalObservation":
        return _terminal_observation(observation)
    if kind == "FileEditorObservation":
        return {k: v for k, v in observation.items() if k not in _FILE_EDITOR_EXTRAS}
    if kind in KNOWN_OBSERVATIONS:
        return observation
    return {
        "content": observation.get("content", []),
        "is_error": bool(observation.get("is_error", False)),
        "tool_name": tool_name,
        "kind": "MCPToolObservation",
    }


def _terminal_observation(observation: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        key: observation[key]
        for key in ("content", "is_error", "command", "exit_code", "kind")
        if key in observation
    }
    out["timeout"] = bool(observation.get("timed_out", False))
    metadata: dict[str, Any] = {"exit_code": observation.get("exit_code", -1)}
    if observation.get("working_dir"):
        metadata["working_dir"] = observation["working_dir"]
    out["metadata"] = metadata
    if observation.get("full_output_path"):
        out["full_output_save_dir"] = observation["full_output_path"]
    return out


def _jsonable(value: Any) -> Any:
    """A pydantic model or enum as JSON data; plain data unchanged."""
    from enum import Enum

    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    return value


def _new_id() -> str:
    import uuid

    return str(uuid.uuid4())


def _now() -> str:
    from datetime import datetime

    return datetime.now().astimezone().isoformat()
