"""The model's View of a long saved conversation holds where its events are, not the events.

A View of a resumed 10,000-event conversation held every event parsed (~32 MB), though the
log keeps only a bounded page cache; now it holds log indexes and reads events again when
they are looked at, so what a long conversation keeps in memory is bounded.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from condense_events import action, history, observation, user
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM, Agent, Conversation, LocalConversation
from ohtui.sdk.context.view import View, ViewEvents
from ohtui.sdk.conversation import event_store
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.condenser import Condensation, CondensationSummaryEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent

CACHED = 64
"""Events the log keeps parsed, in this test (a quicker stand-in for its 1,024)."""
NOTES = 5 * CACHED


def open_conversation(
    llm: LLM, workspace: Path, persistence_dir: Path, **kw: object
) -> LocalConversation:
    return Conversation(
        agent=Agent(llm=llm, tools=[]),
        workspace=workspace,
        persistence_dir=persistence_dir,
        visualizer=None,
        **kw,  # type: ignore[arg-type]
    )


def live_message_events() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, MessageEvent))


def test_a_resumed_long_conversation_runs_without_holding_its_events(
    llm: LLM,
    llm_server: ScriptedLLMServer,
    workspace: Path,
    persistence_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(event_store, "CACHED_EVENTS", CACHED)
    conv = open_conversation(llm, workspace, persistence_dir)
    conv.send_message("start")
    for i in range(NOTES):
        conv.state.append_event(user(f"note {i}"), durable=False)
    conv.state.events.flush()
    conversation_id = conv.id
    conv.close()
    del conv

    resumed = open_conversation(llm, workspace, persistence_dir, conversation_id=conversation_id)
    try:
        llm_server.reply_text("Read them all.")
        resumed.send_message("sum up")
        resumed.run()
        sent = llm_server.requests[-1]["messages"]
        assert [m["content"] for m in sent[-2:]] == [f"note {NOTES - 1}", "sum up"]
        assert len(sent) == NOTES + 3  # the system prompt, "start", the notes, "sum up"

        view = resumed.state.view
        assert isinstance(view.events, ViewEvents)
        assert len(view) == NOTES + 4  # the system prompt, "start", the notes, "sum up", the answer
        assert view.events.held == 0  # every event is read from the log on use
        assert view[-1].id == resumed.state.events[-1].id
        # The log's page cache is all that holds parsed events (the agent's view too).
        assert resumed.state.events.cached <= CACHED
        assert live_message_events() <= CACHED + 8
    finally:
        resumed.close()


class Log(list[Event]):
    """A branch of a log as the View sees one (each event where it is in the log)."""

    @property
    def log(self) -> Log:
        return self

    def log_index(self, position: int) -> int:
        return position


def test_a_log_backed_view_matches_a_list_view_through_condensations() -> None:
    events = history(6)
    first = Condensation(
        forgotten_event_ids={events[2].id, events[3].id}, summary="S", summary_offset=2
    )
    log = Log([*events, first, user("more"), action("x"), observation("x")])
    lazy, plain = View.from_events(log), View.from_events(list(log))
    assert isinstance(lazy.events, ViewEvents) and not isinstance(plain.events, ViewEvents)
    assert lazy.events == plain.events and plain.events == lazy.events
    assert lazy.event_ids() == [e.id for e in plain.events]
    assert lazy.events.held == 1  # only the summary, which is not in the log
    assert isinstance(lazy[2], CondensationSummaryEvent)
    tail = lazy[3:]
    assert isinstance(tail, ViewEvents) and tail == plain[3:]
    assert list(reversed(lazy.events)) == list(reversed(plain.events))
    assert lazy.manipulation_indices == plain.manipulation_indices
    assert lazy.protected_prefix == plain.protected_prefix

    second = Condensation(
        forgotten_event_ids={lazy[2].id, lazy[3].id}, summary="T", summary_offset=2
    )
    lazy.append_event(second)
    plain.append_event(second)
    assert lazy.events == plain.events
    assert [e.summary for e in lazy.events if isinstance(e, CondensationSummaryEvent)] == ["T"]
