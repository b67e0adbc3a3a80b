"""The request bodies and query parameters of the server's routes, as pydantic models.

Field names are the OpenHands agent-server protocol's (StartConversationRequest,
SendMessageRequest, ... in notes §1.3); fields a client sends that we do not use (plugins,
hook_config, ...) are ignored, as OpenHands ignores unknown ones. `RequestModel.parse` is
the one place a request is checked: a request we cannot use raises `WireError` (HTTP 422)
whose sentence names the field and what it must be. The engine's own objects (agent, LLM,
policy, analyzer, secrets) are read by `ohtui.sdk.wire.agent_in`, called from here.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    PrivateAttr,
    StrictBool,
    StrictInt,
    StrictStr,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from ohtui.sdk.llm.llm import LLM
from ohtui.sdk.llm.message import Message
from ohtui.sdk.secret.secrets import SecretSource
from ohtui.sdk.security.analyzer import SecurityAnalyzerBase
from ohtui.sdk.security.confirmation_policy import ConfirmationPolicyBase
from ohtui.sdk.tool.client_tool import ClientToolSpec
from ohtui.sdk.wire.agent_in import (
    WireError,
    confirmation_policy_from_wire,
    llm_from_wire,
    secrets_from_wire,
    security_analyzer_from_wire,
)
from ohtui.sdk.wire.extensions import EVENT_FIELDS_PARAM
from ohtui.server.event_search import SORT_ORDERS, EventQuery, QueryError, naive, parse_limit

REJECTED = "User rejected the action."
"""The reason a rejection without one is given."""


def _truthy(value: Any) -> bool:
    # Flags were read with bool() before they had a model: a client sending 1 or "yes"
    # still means yes.
    return bool(value)


Truthy = Annotated[bool, BeforeValidator(_truthy)]
"""A flag: any JSON value, true or false as Python reads it."""


class RequestModel(BaseModel):
    """A request's fields; `parse` checks them and says what is wrong in one sentence."""

    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True)
    """Built on first use, as the engine's models are: the engine loads no slower."""

    WRONG: ClassVar[Mapping[str, str]] = {}
    """The sentence for a field that is missing or of the wrong type (`{value!r}`: what was
    sent); a field's own check says why in its error."""
    NOT_AN_OBJECT: ClassVar[str] = "the request body must be a JSON object"
    ERROR: ClassVar[type[ValueError]] = WireError
    """What `parse` raises (a ValueError: the routes answer 422)."""

    @classmethod
    def parse(cls, data: Any) -> Self:
        """The request in `data` (JSON data or query parameters); `ERROR` saying what is
        wrong with the first field that is."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise cls.ERROR(cls.sentence(exc.errors()[0])) from exc

    @classmethod
    def sentence(cls, error: ErrorDetails) -> str:
        """What a client is told about one validation error."""
        cause = (error.get("ctx") or {}).get("error")
        if error["type"] == "value_error" and cause is not None:
            return str(cause)  # a field's own check: its sentence
        if not error["loc"]:
            return cls.NOT_AN_OBJECT
        field = str(error["loc"][0])
        value = error["input"] if error["type"] != "missing" else None
        wrong = cls.WRONG.get(field)
        if wrong is not None:
            return wrong.format(value=value)
        return f"'{'.'.join(map(str, error['loc']))}': {error['msg']}"


# --- messages --------------------------------------------------------------------------


class SendMessageRequest(RequestModel):
    """A user message (`POST .../events`, `initial_message`, a socket frame)."""

    NOT_AN_OBJECT: ClassVar[str] = "the message must be an object with 'role' and 'content'"

    role: Any = "user"
    content: list[dict[str, Any]] = Field(default=None, validate_default=True)
    run: Truthy = False
    _message: Message = PrivateAttr()

    @field_validator("role")
    @classmethod
    def _user_only(cls, role: Any) -> Any:
        if role != "user":
            raise ValueError(f"only user messages can be sent, not '{role}' ones")
        return role

    @field_validator("content", mode="before")
    @classmethod
    def _parts(cls, content: Any) -> list[dict[str, Any]]:
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list) or not content:
            raise ValueError("'content' must be a non-empty list of {'type': 'text', 'text': ...}")
        parts = []
        for index, part in enumerate(content):
            if not isinstance(part, Mapping) or part.get("type") not in ("text", "image"):
                raise ValueError(f"content[{index}] must be a text or image part")
            parts.append({k: v for k, v in part.items() if k in ("type", "text", "image_urls")})
        return parts

    @model_validator(mode="after")
    def _readable(self) -> Self:
        try:
            self._message = Message.model_validate({"role": "user", "content": self.content})
        except ValueError as exc:
            raise ValueError(f"the message cannot be read: {exc}") from exc
        return self

    @property
    def message(self) -> Message:
        """The user message."""
        return self._message


def message_from_wire(payload: Any) -> tuple[Message, bool]:
    """A SendMessageRequest: (the user message, whether to run)."""
    request = SendMessageRequest.parse(payload)
    return request.message, request.run


# --- conversations ---------------------------------------------------------------------


def _conversation_id(value: Any) -> uuid.UUID | None:
    if value is None:
        return None
    try:
        return uuid.UUID(str(value))
    except ValueError as exc:
        raise ValueError(f"conversation_id '{value}' is not a UUID") from exc


def _tags(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ValueError("'tags' must be an object of string values")
    return {str(k): str(v) for k, v in value.items()}


def _policy(value: Any) -> ConfirmationPolicyBase | None:
    return None if value is None else confirmation_policy_from_wire(value)


class Workspace(RequestModel):
    """Where the conversation works: `{"working_dir": "..."}` (a LocalWorkspace)."""

    working_dir: Annotated[StrictStr, StringConstraints(strip_whitespace=True, min_length=1)]


class StartConversationRequest(RequestModel):
    """`POST /api/conversations`: a new conversation (or the one `conversation_id` names)."""

    WRONG: ClassVar[Mapping[str, str]] = {
        "agent": "'agent' must be an object with at least 'llm' and 'tools'",
        "workspace": "'workspace' must be an object with a 'working_dir' path",
        "max_iterations": "max_iterations must be a positive integer, not {value!r}",
        "initial_message": SendMessageRequest.NOT_AN_OBJECT,
    }

    conversation_id: Annotated[uuid.UUID | None, PlainValidator(_conversation_id)] = None
    agent: dict[str, Any] = Field(default=None, validate_default=True)
    """The agent as OpenHands JSON, keys and all (read by `agent_from_wire`)."""
    workspace: Workspace | None = Field(default=None, validate_default=True)
    max_iterations: Annotated[StrictInt, Field(gt=0)] | None = None
    stuck_detection: Truthy = True
    stuck_detection_thresholds: Any = None
    confirmation_policy: Annotated[ConfirmationPolicyBase | None, PlainValidator(_policy)] = None
    security_analyzer: Annotated[
        SecurityAnalyzerBase | None, PlainValidator(security_analyzer_from_wire)
    ] = None
    secrets: Annotated[dict[str, str | SecretSource], PlainValidator(secrets_from_wire)] = Field(
        default_factory=dict
    )
    tags: Annotated[dict[str, str], PlainValidator(lambda value: _tags(value or {}))] = Field(
        default_factory=dict
    )
    autotitle: Truthy = True
    initial_message: SendMessageRequest | None = None
    client_tools: list[ClientToolSpec] = Field(default_factory=list)
    """Tools the client carries out (`ohtui.sdk.tool.client_tool`), added to the agent's."""

    @field_validator("agent", mode="before")
    @classmethod
    def _sent(cls, agent: Any) -> Any:
        if agent is None:
            raise ValueError(
                "send the agent as 'agent' (agent_settings and agent_profile_id are not "
                "supported here)"
            )
        return agent

    @field_validator("workspace", mode="before")
    @classmethod
    def _given(cls, workspace: Any) -> Any:
        if workspace is None:
            raise ValueError(cls.WRONG["workspace"])
        return workspace

    @property
    def working_dir(self) -> str:
        """The folder the conversation works in, as sent (checked against the roots later)."""
        assert self.workspace is not None  # _given
        return self.workspace.working_dir


