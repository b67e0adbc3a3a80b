"""Fork and navigate on `ohtui serve` with the real openhands-sdk 1.58 RemoteConversation.

Runs under the peer venv's Python (OHTUI_PEER_PYTHON), never under ohtui's:
    python peer_tree_client.py HOST API_KEY LLM_BASE_URL WORKING_DIR
The test scripts the LLM replies in the order this script needs them (the server titles
the conversation first, then three turns). Prints one
JSON object with what each step saw.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import traceback

os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def main() -> None:
    host, api_key, llm_url, working_dir = sys.argv[1:5]
    errors: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "ws_event_processing_error" in record.getMessage():
                errors.append(record.getMessage())

    logging.getLogger().addHandler(Collect(logging.DEBUG))

    import httpx
    from openhands.sdk import LLM, Agent, Conversation, Tool
    from openhands.sdk.event import MessageEvent
    from openhands.sdk.workspace import RemoteWorkspace
    from openhands.tools.terminal import TerminalTool  # noqa: F401  (registers "terminal")
    from pydantic import SecretStr

    llm = LLM(
        model="openai/test-model",
        base_url=llm_url,
        api_key=SecretStr("sk-peer-0123456789abcdef"),
        usage_id="agent",
        num_retries=0,
    )
    agent = Agent(llm=llm, tools=[Tool(name="terminal")])
    workspace = RemoteWorkspace(host=host, working_dir=working_dir, api_key=api_key)
    conversation = Conversation(agent=agent, workspace=workspace)
    result: dict[str, object] = {"id": str(conversation.id)}
    forks = []

    def texts(events: object) -> list[str]:
        return [
            "".join(getattr(c, "text", "") for c in e.llm_message.content)
            for e in events  # type: ignore[attr-defined]
            if isinstance(e, MessageEvent)
        ]

    def nodes(events: object) -> list[str]:
        return [e.id for e in events if type(e).__name__ != "ConversationStateUpdateEvent"]  # type: ignore[attr-defined]

    try:
        conversation.send_message("one")
        conversation.run()
        ids = [e.id for e in conversation.state.events if isinstance(e, MessageEvent)]
        first_answer = ids[1]

        whole = conversation.fork(title="Copy", tags={"topic": "copy"})
        forks.append(whole)
        info = whole.state.refresh_from_server()
        result["whole"] = {
            k: info.get(k)
            for k in ("title", "tags", "forked_from_conversation_id", "forked_from_event_id")
        }
        # Less the per-field state updates the socket gave the source (sync, not history).
        result["whole_same_events"] = nodes(whole.state.events) == nodes(conversation.state.events)

        branch = conversation.fork(from_event_id=ids[0])
        forks.append(branch)
        result["branch_leaf"] = branch.state.refresh_from_server()["leaf_event_id"] == ids[0]
        result["branch_texts"] = texts(branch.state.events)
        branch.send_message("two, in the fork")
        branch.run()
        result["branch_status"] = branch.state.execution_status.value
        result["branch_texts_after"] = texts(branch.state.events)

        conversation.navigate_to(first_answer)
        result["leaf_after_navigate"] = (
            conversation.state.refresh_from_server()["leaf_event_id"] == first_answer
        )
        conversation.send_message("two, again")
        conversation.run()
        last = [e for e in conversation.state.events if isinstance(e, MessageEvent)]
        result["sibling_parent"] = last[-2].parent_id == first_answer

        for call, body in [
            ("fork", {"from_event_id": "no-such-event"}),
            ("fork", {"id": str(conversation.id)}),
            ("navigate", {"event_id": "no-such-event"}),
        ]:
            try:
                if call == "fork":
                    conversation.fork(
                        from_event_id=body.get("from_event_id"),
                        conversation_id=body.get("id"),
                    )
                else:
                    conversation.navigate_to(body["event_id"])
                result[f"{call} {body}"] = "accepted"
            except httpx.HTTPStatusError as exc:
                result[f"{call} {body}"] = exc.response.status_code
    except Exception:
        result["error"] = traceback.format_exc()
    finally:
        for fork in forks:
            fork.close()
        conversation.close()
    result["errors_logged"] = errors
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
