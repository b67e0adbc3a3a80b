"""Careless and hostile ways to reach the picker: every one leaves the app drawing again
(no frames held), with one picker at most on top of the chat, and nothing lost."""

from __future__ import annotations

from typing import Any

import pytest
from chat_helpers import SIZE, USAGE, chat_ready, status, submit
from llm_server import ScriptedLLMServer
from test_ready_picker import picker_made
from test_resume import picker_listed

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.chat import ChatScreen
from ohtui.tui.screens.picker import PickerScreen
from ohtui.tui.widgets.composer import Composer

pytestmark = pytest.mark.anyio


def pickers(app: OhtuiApp) -> int:
    return sum(isinstance(screen, PickerScreen) for screen in app.screen_stack)


async def back_to_chat(pilot: Any, wait: Any) -> None:
    app = pilot.app
    while not isinstance(app.screen, ChatScreen):
        await pilot.press("escape")
        await pilot.pause()
    await wait(pilot, lambda: app._batch_count == 0, what="drawing again")


@pytest.mark.parametrize("made_ahead", [True, False])
async def test_tries_at_the_picker_leave_the_app_drawing(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any, made_ahead: bool
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        llm_server.reply_text("Hi.", usage=USAGE)
        await submit(pilot, "hello")
        await wait(pilot, lambda: status(app) == "finished", what="the reply")
        composer = app.chat.query_one(Composer) if app.chat else None
        assert composer is not None

        async def ready() -> None:
            if made_ahead:
                await picker_made(pilot, wait)
            else:
                app._ready_picker.discard()

        # 1. /resume and Enter three times in one go, as a held-down key sends them: the
        #    picker opens and the next Enter picks its highlighted row (this conversation).
        await ready()
        composer.text = "/resume"
        await pilot.press("enter", "enter", "enter")
        await pilot.pause(0.3)
        assert app._batch_count == 0 and pickers(app) <= 1
        await back_to_chat(pilot, wait)
        await wait(pilot, lambda: chat_ready(app), what="the conversation open")
        # 2. /resume with spaces and another case around it: a command or a message, never
        #    frames held.
        for text in ("  /resume  ", "/RESUME", "/resume extra words", "/resum", "/"):
            await ready()
            await submit(pilot, text)
            await pilot.pause(0.2)
            assert app._batch_count == 0, text
            await back_to_chat(pilot, wait)
        # 3. Typing into the picker while its rows are on their way.
        await ready()
        composer.text = "/resume"
        await pilot.press("enter", *"hello", "backspace")
        shown = await picker_listed(pilot, wait, 1)
        await wait(pilot, lambda: shown.search_input.value == "hell", what="the search")
        await back_to_chat(pilot, wait)
        # 4. Enter on an empty composer and on blank lines, many times.
        await pilot.press(*["enter"] * 10)
        composer.text = "\n\n   \n"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert app._batch_count == 0 and isinstance(app.screen, ChatScreen)
        # 5. /resume then Esc in one go; then /new and /resume straight after: one picker.
        await ready()
        composer.text = "/resume"
        await pilot.press("enter", "escape")
        await back_to_chat(pilot, wait)
        await submit(pilot, "/new")
        await submit(pilot, "/resume")
        await wait(pilot, lambda: pickers(app) == 1, what="one picker")
        await back_to_chat(pilot, wait)
        assert pickers(app) == 0


async def test_quitting_while_the_picker_is_on_its_way_ends_the_app(
    app_options: AppOptions, wait: Any
) -> None:
    """Ctrl+Q straight after Enter on /resume, frames held: the app ends, as ever."""
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        assert app.chat is not None
        app.chat.query_one(Composer).text = "/resume"
        await pilot.press("enter", "ctrl+q")
        await wait(pilot, lambda: not app.is_running, what="the app to end", timeout=10)
