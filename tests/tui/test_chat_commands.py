"""Slash commands typed in the composer, and the command palette, in the real app."""

from __future__ import annotations

from typing import Any

import pytest
from chat_helpers import (
    SIZE,
    USAGE,
    cells,
    chat_ready,
    screen_text,
    send,
    status,
    submit,
    type_text,
    user_message_texts,
)
from llm_server import ScriptedLLMServer
from textual.command import CommandPalette

from ohtui.sdk import NeverConfirm
from ohtui.sdk.conversation.listing import list_conversations
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.help import HelpScreen
from ohtui.tui.screens.policy_picker import PolicyPickerScreen
from ohtui.tui.screens.rules import EMPTY_TEXT, RulesScreen
from ohtui.tui.widgets.cells import AgentCell, UserCell

pytestmark = pytest.mark.anyio


async def opened(app: OhtuiApp, pilot: Any, wait: Any) -> None:
    """Wait for the conversation to open."""
    await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
    assert status(app) == "idle"


def events_count(app: OhtuiApp) -> int:
    """How many events the conversation has recorded."""
    assert app.chat is not None and app.chat.session.conversation is not None
    return len(app.chat.session.conversation.state.events)


async def test_help_opens_the_keys_and_commands(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await send(pilot, "/help")
        await wait(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        shown = screen_text(app)
        assert "Ctrl+O" in shown and "review actions waiting for approval" in shown
        assert "/confirm" in shown and "/rules" in shown
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
    assert llm_server.requests == []  # a command is not a message


async def test_confirm_opens_the_policy_picker_and_sets_the_policy(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await submit(pilot, "/confirm")
        await wait(pilot, lambda: isinstance(app.screen, PolicyPickerScreen), what="the picker")
        assert "confirm risky: actions rated MEDIUM or HIGH" in screen_text(app)
        await pilot.press("down", "enter")  # risky → never
        assert not isinstance(app.screen, PolicyPickerScreen)
        assert app.chat is not None and app.chat.status_bar.policy == "never"
        conversation = app.chat.session.conversation
        assert conversation is not None
        await wait(
            pilot,
            lambda: isinstance(conversation.state.confirmation_policy.fallback, NeverConfirm),
            what="the engine's policy",
        )


async def test_rules_with_no_rules_says_how_to_add_one(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await submit(pilot, "/rules")
        await wait(pilot, lambda: isinstance(app.screen, RulesScreen), what="the rules")
        assert EMPTY_TEXT in screen_text(app)
        await pilot.press("escape")
        assert not isinstance(app.screen, RulesScreen)


async def test_ask_answers_apart_from_the_history(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("The build uses **make**.", usage=USAGE)
    llm_server.reply_text("A side answer: it uses make.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await submit(pilot, "how is it built?")
        await wait(pilot, lambda: status(app) == "finished", what="the first answer")
        before = events_count(app)
        shown_cells = len(cells(app))

        await submit(pilot, "/ask which tool builds it?")
        await wait(
            pilot, lambda: "A side answer: it uses make." in screen_text(app), what="the answer"
        )
        shown = screen_text(app)
        assert "/ask which tool builds it?" in shown
        assert "Esc to close · not part of the conversation" in shown
        assert events_count(app) == before  # nothing recorded
        assert len(cells(app)) == shown_cells
        assert status(app) == "finished"
        # The model saw the history and the question.
        side = llm_server.requests[1]
        history, question = user_message_texts(side)
        assert history == "how is it built?"
        assert "\nwhich tool builds it?\n" in question  # put as a side question

        await pilot.press("escape")  # closes the side answer
        assert app.screen.query_one("#side-answer").display is False
        assert "A side answer" not in screen_text(app)


async def test_ask_without_a_question_says_how_to_use_it(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await opened(app, pilot, wait)
        await submit(pilot, "/ask")  # Enter first accepts the menu's "/ask "
        from ohtui.tui.widgets.composer import Composer

        assert app.chat is not None and app.chat.query_one(Composer).text == "/ask "
        await pilot.press("enter")
        await wait(pilot, lambda: "Usage: /ask <question>." in screen_text(app), what="usage")
        assert not app.screen.query_one("#side-answer").display
    assert llm_server.requests == []


async def test_title_sets_the_conversation_title(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await opened(app, pilot, wait)
        await submit(pilot, "/title Parser fixes")
        assert app.chat is not None
        conversation = app.chat.session.conversation
        assert conversation is not None
        await wait(pilot, lambda: conversation.state.title == "Parser fixes", what="the title")
        await wait(pilot, lambda: app.chat.sub_title == "Parser fixes", what="the sub title")
        await wait(pilot, lambda: "Title: Parser fixes" in screen_text(app), what="the toast")
    assert llm_server.requests == []


async def test_a_title_with_square_brackets_is_shown_as_typed(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await opened(app, pilot, wait)
        await submit(pilot, "/title Fix [/tmp] handling")
        assert app.chat is not None
        await wait(pilot, lambda: app.chat.sub_title == "Fix [/tmp] handling", what="the title")
        await wait(
            pilot, lambda: "Title: Fix [/tmp] handling" in screen_text(app), what="the toast"
        )


async def test_new_starts_a_fresh_conversation_and_keeps_the_old_one(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    fixed_id = app_options.conversation_id
    assert fixed_id is not None
    llm_server.reply_text("First answer.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await submit(pilot, "the first conversation")
        await wait(pilot, lambda: status(app) == "finished", what="the first answer")
        assert app.chat is not None
        old = app.chat.session.conversation_id
        assert old == fixed_id

        await submit(pilot, "/new")
        await wait(pilot, lambda: status(app) == "idle", what="the new conversation")
        new = app.chat.session.conversation_id
        assert new is not None and new != old
        assert cells(app) == []  # the old cells are gone; the welcome is back
        assert "Tell the agent what to do" in screen_text(app)
        assert app.chat.session.conversation is not None
        assert len(app.chat.session.conversation.state.events) == 0

        llm_server.reply_text("Second answer.", usage=USAGE)
        await submit(pilot, "the second conversation")
        await wait(pilot, lambda: status(app) == "finished", what="the second answer")
        assert [c.text for c in cells(app, UserCell)] == ["the second conversation"]
        assert [c.text for c in cells(app, AgentCell)] == ["Second answer."]
        # The new conversation does not carry the old one's history to the model.
        assert user_message_texts(llm_server.requests[-1]) == ["the second conversation"]
    saved = {summary.id for summary in list_conversations(app_options.persistence_dir)}
    assert {old, new} <= saved


async def test_exit_quits(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    fixed_id = app_options.conversation_id
    assert fixed_id is not None
    llm_server.reply_text("Hello.")
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await submit(pilot, "hi")
        await wait(pilot, lambda: status(app) == "finished", what="the reply")
        await submit(pilot, "/exit")
        assert not app.is_running
    assert app.resume_hint is not None
    assert f"ohtui --resume {fixed_id}" in app.resume_hint


async def test_quitting_a_conversation_nothing_was_said_in_leaves_nothing_behind(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        assert app_options.persistence_dir is not None
        assert len(list_conversations(app_options.persistence_dir)) == 1  # saved as it opens
        await submit(pilot, "/exit")
    assert app.resume_hint is None
    assert list_conversations(app_options.persistence_dir) == []


async def test_an_unknown_command_warns_and_sends_nothing(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await opened(app, pilot, wait)
        await submit(pilot, "/foo bar")
        await wait(
            pilot,
            lambda: "There is no command /foo." in screen_text(app),
            what="the warning",
        )
        assert status(app) == "idle"
        assert cells(app) == []
    assert llm_server.requests == []


async def test_the_command_palette_finds_and_runs_help(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await pilot.press("ctrl+p")
        await wait(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
        await type_text(pilot, "/help")
        await wait(pilot, lambda: "keys and commands" in screen_text(app), what="the hit")
        await pilot.press("enter")
        await wait(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")


async def test_the_command_palette_prefills_commands_that_take_an_argument(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await pilot.press("ctrl+p")
        await wait(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
        await type_text(pilot, "/tit")
        await wait(pilot, lambda: "rename the conversation" in screen_text(app), what="the hit")
        await pilot.press("enter")
        await wait(pilot, lambda: not isinstance(app.screen, CommandPalette), what="closing")
        from ohtui.tui.widgets.composer import Composer

        assert app.chat is not None
        assert app.chat.query_one(Composer).text == "/title "
