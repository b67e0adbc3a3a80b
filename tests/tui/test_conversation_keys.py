"""Moving through the conversation from the keyboard while the composer keeps focus."""

from __future__ import annotations

from typing import Any

import pytest
from chat_helpers import SIZE, cells, chat_ready, screen_text
from llm_server import ScriptedLLMServer

from ohtui.sdk import Message, MessageEvent, TextContent
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.widgets.cells import AgentCell, Cell
from ohtui.tui.widgets.composer import ComposerInput

pytestmark = pytest.mark.anyio


def _reply(n: int) -> MessageEvent:
    text = f"Answer {n}.\n\nIt has a second paragraph."
    return MessageEvent(
        source="agent", llm_message=Message(role="assistant", content=[TextContent(text=text)])
    )


async def _long_chat(app: OhtuiApp, pilot: Any, wait: Any) -> None:
    await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
    assert app.chat is not None
    for n in range(30):
        app.chat.view.add_event(_reply(n))
    await pilot.pause(0.2)
    assert app.chat.view.is_vertical_scroll_end


async def test_page_keys_scroll_the_conversation_and_the_composer_keeps_focus(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await _long_chat(app, pilot, wait)
        assert app.chat is not None
        view = app.chat.view
        bottom = view.scroll_y
        assert isinstance(app.focused, ComposerInput)

        await pilot.press("pageup")
        await pilot.pause()
        assert view.scroll_y < bottom
        assert isinstance(app.focused, ComposerInput)
        up = view.scroll_y

        await pilot.press("pagedown")
        await pilot.pause()
        assert view.scroll_y > up

        await pilot.press("ctrl+home")
        await pilot.pause()
        assert view.scroll_y == 0
        assert "Answer 0." in screen_text(app)

        await pilot.press("ctrl+end")
        await pilot.pause()
        assert view.is_vertical_scroll_end
        assert isinstance(app.focused, ComposerInput)
        assert "^f Find" in screen_text(app)  # the footer has room for Find (PgUp/PgDn: /help)


async def test_tab_from_the_composer_goes_to_the_newest_cell_and_arrows_walk_back(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await _long_chat(app, pilot, wait)
        shown = cells(app, Cell)
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is shown[-1]
        assert isinstance(app.focused, AgentCell) and "Answer 29." in app.focused.text

        await pilot.press("up")
        assert app.focused is shown[-2]
        await pilot.press("down", "down")
        assert isinstance(app.focused, ComposerInput)  # past the newest cell: back to typing


async def test_escape_on_a_cell_goes_back_to_the_composer_and_pauses_nothing(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await _long_chat(app, pilot, wait)
        assert app.chat is not None
        await pilot.press("tab", "up")
        assert isinstance(app.focused, AgentCell)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.focused, ComposerInput)
        assert app.chat.status_bar.status == "idle"
        assert app.screen is app.chat  # one Esc leaves the cell: no rewind screen


async def test_letters_typed_on_a_cell_go_to_the_composer_and_c_copies_only_on_purpose(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await _long_chat(app, pilot, wait)
        composer = app.query_one(ComposerInput)
        await pilot.press("tab")  # focused from the keyboard: on purpose
        newest = app.focused
        assert isinstance(newest, AgentCell)
        await pilot.press("h", "i")
        assert composer.text == "hi" and app.focused is composer  # not dropped

        await pilot.press("tab")
        assert app.focused is newest
        await pilot.press("c")
        assert app.clipboard == newest.copy_text() and "Answer 29." in app.clipboard
        assert composer.text == "hi"

        app.copy_to_clipboard("")
        await pilot.press("escape")
        await pilot.click(newest)  # focused by a click: its keys are the composer's
        await pilot.pause()
        assert app.focused is newest
        await pilot.press("space", "c", "a", "t")
        assert app.clipboard == ""
        assert composer.text == "hi cat" and app.focused is composer
