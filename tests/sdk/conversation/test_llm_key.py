"""The conversation's own LLM key is masked like a secret, but never handed to a command.

The key can only reach the agent by accident (a `.env` in the workspace, a model that repeats
what it was told): wherever it then shows, plain or encoded, it is masked before an event,
the database, a streamed token or the model's next request could hold it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import (
    LLM,
    Agent,
    Conversation,
    LLMStreamChunk,
    LocalConversation,
    ObservationEvent,
    Tool,
)
from ohtui.sdk.conversation import SECRET_MASK
from ohtui.sdk.conversation import ConversationExecutionStatus as Status

KEY = "sk-llm-key-0f9e8d7c6b5a49382716"


def forms(value: str) -> list[str]:
    """The value and the encodings an agent would use to smuggle it out."""
    raw = value.encode()
    return [value, base64.b64encode(raw).decode().rstrip("="), raw.hex(), raw.hex().upper()]


def assert_nowhere(key: str, *places: str | bytes) -> None:
    for place in places:
        text = place.decode("utf-8", "replace") if isinstance(place, bytes) else place
        for form in forms(key):
            assert form not in text, f"{form!r} found in {text[:200]!r}"


def db_bytes(persistence_dir: Path) -> bytes:
    data = b"".join(
        path.read_bytes()
        for suffix in ("", "-wal", "-journal")
        if (path := persistence_dir / f"conversations.db{suffix}").exists()
    )
    assert data
    return data


@pytest.fixture
def conversation(
    llm_server: ScriptedLLMServer, workspace: Path, persistence_dir: Path
) -> Iterator[tuple[LocalConversation, list[LLMStreamChunk]]]:
    tokens: list[LLMStreamChunk] = []
    llm = LLM(
        model="openai/test-model",
        base_url=llm_server.base_url,
        api_key=KEY,
        num_retries=0,
        timeout=10,
        stream=True,
    )
    agent = Agent(llm=llm, tools=[Tool(name="terminal"), Tool(name="file_editor")])
    conv = Conversation(
        agent=agent,
        workspace=workspace,
        persistence_dir=persistence_dir,
        token_callbacks=[tokens.append],
        visualizer=None,
    )
    yield conv, tokens
    conv.close()


def run(conv: LocalConversation, server: ScriptedLLMServer, *calls: tuple[str, Any]) -> None:
    for tool, arguments in calls:
        server.reply_tool_call(tool, arguments)
    server.reply_text(
        f"All done, and the key is {KEY}.",
        chunks=["All done, and the key is sk-l", KEY[4:] + "."],
    )
    conv.send_message("Go")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED


def test_the_key_is_masked_wherever_the_agent_finds_it(
    conversation: tuple[LocalConversation, list[LLMStreamChunk]],
    llm_server: ScriptedLLMServer,
    workspace: Path,
    persistence_dir: Path,
) -> None:
    conv, tokens = conversation
    (workspace / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    written = workspace / "copy.txt"
    run(
        conv,
        llm_server,
        ("terminal", {"command": "cat .env"}),
        ("terminal", {"command": "base64 .env; base64 -w0 .env; echo; xxd -p .env"}),
        ("terminal", {"command": "python3 -c 'print(open(\".env\").read().encode().hex())'"}),
        ("terminal", {"command": "cut -d= -f2 .env | tr -d '\\n' | od -An -tx1 | tr -d ' \\n'"}),
        ("file_editor", {"command": "create", "path": str(written), "file_text": f"k={KEY}\n"}),
        ("file_editor", {"command": "view", "path": str(written)}),
        ("file_editor", {"command": "view", "path": str(workspace / ".env")}),
    )
    events = "\n".join(e.model_dump_json() for e in conv.state.events)
    shown = "".join(t.content + "".join(c.arguments for c in t.tool_calls) for t in tokens)
    assert SECRET_MASK in events and SECRET_MASK in shown
    conv.close()
    assert_nowhere(KEY, events, shown, json.dumps(llm_server.requests), db_bytes(persistence_dir))


def test_the_key_is_not_exported_to_commands_by_any_name(
    conversation: tuple[LocalConversation, list[LLMStreamChunk]], llm_server: ScriptedLLMServer
) -> None:
    conv, _ = conversation
    registry = conv.state.secret_registry
    assert registry.secret_sources == {}
    run(conv, llm_server, ("terminal", {"command": "echo [$LLM_API_KEY$API_KEY$OPENAI_API_KEY]"}))
    [observation] = [e for e in conv.state.events if isinstance(e, ObservationEvent)]
    assert observation.observation.text.startswith("[]\n")
    assert KEY not in registry.model_dump_json(context={"expose_secrets": True})
