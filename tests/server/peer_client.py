"""Drive `ohtui serve` with the real openhands-sdk 1.58 RemoteConversation (notes statement 26).

Runs under the peer venv's Python (OHTUI_PEER_PYTHON), never under ohtui's:
    python peer_client.py HOST API_KEY LLM_BASE_URL WORKING_DIR
The test scripts the LLM replies in the order this script needs them. Prints one JSON object
with what each step saw; logs are captured so the test can look for ws_event_processing_error.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
import traceback

os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name}: {record.getMessage()}")


def main() -> None:
    host, api_key, llm_url, working_dir = sys.argv[1:5]
    logs = Collect()
    logging.getLogger().addHandler(logs)
    logging.getLogger().setLevel(logging.INFO)

    from openhands.sdk import LLM, Agent, Conversation, Tool
    from openhands.sdk.event import ActionEvent, MessageEvent, UserRejectObservation
    from openhands.sdk.security.confirmation_policy import AlwaysConfirm
    from openhands.sdk.workspace import RemoteWorkspace
    from openhands.tools.terminal import TerminalTool  # noqa: F401  (registers "terminal")
    from pydantic import SecretStr

    result: dict[str, object] = {}
    llm = LLM(
        model="openai/test-model",
        base_url=llm_url,
        api_key=SecretStr("sk-peer-0123456789abcdef"),
        usage_id="agent",
        num_retries=0,
    )
    agent = Agent(llm=llm, tools=[Tool(name="terminal")])
    workspace = RemoteWorkspace(host=host, working_dir=working_dir, api_key=api_key)
    started = time.perf_counter()
    conversation = Conversation(agent=agent, workspace=workspace)
    result["created_seconds"] = round(time.perf_counter() - started, 3)
    result["id"] = str(conversation.id)
    try:
        # 1. send + run -> finished
        conversation.send_message("hello")
        conversation.run()
        result["status_after_run"] = str(conversation.state.execution_status.value)
        result["last_agent_text"] = _last_agent_text(conversation.state.events, MessageEvent)

        # 2. confirm mode: reject
        conversation.set_confirmation_policy(AlwaysConfirm())
        conversation.send_message("run echo a")
        conversation.run()
        result["status_waiting"] = str(conversation.state.execution_status.value)
        result["pending_action"] = any(
            isinstance(e, ActionEvent) for e in conversation.state.events
        )
        conversation.reject_pending_actions("not that")
        _wait(lambda: any(isinstance(e, UserRejectObservation) for e in conversation.state.events))
        result["rejected"] = [
            e.rejection_reason
            for e in conversation.state.events
            if isinstance(e, UserRejectObservation)
        ]
        conversation.run()
        result["status_after_reject_run"] = str(conversation.state.execution_status.value)

        # 3. confirm mode: accept (run the pending action)
        conversation.send_message("run echo b")
        conversation.run()
        result["status_waiting_2"] = str(conversation.state.execution_status.value)
        conversation.run()
        result["status_after_accept"] = str(conversation.state.execution_status.value)
        result["observations"] = [
            type(e).__name__
            for e in conversation.state.events
            if type(e).__name__ == "ObservationEvent"
        ]

        # 4. pause (an idle conversation: one with a new message), ask_agent, title
        conversation.send_message("wait")
        conversation.pause()
        _wait(lambda: conversation.state.execution_status.value == "paused")
        result["status_after_pause"] = str(conversation.state.execution_status.value)
        result["ask_agent"] = conversation.ask_agent("what did you do?")
        result["title"] = conversation.generate_title()
        result["stats_usages"] = sorted(conversation.state.stats.usage_to_metrics)
        result["event_kinds"] = [type(e).__name__ for e in conversation.state.events]
    except Exception:
        result["error"] = traceback.format_exc()
    finally:
        conversation.close()
    result["errors_logged"] = [m for m in logs.messages if "ws_event_processing_error" in m]
    result["warnings"] = [m for m in logs.messages if "error" in m.lower()][:20]
    print("RESULT " + json.dumps(result))


def _last_agent_text(events: object, message_type: type) -> str | None:
    for event in reversed(list(events)):  # type: ignore[call-overload]
        if isinstance(event, message_type) and event.source == "agent":
            return "".join(getattr(c, "text", "") for c in event.llm_message.content)
    return None


def _wait(predicate: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.05)


if __name__ == "__main__":
    main()
