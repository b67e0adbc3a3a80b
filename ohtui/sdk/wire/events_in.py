"""OpenHands agent-server event JSON -> our events (what `RemoteConversation` reads).

The server's events carry fields ours do not have (a terminal observation's `metadata`...),
a few shaped differently (its terminal `timeout` is our `timed_out`, its tools are
described in its own words) and kinds we lack. Known differences are translated; any other
unknown field is dropped, field by field, as validation reports it; an unknown kind becomes a
`ForeignEvent` (an unknown tool's action or observation a `ForeignAction` /
`ForeignObservation`), so a frame never fails.
`StreamingDeltaEvent` frames are not events: `stream_chunk` turns them into token chunks.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any, get_args

from pydantic import ValidationError

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import SourceType
from ohtui.sdk.llm.streaming import LLMStreamChunk
from ohtui.sdk.utils.valid_text import valid_data, valid_text
from ohtui.sdk.wire.foreign import (  # the stand-ins' kinds must be defined to validate
    ForeignAction,  # noqa: F401
    ForeignEvent,
    ForeignObservation,  # noqa: F401
)

logger = logging.getLogger(__name__)

STREAMING_DELTA_KIND = "StreamingDeltaEvent"
REMOTE_STREAM_ID = ""
"""The response id given to streamed deltas: the server does not say which LLM response they
belong to, so a front end takes the next agent response as the one they built."""
_MAX_PASSES = 8
_BASE_FIELDS = ("id", "timestamp", "source", "kind", "parent_id")


def load_tools() -> None:
    """Import the built-in tools, so their action and observation kinds validate."""
    import ohtui.sdk.tool.builtins
    import ohtui.sdk.tools.file_editor
    import ohtui.sdk.tools.task_tracker
    import ohtui.sdk.tools.terminal  # noqa: F401


def is_streaming_delta(data: dict[str, Any]) -> bool:
    """Whether a frame is a (never persisted) streaming delta."""
    return data.get("kind") == STREAMING_DELTA_KIND


def stream_chunk(data: dict[str, Any]) -> LLMStreamChunk:
    """A streaming delta frame as a token chunk for the token callbacks."""
    return LLMStreamChunk(
        response_id=REMOTE_STREAM_ID,
        content=valid_text(str(data.get("content") or "")),
        reasoning_content=valid_text(str(data.get("reasoning_content") or "")),
    )


def event_from_wire(data: dict[str, Any]) -> Event:
    """One server event as ours; never raises for a well-formed JSON object. Its text is
    made valid: a "\\ud800" a server sends decodes to a lone surrogate (see valid_text)."""
    load_tools()
    data = valid_data(data)
    event = validate_leniently(Event, _translate(copy.deepcopy(data)))
    if not isinstance(event, Event):
        logger.debug("event of kind %r kept as foreign", data.get("kind"))
        return _foreign(data)
    return event


def validate_leniently(model: Any, data: dict[str, Any]) -> Any:
    """An instance of `model` (a pydantic class) from `data` (changed in place), dropping
    fields it lacks and standing in for unknown actions and observations; None when it
    still does not fit."""
    for _ in range(_MAX_PASSES):
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            if not _repair(data, exc):
                return None
    return None


def _foreign(data: dict[str, Any]) -> ForeignEvent:
    fields: dict[str, Any] = {
        "foreign_kind": str(data.get("kind") or "Unknown"),
        "data": {k: v for k, v in data.items() if k not in _BASE_FIELDS},
    }
    for name in ("id", "timestamp", "parent_id"):
        if isinstance(data.get(name), str):
            fields[name] = data[name]
    if data.get("source") in get_args(SourceType):
        fields["source"] = data["source"]
    return ForeignEvent(**fields)


def _repair(data: dict[str, Any], exc: ValidationError) -> bool:
    """Fix what the errors point at; False when nothing could be fixed."""
    changed = False
    for error in exc.errors():
        loc = tuple(error["loc"])
        if error["type"] == "extra_forbidden":
            changed |= _delete(data, loc)
        elif loc == ("source",) and data.get("source") != "environment":
            data["source"] = "environment"  # a source of theirs we lack (e.g. "hook")
            changed = True
        elif loc and loc[0] in _STAND_INS:
            part, (stand_in, make) = loc[0], _STAND_INS[loc[0]]
            value = data.get(part)
            if isinstance(value, dict) and value.get("kind") != stand_in:
                data[part] = make(value)
                changed = True
    return changed


def _delete(data: Any, loc: tuple[Any, ...]) -> bool:
    for part in loc[:-1]:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return False
    if isinstance(data, dict) and loc and loc[-1] in data:
        del data[loc[-1]]
        return True
    return False


def _foreign_action(action: dict[str, Any]) -> dict[str, Any]:
    fields = {k: v for k, v in action.items() if k != "kind"}
    return {"kind": "ForeignAction", "foreign_kind": str(action.get("kind", "?")), "data": fields}


def _foreign_observation(observation: dict[str, Any]) -> dict[str, Any]:
    content = observation.get("content")
    return {
        "kind": "ForeignObservation",
        "foreign_kind": str(observation.get("kind", "?")),
        "content": [c for c in content if isinstance(c, dict)] if isinstance(content, list) else [],
        "is_error": bool(observation.get("is_error", False)),
    }


_STAND_INS: dict[str, tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "action": ("ForeignAction", _foreign_action),
    "observation": ("ForeignObservation", _foreign_observation),
}
"""Parts of an event replaced by a stand-in when they do not validate as ours."""


# --- known differences -----------------------------------------------------------------------


def _translate(data: dict[str, Any]) -> dict[str, Any]:
    kind = data.get("kind")
    if kind == "ObservationEvent" and isinstance(data.get("observation"), dict):
        data["observation"] = _observation(data["observation"])
    elif kind == "SystemPromptEvent" and isinstance(data.get("tools"), list):
        data["tools"] = [_offered_tool(t) for t in data["tools"] if isinstance(t, dict)]
    elif kind == "ActionEvent" and isinstance(data.get("action"), dict):
        data["action"] = _mcp_action(data["action"], data.get("tool_name"))
    return data


def _mcp_action(action: dict[str, Any], tool_name: Any) -> dict[str, Any]:
    """Their MCP call holds only the arguments (the tool is the event's tool_name)."""
    if action.get("kind") == "MCPToolAction" and not action.get("tool"):
        return {**action, "tool": str(tool_name or "")}
    return action


def _observation(observation: dict[str, Any]) -> dict[str, Any]:
    if observation.get("kind") != "TerminalObservation":
        return observation
    out = dict(observation)
    out["timed_out"] = bool(out.pop("timeout", False))
    metadata = out.pop("metadata", None)
    if isinstance(metadata, dict) and isinstance(metadata.get("working_dir"), str):
        out["working_dir"] = metadata["working_dir"]
    out.pop("full_output_save_dir", None)  # a folder on the server, not one output file
    return out


def _offered_tool(tool: dict[str, Any]) -> dict[str, Any]:
    if "function" in tool or ("name" in tool and "kind" not in tool):
        return tool
    name = tool.get("title") or tool.get("name") or str(tool.get("kind", "?")).removesuffix("Tool")
    return {"name": str(name), "description": str(tool.get("description") or "")}
