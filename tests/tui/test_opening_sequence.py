"""The opening sequence in the real app: what a new user sees first when the workspace, the
config file or the data folder is not as expected."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import SIZE, chat_ready, screen_text, status
from llm_server import ScriptedLLMServer

from ohtui.sdk.conversation.listing import list_conversations
from ohtui.sdk.conversation.store import ConversationStore
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.session import Session

pytestmark = pytest.mark.anyio

WIDE = (240, 30)
"""Wide enough that a message with a temporary path fits on one line."""


async def test_a_workspace_that_does_not_exist_is_named_and_not_created(
    app_options: AppOptions, tmp_path: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    missing = tmp_path / "projet"
    app = OhtuiApp(replace(app_options, workspace=missing))
    async with app.run_test(size=WIDE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the opening to fail")
        assert status(app) == "error"
        await wait(
            pilot,
            lambda: f"The workspace folder '{missing}' does not exist" in screen_text(app),
            what="the error on screen",
        )
    assert not missing.exists()
    assert llm_server.requests == []


@pytest.mark.parametrize("answer", ["escape", "s"])
async def test_an_invalid_config_without_a_model_shows_the_problem_before_the_welcome_form(
    app_options: AppOptions, wait: Any, answer: str
) -> None:
    """The problem comes first; however it is closed, the first-run form follows (once)."""
    from ohtui.tui.screens.config_problem import ConfigProblemScreen
    from ohtui.tui.screens.settings import SettingsScreen

    assert app_options.config_file is not None
    app_options.config_file.write_text('[llm]\ntemperature = "hot"\n', encoding="utf-8")
    app = OhtuiApp(replace(app_options, model=None, base_url=None, api_key=None))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: status(app) == "setup", what="the setup status")
        await wait(pilot, lambda: isinstance(app.screen, ConfigProblemScreen), what="the problem")
        await pilot.pause(0.2)
        assert isinstance(app.screen, ConfigProblemScreen)  # nothing covers it
        assert not any(isinstance(s, SettingsScreen) for s in app.screen_stack)
        await pilot.press(answer)
        await wait(pilot, lambda: isinstance(app.screen, SettingsScreen), what="the form")
        screen = app.screen
        assert isinstance(screen, SettingsScreen) and screen.first_run
        assert sum(isinstance(s, SettingsScreen) for s in app.screen_stack) == 1


def burst(app: Any, *keys: str) -> None:
    """Keys as a fast typist or a paste sends them: all queued before the first is handled."""
    from textual import events

    for key in keys:
        character = key if len(key) == 1 else None
        app.post_message(events.Key(key, character))


async def test_keys_typed_right_after_opening_the_settings_land_in_the_settings(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    from ohtui.tui.screens.settings import SettingsScreen
    from ohtui.tui.widgets.composer import Composer
    from ohtui.tui.widgets.model_input import ModelInput

    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        assert app.chat is not None
        app.chat.query_one(Composer).text = "/settings"
        burst(app, "enter", "ctrl+a", "ctrl+k", "g", "p", "t")
        await wait(pilot, lambda: isinstance(app.screen, SettingsScreen), what="the settings")
        await pilot.pause(0.3)
        assert app.screen.query_one(ModelInput).value == "gpt"
        assert app.chat.query_one(Composer).text == ""


async def test_keys_typed_right_after_a_key_that_opens_a_picker_go_to_the_picker(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """`/confirm` Enter ↓ Enter, typed at once: the policy picker opens and takes ↓ Enter."""
    from ohtui.settings.choices import ConfirmationPolicy
    from ohtui.tui.widgets.composer import Composer

    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        assert app.chat is not None
        before = app.chat.status_bar.policy
        expected = ConfirmationPolicy(before).next()
        app.chat.query_one(Composer).text = "/confirm"
        burst(app, "enter", "down", "enter")
        await wait(pilot, lambda: app.screen is app.chat, what="the picker to close")
        await pilot.pause(0.2)
        assert app.chat.status_bar.policy == expected
        assert app.chat.query_one(Composer).text == ""


async def test_keys_typed_right_after_tab_follow_the_focus(wait: Any) -> None:
    """The mechanism on its own: Tab moves on, the next key goes where the focus went."""
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
        burst(app, "a", "tab", "b", "c", "shift+tab", "d")  # type: ignore[arg-type]
        await pilot.pause(0.5)
        assert app.query_one("#first", Input).value == "ad"
        assert app.query_one("#second", Input).value == "bc"


async def test_the_provider_follows_a_typed_provider_and_model(
    app_options: AppOptions, wait: Any
) -> None:
    from textual.widgets import Select

    from ohtui.tui.screens.settings import SettingsScreen

    app = OhtuiApp(replace(app_options, model=None, base_url=None, api_key=None))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, SettingsScreen), what="the first run")
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        await wait(pilot, lambda: screen._catalog is not None, what="the settings to load")
        provider = screen.query_one("#provider", Select)
        assert provider.value == "anthropic"
        await pilot.press(*"gemini/gem")
        await pilot.pause()
        assert provider.value == "gemini"
        for _ in range(len("gemini/gem")):
            await pilot.press("backspace")
        await pilot.press(*"bedrock/")  # not a featured provider: it joins the list
        await pilot.pause()
        assert provider.value == "bedrock"
        for _ in range(len("bedrock/")):
            await pilot.press("backspace")
        await pilot.press(*"nosuch/model")  # not a provider: the choice stays
        await pilot.pause()
        assert provider.value == "bedrock"


async def test_behaviour_rows_come_from_the_settings_fields_and_save_to_the_file(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    """Every behaviour field has a row labelled with its title; what the rows say is saved
    (invalid values named by their row, nothing saved); the file's other keys stay."""
    import tomllib

    from textual.widgets import Input, Label, Select, Switch

    from ohtui.settings.schema import Settings
    from ohtui.tui.screens.settings import SettingsScreen
    from ohtui.tui.widgets.setting_rows import BEHAVIOUR, CONTEXT

    assert app_options.config_file is not None
    app_options.config_file.write_text(
        '[ui]\nauto_title = false\n[agent]\ntools = ["terminal"]\n', encoding="utf-8"
    )
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        assert app.chat is not None
        app.open_settings()
        await wait(pilot, lambda: isinstance(app.screen, SettingsScreen), what="the settings")
        screen = app.screen
        labels = [str(label.render()) for label in screen.query(".setting Label").results(Label)]
        defaults = Settings()
        generated = [field.title(defaults) for field in (*BEHAVIOUR, *CONTEXT)]
        assert labels == [*generated, "Plugins"]
        assert "Steps per run" in labels and "Sandbox" in labels
        steps = screen.query_one("#setting-agent-max-iteration-per-run", Input)
        assert steps.value == "500"
        steps.value = "0"
        await pilot.press("ctrl+s")
        await wait(
            pilot,
            lambda: "Steps per run: expected a number at least 1" in screen_text(app),
            what="the error",
        )
        assert app.screen is screen
        steps.value = "40"
        screen.query_one("#setting-sandbox-mode", Select).value = "read-only"
        screen.query_one("#setting-sandbox-network", Switch).value = True
        await pilot.press("ctrl+s")
        await wait(pilot, lambda: app.screen is app.chat, what="back to the chat")
    saved = tomllib.loads(app_options.config_file.read_text(encoding="utf-8"))
    assert saved["agent"] == {"tools": ["terminal"], "max_iteration_per_run": 40}
    assert saved["sandbox"] == {"mode": "read-only", "network": True}
    assert saved["ui"] == {"auto_title": False}