class UpdateConversationRequest(RequestModel):
    """`PATCH /api/conversations/{id}`: a new title, new tags, or both."""

    WRONG: ClassVar[Mapping[str, str]] = {"title": "'title' must be a string"}

    title: StrictStr | None = None
    tags: Annotated[dict[str, str] | None, PlainValidator(_tags)] = None

    @field_validator("title", mode="before")
    @classmethod
    def _not_null(cls, title: Any) -> Any:
        if title is None:
            raise ValueError(cls.WRONG["title"])
        return title


# --- the conversation tree -------------------------------------------------------------

FORK_TITLE_MAX = 200
"""The longest title a fork may be given (OpenHands' limit)."""


class ForkConversationRequest(RequestModel):
    """`POST .../fork`: a copy of the conversation (or of the branch up to an event)."""

    WRONG: ClassVar[Mapping[str, str]] = {
        "title": f"'title' must be a string of 1 to {FORK_TITLE_MAX} characters",
        "reset_metrics": "'reset_metrics' must be true or false",
        "from_event_id": "'from_event_id' must be an event id, or null for the whole conversation",
    }

    id: Annotated[uuid.UUID | None, PlainValidator(_conversation_id)] = None
    """The fork's id (None: a new one)."""
    title: StrictStr | None = None
    tags: Annotated[dict[str, str] | None, PlainValidator(_tags)] = None
    """The fork's tags (None: the source's)."""
    reset_metrics: bool = True
    from_event_id: StrictStr | None = None
    """Copy only the branch up to this event, which becomes the fork's HEAD (None: all)."""

    @field_validator("title")
    @classmethod
    def _short(cls, title: str | None) -> str | None:
        if title is not None and (not title.strip() or len(title) > FORK_TITLE_MAX):
            raise ValueError(cls.WRONG["title"])
        return title


