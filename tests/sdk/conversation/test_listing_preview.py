"""Tests for recent_events: the tail of a saved conversation, read without opening it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM, Agent, Conversation, LocalConversation, MessageEvent
from ohtui.sdk.conversation import ConversationNotFoundError, recent_events
from ohtui.sdk.conversation.store import DB_NAME


def open_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> LocalConversation:
    return Conversation(
        agent=Agent(llm=llm), workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )


def test_the_last_events_oldest_first(
    llm_server: ScriptedLLMServer, llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    conv = open_conversation(llm, workspace, persistence_dir)
    try:
        llm_server.reply_text("Paris.")
        conv.send_message("Capital of France?")
        conv.run()
        llm_server.reply_text("Berlin.")
        conv.send_message("And of Germany?")
        conv.run()
        saved = [(e.id, type(e)) for e in conv.state.events]
        cid = conv.id.hex
    finally:
        conv.close()

    tail = recent_events(persistence_dir, cid, limit=3)
    assert [(e.id, type(e)) for e in tail] == saved[-3:]
    assert [e.text for e in tail if isinstance(e, MessageEvent)] == [
        "Paris.",
        "And of Germany?",
        "Berlin.",
    ]
    assert [e.id for e in recent_events(persistence_dir, cid, limit=100)] == [
        event_id for event_id, _ in saved
    ]
    assert recent_events(persistence_dir, cid, limit=0) == []


def test_reads_while_the_conversation_is_open(
    llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    conv = open_conversation(llm, workspace, persistence_dir)
    try:
        conv.send_message("still working on it")
        [last] = recent_events(persistence_dir, conv.id.hex, limit=1)
        assert isinstance(last, MessageEvent) and last.text == "still working on it"
        conv.send_message("and more")  # the open conversation can still write
        assert len(conv.state.events) == 3
    finally:
        conv.close()


def test_only_the_tail_is_parsed(llm: LLM, workspace: Path, persistence_dir: Path) -> None:
    conv = open_conversation(llm, workspace, persistence_dir)
    try:
        for i in range(5):
            conv.send_message(f"message {i}")
        cid = conv.id.hex
    finally:
        conv.close()
    with sqlite3.connect(persistence_dir / DB_NAME) as db:
        db.execute("UPDATE events SET data = 'not json' WHERE seq < 3")
    tail = recent_events(persistence_dir, cid, limit=2)
    assert [e.text for e in tail if isinstance(e, MessageEvent)] == ["message 3", "message 4"]


def test_unknown_conversation(tmp_path: Path, llm: LLM, workspace: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(ConversationNotFoundError, match="abc"):
        recent_events(missing, "abc")
    assert not missing.exists()  # looking creates nothing

    conv = open_conversation(llm, workspace, tmp_path / "convs")
    conv.close()
    with pytest.raises(ConversationNotFoundError, match="0" * 32):
        recent_events(tmp_path / "convs", "0" * 32)
