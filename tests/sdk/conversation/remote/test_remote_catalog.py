"""RemoteCatalog: an agent server's conversations (conversations/search), paged here."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from fake_agent_server import FakeAgentServer
from pydantic import SecretStr

from ohtui.opening import Target
from ohtui.opening.remote import find_remote_target
from ohtui.sdk import LLM, Agent, Conversation, RemoteWorkspace, Tool
from ohtui.sdk.conversation import ConversationSummary
from ohtui.sdk.conversation.impl.remote_catalog import RemoteCatalog


def test_the_servers_conversations_are_listed_searched_and_previewed() -> None:
    agent = Agent(
        llm=LLM(model="openai/test-model", api_key=SecretStr("k"), usage_id="agent"),
        tools=[Tool(name="terminal")],
    )
    with FakeAgentServer() as fake:
        workspace = RemoteWorkspace(host=fake.url, api_key="fake-key", working_dir="/tmp/w")
        conversation = Conversation(agent, workspace=workspace, visualizer=None, autotitle=False)
        conversation.run(poll_interval=0.1)
        conversation.set_title("Fix the login bug")
        conversation.close()
        listing = RemoteCatalog(lambda: workspace)
        rows = everything(listing)
        assert [r.id for r in rows] == [conversation.id.hex]
        assert rows[0].title == "Fix the login bug"
        assert rows[0].workspace == "/tmp/w"
        assert rows[0].model == "openai/test-model"
        assert rows[0].event_count == -1  # something was said; how much, the server does not say
        assert listing.searches == "titles"
        assert everything(listing, workspace="/elsewhere") == []
        assert [r.id for r in everything(listing, query="LOGIN")] == [rows[0].id]
        assert everything(listing, query="logout") == []
        assert listing.count(workspace=None, query="login", keep=None) == 1
        preview = listing.events(rows[0].id, 12, None)
        assert "MessageEvent" in [e.kind for e in preview.events]
        assert preview.start == 0 and preview.total >= len(preview.events)
        assert listing.cost(rows[0].id) == 0.0
        listing.rename(rows[0].id, "Renamed on the server")
        assert everything(listing)[0].title == "Renamed on the server"
        prefix = conversation.id.hex[:6]
        assert listing.find(prefix).id == conversation.id.hex
        assert listing.find(str(conversation.id)[:9]).id == conversation.id.hex
        latest = listing.latest("/tmp/w")
        assert latest is not None and latest.id == conversation.id.hex
        assert listing.latest("/elsewhere") is None
        assert find_remote_target(workspace, Target(resume_id=prefix)) == conversation.id
        assert find_remote_target(workspace, Target(new_id=str(uuid.UUID(int=1)))) == uuid.UUID(
            int=1
        )
        listing.delete(conversation.id.hex)
        assert everything(listing) == []


def test_the_servers_list_and_a_conversations_events_come_a_page_at_a_time() -> None:
    agent = Agent(
        llm=LLM(model="openai/test-model", api_key=SecretStr("k"), usage_id="agent"),
        tools=[Tool(name="terminal")],
    )
    with FakeAgentServer() as fake:
        workspace = RemoteWorkspace(host=fake.url, api_key="fake-key", working_dir="/tmp/w")
        ids = []
        for n in range(3):
            conversation = Conversation(
                agent, workspace=workspace, visualizer=None, autotitle=False
            )
            conversation.run(poll_interval=0.1)
            conversation.set_title(f"task {n}")
            conversation.close()
            ids.append(conversation.id.hex)
        listing = RemoteCatalog(workspace)
        pages = []
        after = None
        while True:
            page = listing.page(
                workspace=None, query="", after=after, limit=1, keep=None, index_first=True
            )
            pages.append([row.id for row in page.rows])
            if page.next is None:
                break
            after = page.next
        assert pages == [[i] for i in sorted(ids, key=pages_order(listing))]
        assert listing.count(workspace=None, query="", keep=None) == 3
        whole = listing.events(ids[0], 1000, None)
        assert whole.start == 0 and len(whole.events) >= 2
        last = listing.events(ids[0], 1, None)
        earlier = listing.events(ids[0], 1, last.start)
        assert last.start == whole.total - 1 and earlier.start == whole.total - 2
        both = listing.events(ids[0], 2, None)
        assert both.start == whole.total - 2 and both.events
        assert [e.id for e in earlier.events + last.events] == [e.id for e in both.events]


def pages_order(listing: RemoteCatalog) -> Callable[[str], int]:
    """The order the whole listing gives (newest first)."""
    order = [row.id for row in everything(listing)]
    return order.index


def everything(
    listing: RemoteCatalog, workspace: str | None = None, query: str = ""
) -> list[ConversationSummary]:
    """All rows of a listing, in one page."""
    return listing.page(
        workspace=workspace, query=query, after=None, limit=1000, keep=None, index_first=True
    ).rows
