"""A long paste shows in the composer as a chip, and the message keeps the whole text."""

from __future__ import annotations

from typing import Any

import pytest
from chat_helpers import (
    SIZE,
    USAGE,
    cell_text,
    cells,
    chat_ready,
    screen_text,
    user_message_texts,
)
from llm_server import ScriptedLLMServer
from textual import events

from ohtui.sdk import MessageEvent
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.widgets.cells import UserCell
from ohtui.tui.widgets.composer import PASTE_HINT, Composer, ComposerInput

pytestmark = pytest.mark.anyio

LOG = "\n".join(f"line {n}: something happened" for n in range(1, 5001))


async def _paste(pilot: Any, text: str) -> None:
    assert isinstance(pilot.app.focused, ComposerInput)
    pilot.app.post_message(events.Paste(text))  # as the terminal driver does
    await pilot.pause()


async def test_a_long_paste_is_a_chip_and_the_sent_and_saved_message_is_whole(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("Read it.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await pilot.press(*"Why does this fail? ")
        await _paste(pilot, LOG)
        composer = app.screen.query_one(Composer)
        assert composer.text == "Why does this fail? [pasted 5,000 lines #1]"
        await pilot.pause(0.1)
        assert PASTE_HINT.split(" · ")[0] in screen_text(app)

        await pilot.press("enter")
        await wait(pilot, lambda: len(llm_server.requests) == 1, what="the LLM call")
        assert user_message_texts(llm_server.requests[0])[-1] == f"Why does this fail? {LOG}"
        assert app.chat is not None and app.chat.session.conversation is not None
        events_ = app.chat.session.conversation.state.events
        saved = [e for e in events_ if isinstance(e, MessageEvent) and e.source == "user"]
        assert saved[-1].llm_message.text == f"Why does this fail? {LOG}"
        assert composer.text == ""
        shown = cell_text(cells(app, UserCell)[-1])  # the pasted log is folded on screen too
        assert shown.endswith("… 4,988 more lines · enter to expand")
        assert PASTE_HINT.split(" · ")[0] not in screen_text(app)


async def test_a_chip_expands_to_edit_and_backspace_removes_it_whole(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        composer = app.screen.query_one(Composer)
        await _paste(pilot, "x" * 800)
        assert composer.text == "[pasted 800 characters #1]"
        await pilot.press("backspace")
        assert composer.text == ""

        await _paste(pilot, "one\rtwo\rthree\r\nfour\nfive\rsix")  # CR from a terminal
        await _paste(pilot, "short")  # a short paste goes in as it is
        assert composer.text == "[pasted 6 lines #2]short"
        await pilot.press("ctrl+g")
        assert composer.text == "one\ntwo\nthree\nfour\nfive\nsixshort"
        await pilot.press("backspace")  # plain editing again
        assert composer.text.endswith("sixshor")
