"""The request models: each bad request is told in the sentence the routes always gave."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from ohtui.sdk.wire.agent_in import WireError
from ohtui.server.event_search import QueryError
from ohtui.server.requests import (
    AskAgentRequest,
    ConfirmationResponseRequest,
    EventSearchRequest,
    RequestModel,
    RestoreCheckpointRequest,
    SendMessageRequest,
    SetConfirmationPolicyRequest,
    StartConversationRequest,
    SwitchLLMRequest,
    UpdateConversationRequest,
    message_from_wire,
)

AGENT = {"kind": "Agent", "llm": {"model": "openai/gpt-4o"}, "tools": []}
START = {"agent": AGENT, "workspace": {"working_dir": "/work"}}


@pytest.mark.parametrize(
    ("model", "data", "sentence"),
    [
        (StartConversationRequest, {}, "send the agent as 'agent'"),
        (StartConversationRequest, {**START, "agent": 5}, "'agent' must be an object"),
        (StartConversationRequest, {**START, "workspace": {}}, "'workspace' must be an object"),
        (
            StartConversationRequest,
            {**START, "workspace": {"working_dir": "  "}},
            "'workspace' must be an object",
        ),
        (StartConversationRequest, {**START, "max_iterations": 0}, "not 0"),
        (StartConversationRequest, {**START, "max_iterations": True}, "not True"),
        (StartConversationRequest, {**START, "conversation_id": "xyz"}, "'xyz' is not a UUID"),
        (StartConversationRequest, {**START, "tags": [1]}, "'tags' must be an object"),
        (
            StartConversationRequest,
            {**START, "confirmation_policy": {"kind": "Maybe"}},
            "confirmation_policy: Unexpected kind",
        ),
        (
            StartConversationRequest,
            {**START, "initial_message": {"role": "assistant", "content": "x"}},
            "only user messages can be sent, not 'assistant' ones",
        ),
        (SendMessageRequest, "hi", "the message must be an object"),
        (SendMessageRequest, {}, "'content' must be a non-empty list"),
        (SendMessageRequest, {"content": [{"type": "audio"}]}, "content[0] must be a text"),
        (SendMessageRequest, {"content": [{"type": "text"}]}, "the message cannot be read"),
        (UpdateConversationRequest, {"title": None}, "'title' must be a string"),
        (UpdateConversationRequest, {"tags": None}, "'tags' must be an object"),
        (ConfirmationResponseRequest, {"accept": "yes"}, "'accept' must be true or false"),
        (
            ConfirmationResponseRequest,
            {"accept": True, "action_ids": ["a", 1]},
            "'action_ids' must be a list",
        ),
        (SetConfirmationPolicyRequest, {}, "confirmation_policy must be an object"),
        (SwitchLLMRequest, {}, "llm must be an object with a 'model'"),
        (AskAgentRequest, {"question": " "}, "'question' must be a non-empty string"),
        (RestoreCheckpointRequest, {"checkpoint_id": 4}, "'checkpoint_id' must be"),
    ],
)
def test_a_bad_request_is_told_in_a_sentence(
    model: type[RequestModel], data: Any, sentence: str
) -> None:
    with pytest.raises(WireError) as caught:
        model.parse(data)
    assert sentence in str(caught.value)
    assert "\n" not in str(caught.value) or "cannot be read" in sentence


def test_a_start_request_keeps_what_was_sent() -> None:
    cid = uuid.uuid4()
    request = StartConversationRequest.parse(
        {
            **START,
            "workspace": {"working_dir": " /work "},
            "conversation_id": cid.hex,
            "tags": {"team": 1},
            "stuck_detection": 0,
            "max_iterations": None,
            "plugins": [],  # an OpenHands field we do not use: ignored
            "initial_message": {"content": "go", "run": True},
        }
    )
    assert request.conversation_id == cid and request.working_dir == "/work"
    assert request.tags == {"team": "1"} and request.stuck_detection is False
    assert request.max_iterations is None and request.autotitle is True
    assert request.secrets == {} and request.confirmation_policy is None
    assert request.initial_message is not None and request.initial_message.run


def test_messages_and_answers() -> None:
    message, run = message_from_wire({"content": "hi", "run": 1})
    assert message.role == "user" and run is True
    answer = ConfirmationResponseRequest.parse({"accept": False})
    assert answer.rejection_reason == "User rejected the action." and answer.action_ids is None
    assert UpdateConversationRequest.parse({"tags": {"a": 2}}).tags == {"a": "2"}


def test_event_queries() -> None:
    with pytest.raises(QueryError, match="limit must be from 1 to 100, not 101"):
        EventSearchRequest.parse({"limit": "101"})
    asked = EventSearchRequest.parse(
        {"kind": "", "sort_order": "TIMESTAMP_DESC", "ohtui_fields": "TRUE", "page_id": "p"}
    )
    query = asked.query()
    assert query.kind is None and query.descending and query.ohtui_fields
    assert (asked.limit, asked.page_id) == (100, "p")
