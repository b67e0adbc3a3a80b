"""Each event becomes a chat message once: the cache by event id stays right when a
condensation changes the view, and a resumed history sends the same messages."""

from __future__ import annotations

from ohtui.sdk.agent.condensation import CondensedHistory
from ohtui.sdk.agent.history import ChatHistory
from ohtui.sdk.context.view import View
from ohtui.sdk.event import ActionEvent, Condensation, MessageEvent, ObservationEvent
from ohtui.sdk.event.base import Event
from ohtui.sdk.llm import Message, MessageToolCall, TextContent
from ohtui.sdk.llm.wire import EncodedMessage
from ohtui.sdk.tool.builtins import ThinkAction, ThinkObservation


def user(text: str) -> MessageEvent:
    return MessageEvent(
        source="user", llm_message=Message(role="user", content=[TextContent(text=text)])
    )


def think_pair(n: int, calls: int = 1) -> list[Event]:
    """One response with `calls` think calls, then their observations."""
    actions = []
    for i in range(calls):
        call = MessageToolCall(id=f"c{n}-{i}", name="think", arguments='{"thought": "t"}')
        actions.append(
            ActionEvent(
                action=ThinkAction(thought=f"thought {n}.{i}"),
                tool_name="think",
                tool_call_id=call.id,
                tool_call=call,
                llm_response_id=f"r{n}",
                thought=[TextContent(text=f"step {n}")] if i == 0 else [],
            )
        )
    observations: list[Event] = [
        ObservationEvent(
            action_id=a.id,
            tool_name="think",
            tool_call_id=a.tool_call_id,
            observation=ThinkObservation(),
        )
        for a in actions
    ]
    return [*actions, *observations]


def fresh(events: list[Event]) -> list[dict]:
    """The messages of `events`, converted from scratch."""
    return [dict(m) for m in ChatHistory().update(View.from_events(events).events)]


def test_messages_are_encoded_and_never_edited() -> None:
    events: list[Event] = [user("go"), *think_pair(1, calls=3)]
    history = CondensedHistory()
    first = history.messages(events[:2])
    kept = first[-1]
    messages = history.messages(events)  # two more calls join the same response
    assert all(isinstance(m, EncodedMessage) for m in messages)
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["c1-0", "c1-1", "c1-2"]
    assert [c["id"] for c in kept["tool_calls"]] == ["c1-0"]  # the earlier one is unchanged
    assert [dict(m) for m in messages] == fresh(events)


def test_cache_survives_condensation_and_forgets_what_left_the_view() -> None:
    events: list[Event] = [user("task")]
    for n in range(1, 6):
        events += think_pair(n)
    history = CondensedHistory()
    before = history.messages(events)
    by_tool_call = {m.get("tool_call_id"): m for m in before if m.get("tool_call_id")}
    forgotten = {e.id for e in events[1:5]}  # steps 1 and 2
    events.append(Condensation(forgotten_event_ids=forgotten, summary="S", summary_offset=1))
    events += think_pair(6)
    after = history.messages(events)
    assert [dict(m) for m in after] == fresh(events)
    assert "S" in str(after[1]["content"])
    # The events still in the view kept their message objects (and their cached JSON).
    assert after[-3] is not None and by_tool_call["c3-0"] in after
    assert all(m is not by_tool_call.get("c1-0") for m in after)
    cached_ids = set(history._cache._messages)
    assert not cached_ids & forgotten


def test_resumed_history_sends_the_same_messages() -> None:
    events: list[Event] = [user("task")]
    for n in range(1, 8):
        events += think_pair(n, calls=2)
    forgotten = {e.id for e in events[1:9]}
    events.append(Condensation(forgotten_event_ids=forgotten, summary="S", summary_offset=1))
    events += think_pair(8)
    live = CondensedHistory()
    for stop in range(1, len(events) + 1):  # step by step, as a run sees them
        live.messages(events[:stop])
    resumed = CondensedHistory()  # one read of the whole log, as after a restart
    assert [dict(m) for m in resumed.messages(events)] == [dict(m) for m in live.messages(events)]
