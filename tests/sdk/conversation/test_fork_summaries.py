"""Forks in the store: a fork's listing row names its parent (`ConversationSummary.forked_from`
/ `forked_at`), and a fork under a saved id is refused as taken."""

from __future__ import annotations

from pathlib import Path

import pytest

from ohtui.sdk import LLM, Agent, Conversation, LocalConversation, MessageEvent
from ohtui.sdk.conversation.impl.forking import ConversationIdTakenError
from ohtui.sdk.conversation.store import ConversationStore


def saved(llm: LLM, workspace: Path, persistence_dir: Path) -> LocalConversation:
    conversation = Conversation(
        agent=Agent(llm=llm, tools=[]),
        workspace=workspace,
        persistence_dir=persistence_dir,
        visualizer=None,
    )
    assert isinstance(conversation, LocalConversation)
    conversation.send_message("first question about pelicans")
    conversation.send_message("second question about pelicans")
    return conversation


def test_every_listing_of_the_store_says_which_conversation_a_fork_came_from(
    llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    source = saved(llm, workspace, persistence_dir)
    first = next(e.id for e in source.state.events if isinstance(e, MessageEvent))
    whole = source.fork(title="whole copy")
    branch = source.fork(title="branch copy", from_event_id=first)
    for conversation in (source, whole, branch):
        conversation.close()
    store = ConversationStore(persistence_dir)
    try:
        listed = {s.id: s for s in store.list_summaries()}
        assert (listed[source.id.hex].forked_from, listed[source.id.hex].forked_at) == (None, None)
        assert (listed[whole.id.hex].forked_from, listed[whole.id.hex].forked_at) == (
            source.id.hex,
            None,
        )
        assert (listed[branch.id.hex].forked_from, listed[branch.id.hex].forked_at) == (
            source.id.hex,
            first,
        )
        [found] = store.find(branch.id.hex[:12])
        assert (found.forked_from, found.forked_at) == (source.id.hex, first)
        page = store.summaries_page(query="pelicans")
        by_id = {s.id: s for s in page.rows}
        assert set(by_id) == {source.id.hex, whole.id.hex, branch.id.hex}
        assert by_id[branch.id.hex].forked_at == first
        assert set(page.snippets) == set(by_id)  # the snippet column still lines up
        hits = {h.summary.id: h for h in store.search("pelicans")}
        assert hits[whole.id.hex].summary.forked_from == source.id.hex
        assert "pelicans" in hits[branch.id.hex].snippet
    finally:
        store.close()


def test_a_fork_under_the_id_of_another_saved_conversation_is_refused_as_taken(
    llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    source = saved(llm, workspace, persistence_dir)
    other = saved(llm, workspace, persistence_dir)
    try:
        with pytest.raises(ConversationIdTakenError, match=other.id.hex):
            source.fork(conversation_id=other.id)
        with pytest.raises(ConversationIdTakenError):
            source.fork(conversation_id=source.id)
        assert len(other.state.events) == 3  # untouched
    finally:
        source.close()
        other.close()
