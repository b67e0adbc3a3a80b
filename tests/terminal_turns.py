"""Engine conversations whose turns run one terminal command each, for tests that look at
what the commands changed (rewind, the session diff)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM, Agent, Conversation, LocalConversation, MessageEvent, Tool
from ohtui.sdk.security.confirmation_policy import NeverConfirm

Factory = Callable[..., LocalConversation]


def conversations(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    """Body of a `make_conversation` fixture: terminal-only agents that never ask; every
    conversation made is closed afterwards."""
    made: list[LocalConversation] = []

    def make(**kwargs: Any) -> LocalConversation:
        agent = Agent(llm=llm, tools=[Tool(name="terminal")])
        conv = Conversation(
            agent=agent,
            workspace=workspace,
            persistence_dir=persistence_dir,
            visualizer=None,
            **kwargs,
        )
        conv.set_confirmation_policy(NeverConfirm())
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def turn(conv: LocalConversation, server: ScriptedLLMServer, text: str, command: str) -> str:
    """One turn: the user's message, `command` run, the agent's answer; the message's id."""
    server.reply_tool_call("terminal", {"command": command, "security_risk": "LOW"})
    server.reply_text(f"did {text}")
    conv.send_message(text)
    conv.run()
    return next(
        e.id
        for e in reversed(conv.state.active_branch())
        if isinstance(e, MessageEvent) and e.source == "user"
    )
