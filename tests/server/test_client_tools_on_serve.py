"""Client tools over a real `ohtui serve`: the specs go with the new conversation, the
server's agent offers them to the model, and the client's callbacks (one appended after
the start too) get the ActionEvent over the socket."""

from __future__ import annotations

from pathlib import Path

from llm_server import ScriptedLLMServer
from serve_helpers import attach
from server_process import ServerProcess

from ohtui.sdk.event import ActionEvent, Event
from ohtui.sdk.tool import ClientToolSpec

NAVIGATE = ClientToolSpec(
    name="navigate_to",
    description="Open a page of the UI.",
    parameters={
        "type": "object",
        "properties": {"route": {"type": "string"}},
        "required": ["route"],
    },
)


def test_a_client_tool_call_reaches_the_client(
    server: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_script.reply_tool_call("navigate_to", {"route": "/files"})
    llm_script.reply_text("done")
    first: list[Event] = []
    later: list[Event] = []
    conversation = attach(
        server, llm_script, tmp_path, callbacks=[first.append], client_tools=[NAVIGATE]
    )
    try:
        conversation._callbacks.append(later.append)
        conversation.send_message("go to the files page")
        conversation.run()
        with server.client() as client:
            final = client.get(f"/api/conversations/{conversation.id}/agent_final_response")
    finally:
        conversation.close()
    assert final.json() == {"response": "done"}
    offered = [t["function"]["name"] for t in llm_script.requests[-2]["tools"]]
    assert "navigate_to" in offered
    for heard in (first, later):
        actions = [e for e in heard if isinstance(e, ActionEvent)]
        assert [a.tool_name for a in actions] == ["navigate_to"]
        assert actions[0].action is not None
        assert actions[0].action.model_dump(exclude={"kind"}) == {"route": "/files"}
