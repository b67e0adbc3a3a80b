"""Transcript search (Ctrl+F, /find): the whole conversation is searched, folded output and
pages the view does not hold included; Enter / Shift+Enter go from hit to hit, wrapping."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from chat_helpers import (
    SIZE,
    USAGE,
    cells,
    chat_ready,
    save_long_conversation,
    screen_text,
    submit,
    type_text,
    without_condenser,
)
from llm_server import ScriptedLLMServer

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.widgets.cells import ActionCell, Cell, UserCell
from ohtui.tui.widgets.composer import Composer
from ohtui.tui.widgets.find_bar import FindBar

pytestmark = pytest.mark.anyio

FOLDED = "\n".join(f"line {n}" for n in range(30)) + "\nthe needle is here\n[exit code 0]"
"""A command's output whose hit is far below the lines a folded cell shows."""


def save_conversation(options: AppOptions, turns: int, output: str = "") -> str:
    """Save `turns` exchanges (a question, a command and its `output`, "{i}" in it the
    turn's number, an answer) with the engine; the first message is "a long session";
    returns the conversation's id."""
    texts = {"output": output} if output else {}
    return save_long_conversation(
        options, turns, question="question q{i}q", answer="answer a{i}a", **texts
    )


def resumed(options: AppOptions, conversation_id: str) -> OhtuiApp:
    without_condenser(options)
    return OhtuiApp(replace(options, resume_id=conversation_id, conversation_id=None))


def bar(app: OhtuiApp) -> FindBar:
    assert app.chat is not None
    return app.chat.query_one(FindBar)


def count(app: OhtuiApp) -> str:
    """The bar's count ("3 of 17", "No matches")."""
    return str(bar(app).query_one("#find-count").render())


def current(app: OhtuiApp) -> Cell:
    found = [c for c in cells(app) if c.has_class("-find-current")]
    assert len(found) == 1, "one cell is the current hit"
    return found[0]


def in_sight(app: OhtuiApp, cell: Cell) -> bool:
    assert app.chat is not None
    return cell.region.overlaps(app.chat.view.region)


def marked_current(cell: Cell, term: str) -> bool:
    """Whether `term` is marked as the current hit (reverse, bold, underlined) in `cell`."""
    for y in range(cell.content_size.height):
        for segment in cell.render_line(y):
            style = segment.style
            if segment.text.lower() == term and style is not None and style.underline:
                return bool(style.reverse)
    return False


async def find(pilot: Any, wait: Any, term: str, counted: str) -> None:
    """Ctrl+F, type `term`, wait until the bar counts `counted` (a prefix)."""
    app = pilot.app
    await pilot.press("ctrl+f")
    await wait(pilot, lambda: bar(app).input.has_focus, timeout=5, what="the find bar")
    bar(app).input.value = term
    await wait(pilot, lambda: count(app).startswith(counted), timeout=10, what=counted)


async def test_a_hit_in_folded_output_unfolds_its_cell_and_is_marked(
    app_options: AppOptions, wait: Any
) -> None:
    app = resumed(app_options, save_conversation(app_options, turns=3, output=FOLDED))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        folded = [c for c in cells(app, ActionCell) if not c.expanded]
        assert len(folded) == 3 and "needle" not in screen_text(app)
        await find(pilot, wait, "NEEDLE", "3 of 3")  # any case; the newest first
        cell = current(app)
        assert isinstance(cell, ActionCell) and cell.expanded
        assert cell is cells(app, ActionCell)[-1]
        await wait(pilot, lambda: in_sight(app, cell), timeout=5, what="the hit in sight")
        assert "the needle is here" in screen_text(app)
        assert app.chat is not None and app.chat.view.find_marks is not None
        marked = [cell.render_line(y) for y in range(cell.content_size.height)]
        line = next(s for s in marked if "needle" in s.text)
        styles = [seg.style for seg in line if seg.text.lower() == "needle"]
        assert styles and all(s is not None and s.reverse for s in styles)
        assert all(s is not None and s.underline for s in styles)  # the current hit's line
        other = cells(app, ActionCell)[0]  # another hit, not the current one
        other.expanded = True
        await pilot.pause()
        lines = [other.render_line(y) for y in range(other.content_size.height)]
        line = next(s for s in lines if "needle" in s.text)
        styles = [seg.style for seg in line if seg.text.lower() == "needle"]
        assert styles and all(s is not None and s.reverse and not s.underline for s in styles)

        await pilot.press("escape")  # closes, unmarks, back to typing
        assert not bar(app).display
        assert app.chat.view.find_marks is None
        assert app.chat.query_one(Composer).has_focus_within


