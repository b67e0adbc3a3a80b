"""The picker's listing of an agent server's conversations (conversations/search)."""

from __future__ import annotations

import uuid

from fake_agent_server import FakeAgentServer
from pydantic import SecretStr

from ohtui.opening import Target
from ohtui.remote_opening import find_remote_target
from ohtui.sdk import LLM, Agent, Conversation, RemoteWorkspace, Tool
from ohtui.tui.listing_source import RemoteListing


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
        listing = RemoteListing(lambda: workspace)
        rows = listing.summaries()
        assert [r.id for r in rows] == [conversation.id.hex]
        assert rows[0].title == "Fix the login bug"
        assert rows[0].workspace == "/tmp/w"
        assert rows[0].model == "openai/test-model"
        assert listing.summaries(workspace="/elsewhere") == []
        assert [h.summary.id for h in listing.search("login", None, 10)] == [rows[0].id]
        assert listing.search("logout", None, 10) == []
        preview = listing.recent_events(rows[0].id, 12)
        assert "MessageEvent" in [e.kind for e in preview]
        assert listing.cost(rows[0].id) == 0.0
        listing.rename(rows[0].id, "Renamed on the server")
        assert listing.summaries()[0].title == "Renamed on the server"
        prefix = conversation.id.hex[:6]
        assert find_remote_target(workspace, Target(resume_id=prefix)) == conversation.id
        assert find_remote_target(workspace, Target(new_id=str(uuid.UUID(int=1)))) == uuid.UUID(
            int=1
        )
        listing.delete(conversation.id.hex)
        assert listing.summaries() == []
