"""Context management in the chat: the context meter, /condense with its progress and its
quiet expandable line (live and on resume), and the skills a message fired."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import (
    SIZE,
    USAGE,
    cell_text,
    cells,
    chat_ready,
    screen_text,
    status,
    submit,
    type_text,
    user_message_texts,
)
from llm_server import ScriptedLLMServer
from textual.content import Content

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.widgets.cells import NoticeCell, UserCell
from ohtui.tui.widgets.composer import Composer
from ohtui.tui.widgets.context_cells import CondensationCell
from ohtui.tui.widgets.status_bar import NEAR_TRIGGER, StatusBar

pytestmark = pytest.mark.anyio

SUMMARY = "The user greeted the agent four times; it answered each."
SMALL_CONDENSER = "[context]\nmax_size = 10\nkeep_first = 1\n"


def configure(config_file: Path, text: str) -> None:
    """Add tables to the test's config.toml."""
    config_file.write_text(config_file.read_text(encoding="utf-8") + text, encoding="utf-8")


def meter(app: OhtuiApp) -> str:
    """The context meter as the status bar shows it ("" when it is not shown)."""
    assert app.chat is not None
    plain = app.chat.status_bar.render().plain
    words = plain.split("  ")
    return next((word for word in words if word.startswith("ctx ")), "")


def meter_style(app: OhtuiApp) -> str:
    """The style of the meter's text in the status bar."""
    assert app.chat is not None
    rendered = app.chat.status_bar.render()
    start = rendered.plain.find("ctx ")
    styles = [str(span.style) for span in rendered.spans if span.start <= start < span.end]
    return " ".join(styles)


async def exchange(pilot: Any, wait: Any, text: str) -> None:
    """Send a message and wait for the run to finish."""
    await submit(pilot, text)
    await wait(
        pilot, lambda: status(pilot.app) == "finished", timeout=60, what=f"the reply to {text!r}"
    )


# --- the meter -------------------------------------------------------------------------------


