"""The LLM path is warmed up, and the conversation picker got ready, once the first frame has
been idle, never before it."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from chat_helpers import SIZE, chat_ready, submit
from llm_server import ScriptedLLMServer

import ohtui.sdk.llm.warm_up as warm_up_module
import ohtui.tui.app as app_module
from ohtui.tui.app import OhtuiApp
from ohtui.tui.app.input_pace import KEY_GRACE
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.picker import PickerScreen
from ohtui.tui.style_preload import css_files

pytestmark = pytest.mark.anyio


async def test_warm_up_waits_for_an_idle_first_frame_then_connects_to_the_llm(
    app_options: AppOptions,
    llm_server: ScriptedLLMServer,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(app_module, "LLM_WARM_AFTER", 0.6)
    calls: list[tuple[float, Any, str]] = []
    paces: list[Any] = []
    painted: list[float] = []

    def recording(llm: Any = None, pause: Any = None) -> None:
        calls.append((time.monotonic(), llm, threading.current_thread().name))
        paces.append(pause)

    monkeypatch.setattr(warm_up_module, "warm_up", recording)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        painted.append(time.monotonic())  # the first frame is on screen here
        assert calls == []
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await wait(pilot, lambda: bool(calls), what="the warm-up")
        await pilot.pause(0.3)
    assert len(calls) == 1
    at, llm, thread = calls[0]
    assert at - painted[0] >= 0.6 * 0.9  # the first frame was idle for LLM_WARM_AFTER
    assert thread == "ohtui-warm-up"  # off the UI thread
    assert llm is not None and llm.base_url == llm_server.base_url
    assert paces == [app.give_way]  # its imports give way to keys


async def test_work_gives_way_to_keys_for_a_moment_after_each(
    app_options: AppOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "LLM_WARM_AFTER", 60.0)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        started = time.monotonic()
        app.give_way()  # no key typed: at once
        assert time.monotonic() - started < KEY_GRACE / 2
        await pilot.press("h")
        pressed = app._last_input
        assert pressed >= started
        app.give_way()  # right after a key: until KEY_GRACE has passed since it
        assert time.monotonic() >= pressed + KEY_GRACE


async def test_the_picker_is_got_ready_once_the_first_frame_is_idle_and_still_opens(
    app_options: AppOptions, wait: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "WARM_UP_AFTER", 0.6)
    monkeypatch.setattr(warm_up_module, "warm_up", lambda llm=None, pause=None: None)
    app = OhtuiApp(app_options)
    picker_css = str(css_files(PickerScreen)[0])
    async with app.run_test(size=SIZE) as pilot:
        painted = time.monotonic()  # the first frame is on screen here
        assert not app.stylesheet.has_source(picker_css)
        await wait(pilot, lambda: app.stylesheet.has_source(picker_css), what="the preload")
        assert time.monotonic() - painted >= 0.6 * 0.9  # the first frame was idle that long
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        sources = dict(app.stylesheet.source)

        await submit(pilot, "/resume")
        await wait(pilot, lambda: isinstance(app.screen, PickerScreen), what="the picker")
        screen = app.screen
        assert isinstance(screen, PickerScreen)
        await wait(pilot, lambda: not screen.pending, what="its rows")
        assert app.stylesheet.source == sources  # it brought nothing new to parse


def test_the_app_module_loads_no_session_opening_or_engine() -> None:
    """What the first frame imports is small: the session, the opening of a conversation, the
    engine and pydantic load once the session starts (a module moved below one of them and
    imported by the app at its top would pull them all in)."""
    import subprocess
    import sys

    script = (
        "import sys, ohtui.cli, ohtui.tui.app; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'litellm') "
        "or m.startswith(('ohtui.sdk', 'ohtui.opening', 'ohtui.tui.session'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"
