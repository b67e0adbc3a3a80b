"""A long conversation on screen: a bounded window of cells that pages through every event.

The window never mounts more than MAX_MOUNTED widgets; scrolling up reads older pages from
the store and lets the newest cells go, scrolling down reads them back, and the keys jump
to either end. Every event shows exactly once, in order, whichever way the user goes.
"""

from __future__ import annotations

import gc
import re
from dataclasses import replace
from typing import Any

import pytest
from chat_helpers import (
    SIZE,
    USAGE,
    cell_text,
    cells,
    chat_ready,
    save_long_conversation,
    screen_text,
    status,
    submit,
    without_condenser,
)
from llm_server import Reply, ScriptedLLMServer

from ohtui.tui import messages as msg
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.session.paging import HISTORY_TAIL
from ohtui.tui.widgets.cells import ActionCell
from ohtui.tui.widgets.conversation_view import MAX_MOUNTED, MAX_ORPHANS, ConversationView

pytestmark = pytest.mark.anyio

TURNS = 100
"""2 + 4 * 100 = 402 events: ten pages of history, twice the window's cap in cells."""
SHORTER = 200
"""Enough for the window to leave the newest events behind, for the tests that do not walk
the whole history."""
NUMBER = re.compile(r"(?:question|answer|step) (\d+)$")


def view_of(app: OhtuiApp) -> ConversationView:
    assert app.chat is not None
    return app.chat.view


def turns_shown(app: OhtuiApp) -> list[tuple[int, str]]:
    """(turn number, kind) of every cell of a turn, top to bottom."""
    shown = []
    for cell in cells(app):
        text = cell_text(cell)
        found = NUMBER.search(text.splitlines()[0] if text else "")
        if found:
            kind = "action" if isinstance(cell, ActionCell) else text.split()[0]
            shown.append((int(found.group(1)), kind))
    return shown


def check_window(app: OhtuiApp) -> list[tuple[int, str]]:
    """The window is within the cap and shows whole turns in order, each cell once; every
    action whose result is in the window shows it."""
    view = view_of(app)
    assert len(view.children) <= MAX_MOUNTED
    assert len(view._actions) <= MAX_MOUNTED
    assert len(view._orphans) <= MAX_ORPHANS
    shown = turns_shown(app)
    order = {"❯": 0, "action": 1, "answer": 2}
    keys = [(turn, order[kind]) for turn, kind in shown]
    assert keys == sorted(keys) and len(set(keys)) == len(keys), shown
    turns = sorted({turn for turn, _ in shown})
    assert turns == list(range(turns[0], turns[-1] + 1)), "a turn is missing"
    indexes = [c.event_index for c in cells(app) if c.event_index >= 0]
    assert indexes == sorted(indexes)
    oldest, newest = view.window
    assert all(oldest <= i < newest for i in indexes)
    for cell in cells(app, ActionCell):
        if cell.event_index + 1 < newest:  # its result (the next event) is in the window
            assert cell.result is not None, cell_text(cell)
    return shown


async def test_scrolling_back_and_forth_shows_every_event_once_in_order(
    app_options: AppOptions, wait: Any
) -> None:
    conversation_id = save_long_conversation(app_options, turns=TURNS)
    options = replace(app_options, resume_id=conversation_id, conversation_id=None)
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), timeout=30, what="the conversation to open")
        view = view_of(app)
        await wait(pilot, lambda: view.window[1] == 2 + 4 * TURNS, what="the newest events")
        seen: dict[tuple[int, str], int] = {}

        def record() -> None:
            for key in check_window(app):
                seen[key] = seen.get(key, 0) + 1

        record()
        assert not view.detached
        while view.window[0] > 0:  # to the top, a page at a time, as the mouse wheel does
            oldest = view.window[0]
            view.scroll_home(animate=False)
            await wait(pilot, lambda o=oldest: view.window[0] < o, what="an older page")
            await wait(pilot, lambda: view.scroll_y > 0, what="the view to keep its place")
            record()
        assert view.detached  # the newest cells left the window on the way up
        assert {turn for turn, _ in seen} == set(range(TURNS))
        for kind in ("❯", "action", "answer"):
            assert all((turn, kind) in seen for turn in range(TURNS)), kind
        assert "question 0" in [cell_text(c).removeprefix("❯ ") for c in cells(app)]

        await pilot.pause(0.2)
        while view.detached:  # and back down, with Page Down
            newest = view.window[1]
            for _ in range(200):
                await pilot.press("pagedown")
                await pilot.pause(0.02)
                if view.window[1] > newest:
                    break
            assert view.window[1] > newest, "Page Down at the bottom read no newer page"
            check_window(app)
        assert turns_shown(app)[-1] == (TURNS - 1, "answer")


async def test_keys_jump_to_either_end_and_page_up_reads_older(
    app_options: AppOptions, wait: Any
) -> None:
    conversation_id = save_long_conversation(app_options, turns=SHORTER)
    options = replace(app_options, resume_id=conversation_id, conversation_id=None)
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), timeout=30, what="the conversation to open")
        view = view_of(app)
        await wait(pilot, lambda: view.window[1] == 2 + 4 * SHORTER, what="the newest events")
        oldest = view.window[0]
        while view.window[0] == oldest:  # Page Up until the top of the window reads older
            await pilot.press("pageup")
            await pilot.pause(0.05)
        check_window(app)

        await pilot.press("ctrl+home")
        await wait(pilot, lambda: view.window[0] == 0, what="the first events")
        assert view.detached
        assert "a long session" in screen_text(app)  # the very first message, on screen
        assert turns_shown(app)[0] == (0, "❯")
        check_window(app)

        await pilot.press("ctrl+end")
        await wait(pilot, lambda: not view.detached, what="the newest events")
        await wait(pilot, lambda: "answer 199" in screen_text(app), what="the newest on screen")
        check_window(app)