async def test_a_hit_on_a_page_not_loaded_loads_that_page(
    app_options: AppOptions, wait: Any
) -> None:
    output = FOLDED.replace("needle", "needle{i}.")  # one hit per turn's output
    app = resumed(app_options, save_conversation(app_options, turns=60, output=output))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        assert app.chat is not None
        view = app.chat.view
        assert view.window[0] > 150  # the first message is far above the window
        await find(pilot, wait, "a long session", "1 of 1")
        await wait(pilot, lambda: view.window[0] == 0, timeout=10, what="the first page")
        await wait(
            pilot,
            lambda: any(c.has_class("-find-current") for c in cells(app)),
            timeout=5,
            what="the hit's cell",
        )
        cell = current(app)
        assert isinstance(cell, UserCell) and cell.text == "a long session"
        await wait(pilot, lambda: in_sight(app, cell), timeout=5, what="the hit in sight")
        assert "a long session" in screen_text(app)

        # A page in the middle (neither end), its hit folded away in a command's output.
        await find(pilot, wait, "needle30.", "1 of 1")
        await wait(
            pilot,
            lambda: "the needle30. is here" in screen_text(app),
            timeout=10,
            what="the hit in sight",
        )
        cell = current(app)
        assert isinstance(cell, ActionCell) and cell.expanded
        assert cell.action_event.tool_call_id == "call_30"
        oldest, newest = view.window
        assert oldest > 0 and newest < 2 + 4 * 60


async def test_enter_and_shift_enter_go_round_the_hits(app_options: AppOptions, wait: Any) -> None:
    app = resumed(app_options, save_conversation(app_options, turns=3))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await find(pilot, wait, "answer a", "3 of 3")  # the nearest above the bottom
        assert current(app).copy_text() == "answer a2a"
        assert marked_current(current(app), "answer a")
        await pilot.press("enter")
        assert count(app) == "1 of 3 · from the top"
        assert current(app).copy_text() == "answer a0a"
        await pilot.press("enter")
        assert count(app) == "2 of 3"
        await pilot.press("shift+enter")
        assert count(app) == "1 of 3"
        await pilot.press("up")
        assert count(app) == "3 of 3 · from the bottom"
        assert current(app).copy_text() == "answer a2a"
        await pilot.press("down")
        assert count(app) == "1 of 3 · from the top"


async def test_no_match_says_so(app_options: AppOptions, wait: Any) -> None:
    app = resumed(app_options, save_conversation(app_options, turns=2))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await find(pilot, wait, "zebra", "No matches")
        assert bar(app).query_one("#find-count").has_class("-missing")
        await pilot.press("enter")  # nowhere to go: still says so
        assert count(app) == "No matches"
        assert "No matches" in screen_text(app)


async def test_the_count_follows_a_run_and_find_opens_with_a_term(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("The parser splits on spaces.", usage=USAGE)
    llm_server.reply_text("The parser is fixed.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "/find parser")
        await wait(pilot, lambda: count(app) == "No matches", timeout=10, what="no match yet")
        assert bar(app).term == "parser" and bar(app).input.has_focus
        await pilot.press("escape")
        await submit(pilot, "What does the parser do?")
        await wait(pilot, lambda: len(llm_server.requests) == 1, what="the first reply")
        await pilot.press("ctrl+f")  # the term is kept
        await wait(pilot, lambda: count(app).endswith("of 2"), timeout=10, what="two hits")
        await pilot.press("escape")
        await submit(pilot, "Fix the parser.")
        await pilot.press("ctrl+f")
        await wait(pilot, lambda: count(app).endswith("of 4"), timeout=20, what="four hits")


async def test_find_is_listed_in_help_the_footer_and_the_palette(
    app_options: AppOptions, wait: Any
) -> None:
    from textual.command import CommandPalette

    from ohtui.tui.screens.help import HelpScreen

    app = OhtuiApp(app_options)
    async with app.run_test(size=(120, 60)) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        assert "^f Find" in screen_text(app).splitlines()[-1]  # the footer
        await submit(pilot, "/help")
        await wait(pilot, lambda: isinstance(app.screen, HelpScreen), timeout=5, what="help")
        shown = screen_text(app)
        assert "Ctrl+F" in shown and "/find" in shown
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await wait(pilot, lambda: isinstance(app.screen, CommandPalette), timeout=5, what="palette")
        await type_text(pilot, "find")
        await wait(pilot, lambda: "/find" in screen_text(app), timeout=5, what="/find offered")
        await pilot.press("enter")  # runs it: the bar opens
        await wait(pilot, lambda: bar(app).input.has_focus, timeout=5, what="the find bar")
