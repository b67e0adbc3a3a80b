"""The chat screen's keys, end to end: Esc pause / stop, Ctrl+C stop / quit, Ctrl+Q quit,
Shift+Tab policy, Ctrl+O review (in test_chat_approval), Tab between cells (in test_chat_flows).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import (
    SIZE,
    USAGE,
    action_cells,
    cell_text,
    cells,
    chat_ready,
    screen_text,
    status,
    submit,
)
from llm_server import ScriptedLLMServer

from ohtui.sdk import AlwaysConfirm, ConfirmRisky, NeverConfirm, ObservationEvent, PauseEvent
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.widgets.cells import NoticeCell

pytestmark = pytest.mark.anyio

PAUSE_NOTICE = "⏸ Paused. Send a message to go on."


def pause_notices(app: OhtuiApp) -> list[NoticeCell]:
    """The pause notices shown."""
    return [c for c in cells(app, NoticeCell) if c.text == PAUSE_NOTICE]


def pause_events(app: OhtuiApp) -> int:
    """How many PauseEvents the conversation recorded."""
    assert app.chat is not None and app.chat.session.conversation is not None
    return sum(isinstance(e, PauseEvent) for e in app.chat.session.conversation.state.events)


SLEEP = "touch started && sleep 30"


async def start_sleeping_command(app: OhtuiApp, pilot: Any, wait: Any, project: Path) -> None:
    """Send a message whose answer runs SLEEP, and wait until the shell runs it."""
    await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
    await submit(pilot, "wait a while")
    await wait(pilot, (project / "started").exists, what="the sleep to start")
    assert status(app) == "running"
    assert action_cells(app, "terminal")[0].result is None


async def test_escape_pauses_after_the_current_step(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    llm_server.reply_tool_call("terminal", {"command": "echo step-one"}, delay=0.8, usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "go")
        await wait(pilot, lambda: len(llm_server.requests) == 1, what="the LLM call")
        await pilot.press("escape")
        await wait(pilot, lambda: "Pausing after this step" in screen_text(app), what="toast")
        await wait(pilot, lambda: status(app) == "paused", what="the pause")
        # The step in flight finished: its action ran, and no further LLM call was made.
        assert "✓ exit 0" in cell_text(action_cells(app, "terminal")[0])
        assert len(llm_server.requests) == 1
        assert len(pause_notices(app)) == 1
        assert pause_events(app) == 1
        assert "paused" in screen_text(app).splitlines()[0]

        await pilot.press("escape")  # nothing runs: nothing more to pause
        await pilot.pause(0.2)
        assert len(pause_notices(app)) == 1
        assert pause_events(app) == 1

        llm_server.reply_text("Going on.", usage=USAGE)
        await submit(pilot, "go on")
        await wait(pilot, lambda: status(app) == "finished", what="the run to go on")
        assert len(pause_notices(app)) == 1


async def test_escape_twice_stops_a_running_command_now(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    llm_server.reply_tool_call("terminal", {"command": SLEEP}, usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await start_sleeping_command(app, pilot, wait, project)
        started = time.monotonic()
        await pilot.press("escape", "escape")
        await wait(pilot, lambda: status(app) == "paused", timeout=5, what="the stop")
        assert time.monotonic() - started < 4
        terminal = action_cells(app, "terminal")[0]
        assert terminal.result is not None and terminal.result.failed
        assert app.chat is not None and app.chat.session.conversation is not None
        events = app.chat.session.conversation.state.events
        observation = next(e for e in events if isinstance(e, ObservationEvent)).observation
        assert observation.interrupted
        assert "✗ interrupted" in cell_text(terminal)
        assert len(pause_notices(app)) == 1
        assert len(llm_server.requests) == 1


async def test_ctrl_c_once_stops_the_run_and_the_app_stays(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    llm_server.reply_tool_call("terminal", {"command": SLEEP}, usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await start_sleeping_command(app, pilot, wait, project)
        started = time.monotonic()
        await pilot.press("ctrl+c")
        await wait(pilot, lambda: status(app) == "paused", timeout=5, what="the stop")
        assert time.monotonic() - started < 4
        assert "✗ interrupted" in cell_text(action_cells(app, "terminal")[0])
        await wait(pilot, lambda: "Stopping now" in screen_text(app), what="the toast")
        assert app.is_running
        assert app.resume_hint is None


async def test_ctrl_c_twice_quits_and_says_how_to_resume(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    fixed_id = app_options.conversation_id
    assert fixed_id is not None
    llm_server.reply_text("Hello.")
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "hi")
        await wait(pilot, lambda: status(app) == "finished", what="the reply")
        await pilot.press("ctrl+c")
        assert app.is_running
        await wait(pilot, lambda: "Press Ctrl+C again" in screen_text(app), what="the toast")
        assert app.is_running
        await pilot.press("ctrl+c")
        assert not app.is_running
    assert app.resume_hint is not None
    assert fixed_id in app.resume_hint
    assert f"ohtui --resume {fixed_id}" in app.resume_hint


async def test_ctrl_c_twice_while_running_quits(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    fixed_id = app_options.conversation_id
    assert fixed_id is not None
    app_options.policy = "never"
    llm_server.reply_tool_call("terminal", {"command": SLEEP}, usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await start_sleeping_command(app, pilot, wait, project)
        started = time.monotonic()
        await pilot.press("ctrl+c", "ctrl+c")
        assert not app.is_running
        assert time.monotonic() - started < 1.5
    assert app.resume_hint is not None and fixed_id in app.resume_hint


async def test_ctrl_q_quits_at_once_while_a_command_runs(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    fixed_id = app_options.conversation_id
    assert fixed_id is not None
    app_options.policy = "never"
    llm_server.reply_tool_call("terminal", {"command": SLEEP}, usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await start_sleeping_command(app, pilot, wait, project)
        started = time.monotonic()
        await pilot.press("ctrl+q")
        elapsed = time.monotonic() - started
        assert not app.is_running
    assert elapsed < 1.0
    assert app.resume_hint is not None
    assert f"ohtui --resume {fixed_id}" in app.resume_hint


async def test_ctrl_q_quits_at_once_while_the_model_is_slow(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    fixed_id = app_options.conversation_id
    assert fixed_id is not None
    llm_server.reply_text("too late", delay=30, usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "hello?")
        await wait(pilot, lambda: len(llm_server.requests) == 1, what="the LLM call")
        assert status(app) == "running"
        started = time.monotonic()
        await pilot.press("ctrl+q")
        elapsed = time.monotonic() - started
        assert not app.is_running
    assert elapsed < 1.0
    assert app.resume_hint is not None
    assert f"ohtui --resume {fixed_id}" in app.resume_hint


async def test_ctrl_q_quits_from_a_modal_too(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("Hello.")
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "hi")
        await wait(pilot, lambda: status(app) == "finished", what="the reply")
        await submit(pilot, "/help")
        await wait(pilot, lambda: type(app.screen).__name__ == "HelpScreen", what="help")
        await pilot.press("ctrl+q")
        assert not app.is_running
    assert app.resume_hint is not None


def engine_policy(app: OhtuiApp) -> type:
    """The class of the engine's confirmation policy (its rules policy's fallback)."""
    assert app.chat is not None and app.chat.session.conversation is not None
    return type(app.chat.session.conversation.state.confirmation_policy.fallback)


async def test_shift_tab_cycles_the_policy_in_the_badge_and_the_engine(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "always"
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        assert app.chat is not None
        bar = app.chat.status_bar
        assert bar.policy == "always"
        assert engine_policy(app) is AlwaysConfirm
        assert "always confirm" in screen_text(app).splitlines()[0]
        for name, label, policy in (
            ("risky", "confirm risky", ConfirmRisky),
            ("never", "never confirm", NeverConfirm),
            ("always", "always confirm", AlwaysConfirm),
        ):
            await pilot.press("shift+tab")
            assert bar.policy == name
            await wait(pilot, lambda p=policy: engine_policy(app) is p, what=f"policy {name}")
            assert label in screen_text(app).splitlines()[0]
            assert app.chat.session.policy == name
