"""A saved conversation's branches as listings show them (LocalCatalog.tree): its tips, newest
first, the active one, the user's last message on each, and when a fork was made."""

from __future__ import annotations

import time
from pathlib import Path

from ohtui.sdk import LLM, Agent, Conversation, LocalConversation, MessageEvent
from ohtui.sdk.conversation import LocalCatalog
from ohtui.sdk.conversation.branch_tips import tree_of_events, tree_shape
from ohtui.sdk.conversation.event_store import ROOT


def _conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> LocalConversation:
    conversation = Conversation(
        agent=Agent(llm=llm), workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )
    assert isinstance(conversation, LocalConversation)
    return conversation


def test_tips_newest_first_with_the_active_one_and_the_last_user_message(
    llm: LLM, tmp_path: Path, persistence_dir: Path
) -> None:
    conversation = _conversation(llm, tmp_path, persistence_dir)
    conversation.send_message("one")
    one = conversation.state.events[-1].id
    conversation.send_message("two")
    two = conversation.state.events[-1].id
    conversation.navigate_to(one)
    conversation.send_message("three")
    three = conversation.state.events[-1].id
    conversation.set_title("Tree")  # a state update: no node, never a tip
    catalog = LocalCatalog(persistence_dir)

    tree = catalog.tree(conversation.id.hex, None)
    assert [t.leaf_event_id for t in tree.tips] == [three, two]
    assert [t.last_user_message for t in tree.tips] == ["three", "two"]
    assert [t.active for t in tree.tips] == [True, False]
    assert tree.active is not None and tree.active.leaf_event_id == three
    assert tree.branch_points == 1 and tree.forked_at_time is None
    assert tree.tips[0].events == tree.tips[1].events

    conversation.navigate_to(two)
    moved = catalog.tree(conversation.id.hex, None)
    assert moved.active is not None and moved.active.leaf_event_id == two
    conversation.navigate_to(one)  # between tips: no branch is active
    assert catalog.tree(conversation.id.hex, None).active is None

    time.sleep(0.01)
    fork = conversation.fork(from_event_id=one)
    fork_tree = catalog.tree(fork.id.hex, one)
    assert [t.last_user_message for t in fork_tree.tips] == ["one"]
    assert fork_tree.forked_at_time is not None
    events = conversation.state.events
    forked_at = events[events.get_index(one)].timestamp
    assert fork_tree.forked_at_time.isoformat()[:19] == forked_at[:19]
    in_memory = tree_of_events(list(conversation.state.events), three)
    assert [t.leaf_event_id for t in in_memory.tips] == [three, two]
    assert in_memory.active is not None and in_memory.active.leaf_event_id == three
    fork.close()
    conversation.close()


def test_a_linear_conversation_has_one_branch(
    llm: LLM, tmp_path: Path, persistence_dir: Path
) -> None:
    conversation = _conversation(llm, tmp_path, persistence_dir)
    for text in ("a", "b", "c"):
        conversation.send_message(text)
    conversation.close()
    tree = LocalCatalog(persistence_dir).tree(conversation.id.hex, None)
    assert len(tree.tips) == 1 and tree.branch_points == 0
    assert tree.tips[0].active and tree.tips[0].last_user_message == "c"


def test_the_shape_of_a_log_older_than_the_tree_and_of_state_updates() -> None:
    # 0 root, 1 (state update) hangs from 0, 2's stored parent is 1 (an old log's NULL),
    # 3 and 4 branch from 2; 5 is a second root.
    shape = tree_shape(
        [None, None, None, 2, 2, ROOT],
        [True, False, True, True, True, True],
        [True, False, False, True, False, True],
    )
    assert shape.tips == [5, 4, 3]
    assert shape.branch_points == 1
    assert list(shape.depth) == [1, 0, 2, 3, 3, 1]
    assert list(shape.last_user) == [0, ROOT, 0, 3, 0, 5]


def test_the_preview_pages_through_the_active_branch(
    llm: LLM, tmp_path: Path, persistence_dir: Path
) -> None:
    conversation = _conversation(llm, tmp_path, persistence_dir)
    conversation.send_message("one")
    one = conversation.state.events[-1].id
    conversation.send_message("two")
    conversation.navigate_to(one)
    conversation.send_message("three")
    catalog = LocalCatalog(persistence_dir)

    def said(before: int | None = None, limit: int = 10) -> list[str]:
        page = catalog.events(conversation.id.hex, limit, before)
        return [e.text for e in page.events if isinstance(e, MessageEvent)]

    assert said() == ["one", "three"]
    page = catalog.events(conversation.id.hex, 1, None)
    assert page.total == 3 and page.start == 2  # system prompt, one, three
    assert said(before=2, limit=1) == ["one"]
    conversation.navigate_to(None)  # an emptied HEAD shows nothing
    assert catalog.events(conversation.id.hex, 10, None).events == []
    conversation.close()