class NavigateConversationRequest(RequestModel):
    """`POST .../navigate`: move HEAD to an event (null: an empty HEAD)."""

    WRONG: ClassVar[Mapping[str, str]] = {
        "event_id": "'event_id' must be an event id, or null for an empty HEAD"
    }

    event_id: StrictStr | None = None


# --- actions waiting for confirmation --------------------------------------------------


class ConfirmationResponseRequest(RequestModel):
    """`POST .../events/respond_to_confirmation`: accept or reject what waits."""

    WRONG: ClassVar[Mapping[str, str]] = {
        "accept": "'accept' must be true or false",
        "action_ids": "'action_ids' must be a list of action event ids",
    }

    accept: StrictBool
    reason: Any = None
    action_ids: list[StrictStr] | None = None

    @property
    def rejection_reason(self) -> str:
        """Why the actions are rejected: as sent, or the default sentence."""
        return str(self.reason or REJECTED)


# --- the conversation's settings -------------------------------------------------------


class SetConfirmationPolicyRequest(RequestModel):
    """`POST .../confirmation_policy`."""

    policy: Annotated[ConfirmationPolicyBase, PlainValidator(confirmation_policy_from_wire)] = (
        Field(default=None, validate_default=True)
    )


class SetSecurityAnalyzerRequest(RequestModel):
    """`POST .../security_analyzer` (null: none)."""

    security_analyzer: Annotated[
        SecurityAnalyzerBase | None, PlainValidator(security_analyzer_from_wire)
    ] = None


class UpdateSecretsRequest(RequestModel):
    """`POST .../secrets`."""

    secrets: Annotated[dict[str, str | SecretSource], PlainValidator(secrets_from_wire)] = Field(
        default_factory=dict
    )


class SwitchLLMRequest(RequestModel):
    """`POST .../switch_llm`: think with another LLM from the next call on."""

    llm: Annotated[LLM, PlainValidator(lambda value: llm_from_wire(value, "llm"))] = Field(
        default=None, validate_default=True
    )


class AskAgentRequest(RequestModel):
    """`POST .../ask_agent`: a side question, answered without recording anything."""

    WRONG: ClassVar[Mapping[str, str]] = {"question": "'question' must be a non-empty string"}

    question: StrictStr

    @field_validator("question")
    @classmethod
    def _not_blank(cls, question: str) -> str:
        if not question.strip():
            raise ValueError(cls.WRONG["question"])
        return question


class RestoreCheckpointRequest(RequestModel):
    """`POST .../checkpoints/restore` (ohtui's own): a checkpoint, or null for undo."""

    WRONG: ClassVar[Mapping[str, str]] = {
        "checkpoint_id": (
            "'checkpoint_id' must be a checkpoint's id (or a prefix of 4 or more "
            "characters), or null to undo the newest action not undone yet"
        )
    }

    checkpoint_id: StrictStr | None = None

    @field_validator("checkpoint_id")
    @classmethod
    def _not_blank(cls, checkpoint_id: str | None) -> str | None:
        if checkpoint_id is not None and not checkpoint_id.strip():
            raise ValueError(cls.WRONG["checkpoint_id"])
        return checkpoint_id


# --- query parameters ------------------------------------------------------------------


def _time(name: str) -> PlainValidator:
    def read(value: Any) -> datetime | None:
        if not value:
            return None
        try:
            return naive(datetime.fromisoformat(value))
        except ValueError as exc:
            raise ValueError(f"{name} must be an ISO 8601 time, not '{value}'") from exc

    return PlainValidator(read)


def _or_none(value: Any) -> Any:
    return value or None


class EventSearchRequest(RequestModel):
    """The query of `events/search` and `events/count`: filters, order and page."""

    ERROR: ClassVar[type[ValueError]] = QueryError
    WRONG: ClassVar[Mapping[str, str]] = {
        "sort_order": f"sort_order must be one of {', '.join(SORT_ORDERS)}, not '{{value}}'"
    }

    kind: Annotated[str | None, BeforeValidator(_or_none)] = None
    source: Annotated[str | None, BeforeValidator(_or_none)] = None
    body: Annotated[str | None, BeforeValidator(_or_none)] = None
    timestamp__gte: Annotated[datetime | None, _time("timestamp__gte")] = None
    timestamp__lt: Annotated[datetime | None, _time("timestamp__lt")] = None
    sort_order: Literal["TIMESTAMP", "TIMESTAMP_DESC"] = "TIMESTAMP"
    limit: Annotated[int, PlainValidator(parse_limit)] = Field(default=None, validate_default=True)
    page_id: str | None = None
    event_fields: str = Field(default="", alias=EVENT_FIELDS_PARAM)
    """"true": events keep ohtui's own fields (see wire.extensions)."""

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> EventSearchRequest:
        """From a request's query parameters (each name's last value)."""
        return cls.parse(dict(params))

    def query(self) -> EventQuery:
        """The filters."""
        return EventQuery(
            kind=self.kind,
            source=self.source,
            body=self.body,
            gte=self.timestamp__gte,
            lt=self.timestamp__lt,
            descending=self.sort_order == "TIMESTAMP_DESC",
            ohtui_fields=self.event_fields.lower() == "true",
        )