async def test_events_while_reading_back_wait_below_and_the_window_keeps_its_cap(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    conversation_id = save_long_conversation(app_options, turns=SHORTER)
    options = replace(app_options, resume_id=conversation_id, conversation_id=None)
    without_condenser(options)
    llm_server.reply(Reply(text="answer 200", usage=USAGE, delay=2.0))
    llm_server.reply_text("answer 201", usage=USAGE)
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), timeout=30, what="the conversation to open")
        view = view_of(app)
        await submit(pilot, "question 200")
        await wait(pilot, lambda: turns_shown(app)[-1] == (200, "❯"), what="the question")
        while not view.detached:  # the user reads back while the agent works
            oldest = view.window[0]
            view.scroll_home(animate=False)
            await wait(pilot, lambda o=oldest: view.window[0] < o, what="an older page")
            await wait(pilot, lambda: view.scroll_y > 0, what="the view to keep its place")
        # The first model call imports litellm: slow on a loaded machine.
        await wait(pilot, lambda: status(app) == "finished", timeout=90, what="the answer")
        await pilot.pause(0.2)
        assert "answer 200" not in [cell_text(c) for c in cells(app)]  # not where they read
        check_window(app)

        view.scroll_end(animate=False)  # down to the bottom of the window: newer pages
        while view.detached:
            newest = view.window[1]
            view.scroll_end(animate=False)
            await wait(pilot, lambda n=newest: view.window[1] > n, what="a newer page")
            check_window(app)
        assert turns_shown(app)[-1] == (200, "answer")

        await submit(pilot, "question 201")  # and it follows the newest again
        await wait(pilot, lambda: turns_shown(app)[-1] == (201, "answer"), what="the answer")
        await wait(pilot, lambda: "answer 201" in screen_text(app), what="it on screen")
        check_window(app)


async def test_a_jump_to_the_newest_shows_what_was_recorded_while_its_page_was_read(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """The newest page is read on a thread; a message sent meanwhile (and its answer) come
    after that page. The window reads them too and follows the bottom again."""
    conversation_id = save_long_conversation(app_options, turns=SHORTER)
    options = replace(app_options, resume_id=conversation_id, conversation_id=None)
    without_condenser(options)
    llm_server.reply_text("answer 200", usage=USAGE)
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), timeout=30, what="the conversation to open")
        view = view_of(app)
        await pilot.press("ctrl+home")
        await wait(pilot, lambda: view.window[0] == 0, what="the first events")
        assert app.chat is not None and app.chat.session.conversation is not None
        events = app.chat.session.conversation.state.events
        total = len(events)
        stale = list(events[total - HISTORY_TAIL : total])  # the page, read before the message
        app.chat.session.load_page = lambda newest: None  # type: ignore[method-assign]
        await submit(pilot, "question 200")  # jumps to the newest: its page is held back
        await wait(pilot, lambda: status(app) == "finished", timeout=90, what="the answer")
        assert len(events) > total
        app.chat.post_message(
            msg.EventPage(stale, total - HISTORY_TAIL, has_older=True, newest=True)
        )
        await wait(pilot, lambda: not view.detached, what="the window to catch up")
        await wait(
            pilot,
            lambda: turns_shown(app)[-2:] == [(200, "❯"), (200, "answer")],
            what="the message and its answer",
        )
        await wait(pilot, lambda: "answer 200" in screen_text(app), what="them on screen")
        check_window(app)


async def test_a_long_run_keeps_no_more_than_the_window(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """Streamed answers into a full window: the cells of old steps are let go, and so is
    their memory (the heap is frozen once per session, not at every model call)."""
    conversation_id = save_long_conversation(app_options, turns=SHORTER)
    options = replace(app_options, resume_id=conversation_id, conversation_id=None)
    without_condenser(options)
    replies = 12
    for n in range(replies):
        text = f"Answer {n}: " + " ".join(f"word{i}" for i in range(30))
        llm_server.reply(Reply(text=text, usage=USAGE))
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), timeout=30, what="the conversation to open")
        view = view_of(app)
        while len(view.children) < MAX_MOUNTED:  # a full window
            first = view.window[0]
            view.scroll_home(animate=False)
            await wait(pilot, lambda f=first: view.window[0] < f, what="an older page")
            await wait(pilot, lambda: view.scroll_y > 0, what="the view to keep its place")
        assert not view.detached
        view.scroll_end(animate=False)
        start = view.window[0]
        frozen: list[int] = []
        oldest = []
        for n in range(replies):
            await submit(pilot, f"question {n}")
            await wait(
                pilot,
                lambda n=n: any(cell_text(c).startswith(f"Answer {n}:") for c in cells(app)),
                timeout=90 if n == 0 else 20,  # the first model call imports litellm
                what=f"answer {n}",
            )
            assert len(view.children) <= MAX_MOUNTED
            assert len(view._actions) <= MAX_MOUNTED
            frozen.append(gc.get_freeze_count())
            oldest.append(view.window[0])
        assert not view.detached
        assert oldest[-1] > start  # the oldest cells left the window
        # Frozen once, at the first answer; only fewer since (frozen objects freed).
        assert max(frozen) == frozen[0], frozen
