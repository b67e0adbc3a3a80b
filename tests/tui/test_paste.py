"""A long paste shows in the composer as a chip, and the message keeps the whole text."""

from __future__ import annotations

import contextlib
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


SUMMARY_PASTE = "\n".join(f"line {n}" for n in range(1, 201))


def _typed_then_pasted(app: Any, typed: str, pasted: str) -> None:
    """Keys and a paste as the terminal driver posts them: all queued before the first is
    handled (fast typing, or tmux send-keys, then a bracketed paste)."""
    for character in typed:
        app.post_message(events.Key(character, character))
    app.post_message(events.Paste(pasted))


async def test_a_paste_right_after_typing_goes_after_the_typed_text(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("Summarized.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        composer = app.screen.query_one(Composer)
        _typed_then_pasted(app, "summarize", SUMMARY_PASTE)
        await wait(pilot, lambda: "#1]" in composer.text, what="the paste")
        await pilot.pause(0.2)
        assert composer.text == "summarize[pasted 200 lines #1]"
        await pilot.press("enter")
        await wait(pilot, lambda: len(llm_server.requests) == 1, what="the LLM call")
        assert user_message_texts(llm_server.requests[0])[-1] == f"summarize{SUMMARY_PASTE}"


BURSTS = [
    # (what is typed and pasted, in order, all queued at once; what the input then holds)
    ((("paste", "short"), ("keys", "abc")), "shortabc"),
    ((("keys", "ab"), ("paste", "XY"), ("keys", "cd")), "abXYcd"),
    (
        (("keys", "a"), ("paste", "x" * 800), ("keys", "b"), ("paste", "y" * 600), ("keys", "c")),
        "a[pasted 800 characters #1]b[pasted 600 characters #2]c",
    ),
    (
        (("keys", "look"), ("key", "shift+enter"), ("paste", SUMMARY_PASTE)),
        "look\n[pasted 200 lines #1]",
    ),
    ((("keys", "abc"), ("key", "backspace"), ("paste", "Z")), "abZ"),
    ((("keys", "abc"), ("key", "left"), ("key", "left"), ("paste", "Z")), "aZbc"),
    ((("keys", "abc"), ("key", "home"), ("paste", "Z"), ("keys", "!")), "Z!abc"),
    ((("paste", "p1"), ("paste", "p2"), ("paste", "p3")), "p1p2p3"),
]


@pytest.mark.parametrize(("burst", "expected"), BURSTS)
async def test_keys_and_pastes_queued_together_land_in_the_order_typed(
    app_options: AppOptions, burst: tuple[tuple[str, str], ...], expected: str, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        composer = app.screen.query_one(Composer)
        for kind, value in burst:
            if kind == "paste":
                app.post_message(events.Paste(value))
            elif kind == "key":
                app.post_message(events.Key(value, None))
            else:
                for character in value:
                    app.post_message(events.Key(character, character))
        with contextlib.suppress(AssertionError):  # the comparison below says what landed
            await wait(pilot, lambda: composer.text == expected, timeout=10, what=expected)
        await pilot.pause(0.1)  # nothing more lands after it
        assert composer.text == expected


async def test_a_paste_after_a_burst_ending_in_enter_is_the_next_message(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """Typed "first", Enter, then a paste: the paste is not sent with the first message."""
    llm_server.reply_text("One.", usage=USAGE, delay=0.3)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        composer = app.screen.query_one(Composer)
        for character in "first":
            app.post_message(events.Key(character, character))
        app.post_message(events.Key("enter", None))
        app.post_message(events.Paste("second"))
        await wait(pilot, lambda: len(llm_server.requests) == 1, what="the LLM call")
        await pilot.pause(0.2)
        assert user_message_texts(llm_server.requests[0])[-1] == "first"
        assert composer.text == "second"


async def test_a_paste_after_tab_goes_where_the_focus_went() -> None:
    """The mechanism on its own: a paste follows the focus the keys before it moved."""
    from textual.app import App, ComposeResult
    from textual.widgets import Input

    from ohtui.tui.key_order import OrderedKeys

    class Form(OrderedKeys, App[None]):
        def compose(self) -> ComposeResult:
            yield Input(id="first", select_on_focus=False)
            yield Input(id="second", select_on_focus=False)

    app = Form()
    async with app.run_test() as pilot:
        app.query_one("#first", Input).focus()
        await pilot.pause()
        for key, character in (("a", "a"), ("tab", None)):
            app.post_message(events.Key(key, character))
        app.post_message(events.Paste("pasted"))
        app.post_message(events.Key("b", "b"))
        await pilot.pause(0.5)
        assert app.query_one("#first", Input).value == "a"
        assert app.query_one("#second", Input).value == "pastedb"