async def _activity_while(app: OhtuiApp, pilot: Any, wait: Any, shown: list[str]) -> None:
    """Record each activity the status bar shows from now on (its text as drawn)."""
    from ohtui.tui.widgets.status_bar import StatusBar

    await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
    assert app.chat is not None
    bar = app.chat.query_one(StatusBar)
    original = bar.show_activity

    def record(text: str, until: float | None = None, reason: str = "") -> None:
        original(text, until, reason)
        if text:
            shown.append(bar._activity_text())

    bar.show_activity = record  # type: ignore[method-assign]


async def test_a_failing_server_shows_connecting_retrying_and_the_error_in_words(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    from chat_helpers import submit

    assert app_options.config_file is not None
    app_options.config_file.write_text(
        "[ui]\nauto_title = false\n[llm]\nnum_retries = 1\n", encoding="utf-8"
    )
    llm_server.reply_error(503)
    llm_server.reply_error(503)
    app = OhtuiApp(app_options)
    shown: list[str] = []
    server = llm_server.base_url
    async with app.run_test(size=(120, 30)) as pilot:
        await _activity_while(app, pilot, wait, shown)
        await submit(pilot, "hello")
        await wait(pilot, lambda: any(s.startswith("retrying 2/2 in") for s in shown), what="retry")
        line = screen_text(app).splitlines()[0]
        assert "running" in line and "retrying 2/2 in" in line
        assert f"{server} failed (503)" in line
        await wait(pilot, lambda: status(app) == "error", timeout=20, what="the error")
        words = f"error · {server} failed (503)"
        await wait(pilot, lambda: words in screen_text(app).splitlines()[0], what="the words")
    assert shown[0] == "connecting…"
    assert "connecting… (2/2)" in shown
    assert shown[-1] == f"{server} failed (503)"


async def test_a_server_refusing_on_this_machine_is_an_error_at_once_in_words(
    app_options: AppOptions, wait: Any
) -> None:
    """Nothing listens at a loopback base URL: no backoff (retrying will not start a
    server), the error in words at once."""
    from chat_helpers import submit

    app = OhtuiApp(replace(app_options, base_url="http://127.0.0.1:9/v1"))  # nothing listens
    shown: list[str] = []
    async with app.run_test(size=(120, 30)) as pilot:
        await _activity_while(app, pilot, wait, shown)
        await submit(pilot, "hello")
        await wait(pilot, lambda: status(app) == "error", timeout=20, what="the error")
        words = "error · nothing listens at http://127.0.0.1:9/v1"
        await wait(pilot, lambda: words in screen_text(app).splitlines()[0], what="the words")
    assert shown[0] == "connecting…"
    assert not any(s.startswith("retrying") for s in shown)


def test_a_read_only_data_folder_still_opens_old_conversations_and_names_the_setting(
    tmp_path: Path, config_file: Path
) -> None:
    """In bubblewrap, the data folder bound read-only: `--resume` shows the conversation
    read-only and says which setting moves the folder; sending is refused with that reason;
    /new says why it cannot start one."""
    import json
    import sys

    from read_only_storage import run_read_only, save_conversation

    workspace = tmp_path / "project"
    workspace.mkdir()
    data = tmp_path / "data"
    conversation_id = save_conversation(data / "conversations", workspace, "hello there")
    script = Path(__file__).with_name("read_only_app.py")
    result = run_read_only(
        data,
        [sys.executable, str(script), str(data), str(workspace), str(config_file), conversation_id],
        {"PYTHONPATH": f"{Path(__file__).parent}:{Path(__file__).parents[1]}"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    said = json.loads(result.stdout.strip().splitlines()[-1])
    assert said["status"] == "read_only"
    assert said["history"] == ["hello there"]
    assert "Read-only: the conversations folder cannot be written" in said["screen"]
    first, refused = said["notices"][0], said["notices"][1]
    assert f"The conversations folder '{data / 'conversations'}' cannot be written" in first
    assert "Set OHTUI_DATA_DIR (or conversations_dir in the [storage] table" in first
    assert refused == first  # sending says the same
    assert "❯ more please" not in said["after_send"]
    assert said["new_status"] == "error"
    assert any("a new conversation cannot be saved there" in n for n in said["notices"][2:])


async def test_quitting_while_the_conversation_opens_lets_it_go_once_open(
    app_options: AppOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    create = Session._create_conversation
    opened = threading.Event()

    def slow(self: Session) -> Any:
        time.sleep(0.5)  # the user quits meanwhile
        try:
            return create(self)
        finally:
            opened.set()

    monkeypatch.setattr(Session, "_create_conversation", slow)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.1)
        app.quit_now()
    assert opened.wait(30)
    assert app_options.persistence_dir is not None
    store = ConversationStore(app_options.persistence_dir)
    deadline = time.monotonic() + 10
    while store.holders() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.holders() == {}  # let go, not held by this (still running) process
    assert list_conversations(app_options.persistence_dir) == []  # empty: deleted
