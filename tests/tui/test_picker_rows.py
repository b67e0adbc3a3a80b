"""How the picker shows a conversation an agent server lists (how many events: not known)."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from ohtui.sdk.conversation import ConversationSummary
from ohtui.tui.picker_rows import preview_heading, row_prompt


def test_a_server_row_shows_no_event_count() -> None:
    now = datetime.now().astimezone()
    row = ConversationSummary(
        id="0" * 32,
        title="Fix the login bug",
        first_user_message=None,
        created_at=now,
        updated_at=now,
        event_count=-1,
        status="idle",
        workspace="/tmp/w",
        model="openai/test-model",
    )
    shown = row_prompt(row, now=time.time(), home=Path.home()).plain
    assert "event" not in shown and "Fix the login bug" in shown
    assert "events" not in preview_heading(row, now=time.time(), home=Path.home()).plain
