"""The View: condensations applied to the log, never changing it."""

from __future__ import annotations

from condense_events import action, agent, history, observation, system, user

from ohtui.sdk.context.view import IncrementalView, View, summary_event_id
from ohtui.sdk.event.condenser import Condensation, CondensationRequest, CondensationSummaryEvent
from ohtui.sdk.event.user_action import PauseEvent


def test_only_llm_convertible_events_are_in_the_view() -> None:
    events = [system(), user("hi"), PauseEvent(), agent("hello")]
    view = View.from_events(events)
    assert [e.id for e in view.events] == [events[0].id, events[1].id, events[3].id]


def test_a_condensation_forgets_events_and_puts_its_summary_at_the_offset() -> None:
    events = history(3)
    forgotten = {events[2].id, events[3].id}
    condensation = Condensation(forgotten_event_ids=forgotten, summary="S", summary_offset=2)
    view = View.from_events([*events, condensation])
    assert len(view) == len(events) - 2 + 1
    summary = view[2]
    assert isinstance(summary, CondensationSummaryEvent)
    assert summary.summary == "S"
    assert summary.id == summary_event_id(condensation)
    assert [e.id for e in view[3:]] == [e.id for e in events[4:]]
    assert view.most_recent_condensation is condensation
    assert len(events) == 8  # the log itself is untouched


def test_a_later_condensation_can_forget_the_earlier_summary() -> None:
    events = history(4)
    first = Condensation(forgotten_event_ids={events[2].id}, summary="one", summary_offset=2)
    view = View.from_events([*events, first])
    second = Condensation(
        forgotten_event_ids={view[2].id, view[3].id}, summary="two", summary_offset=2
    )
    view = View.from_events([*events, first, second])
    summaries = [e for e in view.events if isinstance(e, CondensationSummaryEvent)]
    assert [s.summary for s in summaries] == ["two"]


def test_requests_are_tracked_until_a_condensation_handles_them() -> None:
    events = [*history(1), CondensationRequest(focus="the API design")]
    view = View.from_events(events)
    assert view.unhandled_condensation_request
    assert view.condensation_focus == "the API design"
    view.append_event(Condensation(forgotten_event_ids=set()))
    assert not view.unhandled_condensation_request
    assert view.condensation_focus is None


def test_cut_points_never_split_a_call_from_its_result_or_a_batch() -> None:
    events = [
        system(),
        user("task"),
        action("a", "r1"),
        action("b", "r1"),
        observation("a"),
        observation("b"),
        agent("done"),
        action("c"),
    ]
    view = View.from_events(events)
    # between a/b, between b and its results, and before the unanswered call are not safe
    assert view.manipulation_indices == [0, 1, 2, 6, 7]
    assert view.find_next_index(3) == 6
    assert view.find_next_index(8) == 7  # never into the unanswered call


def test_the_protected_prefix_ends_after_the_first_user_message() -> None:
    assert View.from_events(history(2)).protected_prefix == 2
    assert View.from_events([system(), agent("x"), user("task")]).protected_prefix == 3


def test_the_incremental_view_reads_each_event_once_and_matches_a_full_replay() -> None:
    events = history(3)
    live = IncrementalView()
    live.update(events[:4])
    condensation = Condensation(
        forgotten_event_ids={events[2].id, events[3].id}, summary="S", summary_offset=2
    )
    events = [*events, condensation, user("more")]
    view = live.update(events)
    assert live.generation == 1
    assert [e.id for e in view.events] == [e.id for e in View.from_events(events).events]


def test_skipped_events_stay_out() -> None:
    events = history(1)
    view = View.from_events(events, skip={events[1].id})
    assert events[1].id not in {e.id for e in view.events}
