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


def test_a_row_draws_each_run_of_one_style_as_one_span() -> None:
    """Each span costs as a row is drawn: the muted second line is one span, not one per
    part; a part in another style (a status that stands out) keeps its own."""
    now = datetime.now().astimezone()

    def row(status: str) -> ConversationSummary:
        return ConversationSummary(
            id="0" * 32,
            title="Fix the login bug",
            first_user_message=None,
            created_at=now,
            updated_at=now,
            event_count=12,
            status=status,
            workspace="/tmp/w",
            model="openai/test-model",
        )

    finished = row_prompt(row("finished"), now=time.time(), home=Path.home())
    assert finished.plain == (
        "Fix the login bug\n  just now · ✓ finished · 12 events · /tmp/w · openai/test-model"
    )
    assert [str(span.style) for span in finished.spans] == ["bold", "$foreground-muted"]
    error = row_prompt(row("error"), now=time.time(), home=Path.home())
    assert [str(span.style) for span in error.spans] == [
        "bold",
        "$foreground-muted",
        "bold $text-error",
        "$foreground-muted",
    ]
    assert error.plain == finished.plain.replace("✓ finished", "✗ error")
