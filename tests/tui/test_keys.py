"""The LLM key never shows in the app: not on screen while commands run or an answer streams
(plain or encoded), not in the database file, not in the log file."""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import SIZE, USAGE, cells, chat_ready, screen_text, status, submit
from llm_server import ScriptedLLMServer

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.widgets.cells import SECRET_MASK, AgentCell

pytestmark = pytest.mark.anyio

KEY = "sk-tui-llm-key-7e6d5c4b3a2918273645"
MASK = "<secret-hidden>"


def forms(value: str) -> list[str]:
    raw = value.encode()
    return [value, base64.b64encode(raw).decode()[:24], raw.hex()[:24], raw.hex().upper()[:24]]


def at_rest(tmp_path: Path) -> bytes:
    """The database (and its write-ahead log) and the log file, as bytes."""
    paths = [tmp_path / "data" / "conversations" / f"conversations.db{s}" for s in ("", "-wal")]
    paths.append(Path(os.environ["OHTUI_LOG_DIR"]) / "ohtui.log")
    data = b"".join(path.read_bytes() for path in paths if path.exists())
    assert b"SystemPromptEvent" in data
    return data


async def test_the_key_never_shows_on_screen_or_at_rest(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any, tmp_path: Path
) -> None:
    app_options.api_key = KEY
    app_options.policy = "never"
    (app_options.workspace / ".env").write_text(f"OPENAI_API_KEY={KEY}\n")
    llm_server.reply_tool_call(
        "terminal", {"command": "cat .env; env | grep -ci key; base64 -w0 .env"}, usage=USAGE
    )
    llm_server.reply_tool_call("terminal", {"command": f"echo {KEY} | xxd -p"}, usage=USAGE)
    chunks = ["The key is sk-tui-", "llm-key-7e6d5c4b", "3a2918273645, ", "as you see."]
    llm_server.reply_text("".join(chunks), chunks=chunks, chunk_delay=0.3, usage=USAGE)
    app = OhtuiApp(app_options)
    screens: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "find the API key")
        deadline = time.monotonic() + 20
        while status(app) != "finished" and time.monotonic() < deadline:
            screens.append(screen_text(app))  # the answer as it streams in, too
            await pilot.pause(0.05)
        assert status(app) == "finished"
        await pilot.pause(0.1)
        screens.append(screen_text(app))
        [answer] = cells(app, AgentCell)
        assert answer.text == f"The key is {MASK}, as you see."
    final = screens[-1]
    assert "The key is ‹secret-hidden›, as you see." in final  # Markdown keeps the mask
    assert f"OPENAI_API_KEY={MASK}" in final  # the output is on screen, masked
    assert f"echo {MASK} | xxd -p" in final
    assert any("The key is" in s and "as you see" not in s for s in screens)  # seen streaming
    rest = at_rest(tmp_path).decode("utf-8", "replace")
    for form in forms(KEY):
        for shown in screens:
            assert form not in shown
        assert form not in rest


def test_the_app_shows_the_engine_s_mask() -> None:
    from ohtui.sdk.utils.masking import SECRET_MASK as ENGINE_MASK

    assert SECRET_MASK == ENGINE_MASK == MASK