async def test_the_meter_shows_context_against_the_window_and_turns_amber_near_the_threshold(
    app_options: AppOptions, config_file: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    configure(config_file, "[context]\nthreshold = 0.5\nmax_input_tokens = 1000000\n")
    llm_server.reply_text("First.", usage=USAGE)
    # 399,900 + 99 tokens: just under 80 % of the 500,000-token trigger.
    llm_server.reply_text("Second.", usage={"prompt_tokens": 399_900, "completion_tokens": 99})
    llm_server.reply_text("Third.", usage={"prompt_tokens": 399_900, "completion_tokens": 100})
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        assert meter(app) == ""  # nothing counted before the first call
        await exchange(pilot, wait, "one")
        await wait(pilot, lambda: meter(app) == "ctx 1.2k/1M", what="the first count")
        assert "warning" not in meter_style(app) and "dim" in meter_style(app)
        await submit(pilot, "two")
        await wait(pilot, lambda: meter(app) == "ctx 400k/1M", what="the second count")
        assert app.chat is not None and not app.chat.status_bar.context_near_trigger
        assert "warning" not in meter_style(app)
        await submit(pilot, "three")
        await wait(
            pilot, lambda: app.chat.status_bar.context_used == 400_000, what="the third count"
        )
        assert app.chat.status_bar.context_near_trigger
        assert "warning" in meter_style(app)
        assert "ctx 400k/1M" in screen_text(app)


async def test_an_unknown_window_shows_just_the_tokens(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("Hi.", usage={"prompt_tokens": 9000, "completion_tokens": 500})
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await exchange(pilot, wait, "hello")
        await wait(pilot, lambda: meter(app) == "ctx 9.5k", what="the count")
        assert app.chat is not None and not app.chat.status_bar.context_near_trigger


async def test_near_is_eighty_percent_of_the_strategys_trigger() -> None:
    from textual.app import App, ComposeResult

    class Bar(App[None]):
        def compose(self) -> ComposeResult:
            yield StatusBar(lambda: 0.0)

    app = Bar()
    async with app.run_test(size=(120, 1)):
        bar = app.query_one(StatusBar)
        bar.context_window = 100_000
        bar.context_used = int(100_000 * NEAR_TRIGGER) - 1
        assert not bar.context_near_trigger  # trigger 1.0: amber from 80 % of the window
        bar.context_used = int(100_000 * NEAR_TRIGGER)
        assert bar.context_near_trigger
        bar.context_trigger = 0.5  # a threshold of half the window: amber from 40 %
        bar.context_used = 39_999
        assert not bar.context_near_trigger
        bar.context_used = 40_000
        assert bar.context_near_trigger
        bar.context_window = None  # unknown window: never amber
        assert not bar.context_near_trigger
        rendered = bar.render()
        assert isinstance(rendered, Content) and "ctx 40k" in rendered.plain
        assert "ctx 40k/" not in rendered.plain


# --- /condense -------------------------------------------------------------------------------


async def test_condense_without_a_condenser_says_which_setting_turns_one_on(
    app_options: AppOptions, config_file: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    configure(config_file, '[context]\nstrategy = "sliding_window"\n')
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "/condense")  # Enter first accepts the menu's "/condense "
        await pilot.press("enter")
        await wait(pilot, lambda: bool(app._notifications), what="the message")
        message = " ".join(n.message for n in app._notifications)
        assert "/condense needs a summarizing condenser" in message
        assert "sliding window" in message
        assert 'strategy = "summarizing_condenser" in the [context] table' in message
        assert app.chat is not None and not app.chat.status_bar.condensing
    assert llm_server.requests == []  # nothing was asked of the model


async def test_condense_on_a_short_conversation_says_there_is_nothing_to_condense(
    app_options: AppOptions, config_file: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    configure(config_file, SMALL_CONDENSER)
    llm_server.reply_text("Hi.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await exchange(pilot, wait, "hello")
        await submit(pilot, "/condense")  # Enter first accepts the menu's "/condense "
        await pilot.press("enter")
        await wait(
            pilot,
            lambda: any("Nothing to condense" in n.message for n in app._notifications),
            what="the message",
        )
        assert app.chat is not None
        await wait(pilot, lambda: not app.chat.status_bar.condensing, what="the end")
        assert cells(app, CondensationCell) == []


async def test_typing_while_a_slow_summary_is_written_then_the_line_expands_to_it(
    app_options: AppOptions, config_file: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    configure(config_file, SMALL_CONDENSER)
    for number in range(4):
        llm_server.reply_text(f"Hello {number}.", usage=USAGE)
    llm_server.reply_text(SUMMARY, delay=2.0)  # the summary takes two seconds
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        for number in range(4):
            await exchange(pilot, wait, f"hi {number}")
        assert app.chat is not None
        bar = app.chat.status_bar
        await submit(pilot, "/condense keep the greetings")
        await wait(pilot, lambda: bar.condensing, timeout=5, what="the progress state")
        assert "condensing…" in screen_text(app)
        started = time.monotonic()
        await type_text(pilot, "next task")  # the UI answers while the summary is written
        typed_in = time.monotonic() - started
        composer = app.chat.query_one(Composer)
        assert composer.text == "next task"
        assert bar.condensing, "the summary took 2 s: typing must not have waited for it"
        assert typed_in < 1.5, f"typing took {typed_in:.1f} s"
        await wait(pilot, lambda: not bar.condensing, what="the summary")
        assert "condensing…" not in screen_text(app)
        line = cells(app, CondensationCell)
        assert len(line) == 1
        cell = line[0]
        assert cell.forgotten > 0
        assert cell_text(cell).startswith(f"⋯ condensed {cell.forgotten} event")
        assert SUMMARY not in cell_text(cell)  # one quiet line until expanded
        assert composer.text == "next task"  # what was typed is still there
        # The focus reached the summarizer.
        summary_request = llm_server.requests[-1]
        assert "keep the greetings" in " ".join(user_message_texts(summary_request))
        cell.focus()
        await pilot.press("enter")
        assert cell.expanded and SUMMARY in cell_text(cell)
        await pilot.click(cell)
        assert not cell.expanded
        # The meter counts the condensed context at once, before any other call.
        conversation = app.chat.session.conversation
        assert conversation is not None and conversation.conversation_stats.context is not None
        assert bar.context_used == conversation.conversation_stats.context.tokens != 1240


async def test_a_message_sent_while_a_slow_summary_is_written_shows_at_once_as_queued(
    app_options: AppOptions, config_file: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """/condense holds the conversation while the summary is written (17 s with a slow
    model): a message sent meanwhile must show at once, as queued, then go when it ends."""
    configure(config_file, SMALL_CONDENSER)
    for number in range(4):
        llm_server.reply_text(f"Hello {number}.", usage=USAGE)
    llm_server.reply_text(SUMMARY, delay=3.0)
    llm_server.reply_text("On it.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        for number in range(4):
            await exchange(pilot, wait, f"hi {number}")
        assert app.chat is not None
        bar = app.chat.status_bar
        await submit(pilot, "/condense")
        await pilot.press("enter")
        await wait(pilot, lambda: bar.condensing, timeout=5, what="the progress state")
        await submit(pilot, "next task")
        await pilot.pause(0.3)
        assert bar.condensing, "the summary takes 3 s: the message was sent while it is written"
        queued = [c for c in cells(app, UserCell) if c.queued]
        assert [c.text for c in queued] == ["next task"]
        assert "(queued)" in screen_text(app)
        await wait(
            pilot,
            lambda: status(app) == "finished" and not bar.condensing,
            timeout=90,
            what=f"the queued message to run ({status(app)}, {len(llm_server.requests)} calls)",
        )
        assert not [c for c in cells(app, UserCell) if c.queued]
        assert "On it." in screen_text(app)
        assert "next task" in " ".join(user_message_texts(llm_server.requests[-1]))


async def test_a_resumed_conversation_shows_its_condensation_the_same_way(
    app_options: AppOptions, config_file: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    configure(config_file, SMALL_CONDENSER)
    for number in range(4):
        llm_server.reply_text(f"Hello {number}.", usage=USAGE)
    llm_server.reply_text(SUMMARY)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        for number in range(4):
            await exchange(pilot, wait, f"hi {number}")
        await submit(pilot, "/condense")  # Enter first accepts the menu's "/condense "
        await pilot.press("enter")
        await wait(pilot, lambda: bool(cells(app, CondensationCell)), what="the condensation")
        forgotten = cells(app, CondensationCell)[0].forgotten

    resumed = OhtuiApp(replace(app_options, resume_id=app_options.conversation_id))
    async with resumed.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(resumed), what="the resumed chat")
        await wait(pilot, lambda: bool(cells(resumed, CondensationCell)), what="the line")
        cell = cells(resumed, CondensationCell)[0]
        assert cell.forgotten == forgotten
        assert SUMMARY not in cell_text(cell)
        cell.focus()
        await pilot.press("enter")
        assert SUMMARY in cell_text(cell)


# --- skills ------------------------------------------------------------------------------------

TESTING_SKILL = """---
name: testing
triggers:
  - pytest
---
Run the tests with `pytest -q`.
"""
GIT_SKILL = """---
name: git
triggers:
  - commit
---
Write commit messages in the imperative.
"""


def skill_lines(app: OhtuiApp) -> list[str]:
    """The quiet lines naming fired skills, top to bottom."""
    return [cell_text(c) for c in cells(app, NoticeCell) if cell_text(c).startswith("✦ skill")]


async def test_the_skills_a_message_fired_show_under_it_live_and_on_resume(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    skills = project / ".agents" / "skills"
    skills.mkdir(parents=True)
    (skills / "testing.md").write_text(TESTING_SKILL, encoding="utf-8")
    (skills / "git.md").write_text(GIT_SKILL, encoding="utf-8")
    llm_server.reply_text("Done.", usage=USAGE)
    llm_server.reply_text("Fine.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await exchange(pilot, wait, "run pytest then commit")
        assert skill_lines(app) == ["✦ skills: testing, git"] or skill_lines(app) == [
            "✦ skills: git, testing"
        ]
        await exchange(pilot, wait, "thanks")  # no trigger: no line
        assert len(skill_lines(app)) == 1
        # The line sits right under the message that fired it.
        assert app.chat is not None
        children = list(app.chat.view.children)
        user = next(c for c in cells(app, UserCell) if "pytest" in c.text)
        line = next(c for c in cells(app, NoticeCell) if cell_text(c).startswith("✦"))
        assert children.index(line) == children.index(user) + 1
        shown = skill_lines(app)

    resumed = OhtuiApp(replace(app_options, resume_id=app_options.conversation_id))
    async with resumed.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(resumed), what="the resumed chat")
        await wait(pilot, lambda: bool(skill_lines(resumed)), what="the skills line")
        assert skill_lines(resumed) == shown


# --- plugins ----------------------------------------------------------------------------------


async def test_an_unreachable_plugin_source_is_a_clear_message_within_seconds(
    app_options: AppOptions, config_file: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    from ohtui.tui.widgets.cells import ErrorCell

    configure(config_file, '[agent]\nplugins = ["http://127.0.0.1:9/nowhere.git#main"]\n')
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        started = time.monotonic()
        await wait(pilot, lambda: bool(cells(app, ErrorCell)), what="the error")
        took = time.monotonic() - started
        error = cell_text(cells(app, ErrorCell)[0])
        assert "http://127.0.0.1:9/nowhere.git" in error
        assert "Traceback" not in error
        assert took < 15, f"the failure took {took:.1f} s"
        assert status(app) == "error"
        assert "Fix or remove it in /settings (Plugins)" in error  # what to do
