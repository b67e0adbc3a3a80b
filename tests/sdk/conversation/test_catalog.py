"""LocalCatalog: the catalogue of the conversations saved in a local folder."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ohtui.sdk import LLM, Agent, Conversation, LocalConversation
from ohtui.sdk.conversation import ConversationNotFoundError, LocalCatalog
from ohtui.sdk.conversation.store import ConversationStore


def saved(llm: LLM, workspace: Path, persistence_dir: Path, said: str | None) -> str:
    conversation = Conversation(
        agent=Agent(llm=llm), workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )
    assert isinstance(conversation, LocalConversation)
    if said is not None:
        conversation.send_message(said)
    conversation.close()
    return conversation.id.hex


def test_the_local_catalogue_lists_finds_and_changes_saved_conversations(
    llm: LLM, tmp_path: Path, persistence_dir: Path
) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    talked = saved(llm, here, persistence_dir, "fix the walrus bug")
    silent = saved(llm, here, persistence_dir, None)
    elsewhere = saved(llm, there, persistence_dir, "elsewhere")
    catalog = LocalCatalog(persistence_dir)
    assert catalog.searches == "all messages"
    workspace = str(here.resolve())

    latest = catalog.latest(workspace)
    assert latest is not None and latest.id == talked  # the silent one is newer, yet empty
    assert catalog.latest(str(tmp_path / "nowhere")) is None
    assert catalog.find(talked[:8]).id == talked
    with pytest.raises(ConversationNotFoundError, match="No saved conversation"):
        catalog.find("zz")

    page = catalog.page(
        workspace=workspace, query="", after=None, limit=10, keep=silent, index_first=True
    )
    assert [row.id for row in page.rows] == [silent, talked]
    assert catalog.count(workspace=None, query="", keep=None) == 2
    done = threading.Event()
    catalog.index(done.set, lambda why: None, threading.Event())
    assert done.wait(10)
    hits = catalog.page(
        workspace=None, query="walrus", after=None, limit=10, keep=None, index_first=False
    )
    assert [row.id for row in hits.rows] == [talked] and "walrus" in hits.snippets[talked]
    events = catalog.events(talked, 10, None)
    assert events.total >= 1 and "MessageEvent" in [e.kind for e in events.events]
    assert catalog.cost(talked) == 0.0

    catalog.rename(elsewhere, "Renamed")
    store = ConversationStore(persistence_dir)
    try:
        kept_open = LocalCatalog(persistence_dir, store)
        titles = {row.id: row.title for row in kept_open.summaries()}
        assert titles[elsewhere] == "Renamed" and set(titles) == {talked, silent, elsewhere}
    finally:
        store.close()
    catalog.delete(elsewhere)
    assert elsewhere not in {row.id for row in catalog.summaries()}
