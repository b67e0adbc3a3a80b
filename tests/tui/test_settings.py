"""The settings screen and first run, driven through the real app: config.toml, the OS keyring
(a private gnome-keyring), no keyring at all, the test call, and a broken config file."""

from __future__ import annotations

import logging
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import (
    SIZE,
    USAGE,
    action_cells,
    cell_text,
    chat_ready,
    screen_text,
    status,
    submit,
    type_text,
)
from llm_server import ScriptedLLMServer
from textual.widgets import Button

from ohtui.settings.catalog import CUSTOM
from ohtui.settings.secrets import SecretStore, probe_keyring
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.config_problem import ConfigProblemScreen
from ohtui.tui.screens.no_keyring import NoKeyringScreen
from ohtui.tui.screens.settings import SettingsScreen
from ohtui.tui.widgets.model_input import ModelInput

pytestmark = pytest.mark.anyio


@pytest.fixture
def first_run(app_options: AppOptions) -> AppOptions:
    """Nothing configured: no model, no key (only the test config's [ui] table)."""
    return replace(app_options, model=None, base_url=None, api_key=None)


def settings_screen(app: OhtuiApp) -> SettingsScreen:
    screen = app.screen
    assert isinstance(screen, SettingsScreen)
    return screen


async def open_settings(pilot: Any, wait: Any) -> SettingsScreen:
    app = pilot.app
    await wait(pilot, lambda: isinstance(app.screen, SettingsScreen), what="the settings screen")
    screen = settings_screen(app)
    await wait(pilot, lambda: screen._catalog is not None, what="the settings to load")
    return screen


def fill(screen: SettingsScreen, **values: str) -> None:
    """Set form fields by id (model goes into the model input)."""
    for field, value in values.items():
        if field == "model":
            screen.query_one(ModelInput).value = value
        elif field == "provider":
            screen.query_one("#provider").value = value  # type: ignore[attr-defined]
        else:
            screen.query_one(f"#{field.replace('_', '-')}").value = value  # type: ignore[attr-defined]


def log_file() -> str:
    """The file the app logs to (one per test process)."""
    for handler in logging.getLogger().handlers:
        if getattr(handler, "_ohtui", False):
            return str(handler.baseFilename)  # type: ignore[attr-defined]
    raise AssertionError("the app set up no log file")


async def press(pilot: Any, selector: str) -> None:
    """Press a button of the settings screen (scrolled into view first, as a user would)."""
    button = pilot.app.screen.query_one(selector, Button)
    button.scroll_visible(animate=False)
    await pilot.pause()
    button.press()
    await pilot.pause()


def saved_config(options: AppOptions) -> dict[str, Any]:
    assert options.config_file is not None
    return tomllib.loads(options.config_file.read_text(encoding="utf-8"))


async def test_first_run_without_a_keyring_keeps_the_key_in_memory_and_starts(
    first_run: AppOptions, llm_server: ScriptedLLMServer, wait: Any, no_keyring: None
) -> None:
    first_run = replace(first_run, use_keyring=True)
    llm_server.reply_text("Hello!", usage=USAGE)
    app = OhtuiApp(first_run)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, wait)
        assert screen.first_run and status(app) == "setup"
        assert "No OS keyring is available" in screen_text(app)
        fill(
            screen,
            provider=CUSTOM,
            model="test-model",
            base_url=llm_server.base_url,
            api_key="sk-first-run",
        )
        await pilot.press("ctrl+s")
        await wait(pilot, lambda: isinstance(app.screen, NoKeyringScreen), what="the notice")
        text = screen_text(app)
        assert "never in a plain file" in text and "OPENAI_API_KEY" in text
        await pilot.press("m")
        await wait(pilot, lambda: chat_ready(app) and status(app) == "idle", what="the chat")
        await submit(pilot, "hi")
        await wait(pilot, lambda: status(app) == "finished", what="the reply")
    assert llm_server.request_headers[0]["authorization"] == "Bearer sk-first-run"
    config = saved_config(first_run)
    assert config["llm"] == {"model": "openai/test-model", "base_url": llm_server.base_url}
    assert "sk-first-run" not in first_run.config_file.read_text()  # type: ignore[union-attr]


async def test_choosing_an_environment_variable_saves_nothing(
    first_run: AppOptions, wait: Any, no_keyring: None, llm_server: ScriptedLLMServer
) -> None:
    app = OhtuiApp(replace(first_run, use_keyring=True))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, wait)
        fill(screen, model="anthropic/claude-sonnet-4-5", api_key="sk-ant-x")
        await pilot.press("ctrl+s")
        await wait(pilot, lambda: isinstance(app.screen, NoKeyringScreen), what="the notice")
        await pilot.press("e")
        await wait(pilot, lambda: app.screen is screen, what="back to the settings")
        assert "export ANTHROPIC_API_KEY=" in screen_text(app)
    assert first_run.config_file is not None
    assert "claude" not in first_run.config_file.read_text()


async def test_with_the_os_keyring_the_key_and_secrets_go_there_and_reach_the_agent(
    first_run: AppOptions, llm_server: ScriptedLLMServer, wait: Any, os_keyring: object
) -> None:
    options = replace(first_run, use_keyring=True)
    llm_server.reply_tool_call(
        "terminal",
        {"command": "echo $DEPLOY_TOKEN > token.txt; echo $DEPLOY_TOKEN", "security_risk": "LOW"},
        usage=USAGE,
    )
    llm_server.reply_text("Done.", usage=USAGE)
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, wait)
        assert "No OS keyring" not in screen_text(app)
        fill(
            screen,
            provider=CUSTOM,
            model="openai/test-model",
            base_url=llm_server.base_url,
            api_key="sk-in-keyring",
            secret_name="DEPLOY_TOKEN",
            secret_value="tok-very-secret-42",
        )
        await press(pilot, "#add-secret")
        assert "DEPLOY_TOKEN" in screen_text(app)
        assert "tok-very-secret-42" not in screen_text(app)
        await pilot.press("ctrl+s")
        await wait(pilot, lambda: chat_ready(app) and status(app) == "idle", what="the chat")
        await submit(pilot, "use the token")
        await wait(pilot, lambda: status(app) == "finished", what="the run")
        shown = screen_text(app) + cell_text(action_cells(app, "terminal")[0])
        assert "tok-very-secret-42" not in shown
        assert "<secret-hidden>" in shown
        logging.getLogger("ohtui.test").warning(
            "leak? %s %s", "sk-in-keyring", "tok-very-secret-42"
        )
    log_text = Path(log_file()).read_text(encoding="utf-8")
    assert "leak? <secret-hidden> <secret-hidden>" in log_text
    assert "sk-in-keyring" not in log_text and "tok-very-secret-42" not in log_text
    assert (options.workspace / "token.txt").read_text() == "tok-very-secret-42\n"
    assert llm_server.request_headers[0]["authorization"] == "Bearer sk-in-keyring"
    store = SecretStore(probe_keyring())
    assert store.api_key("openai") == "sk-in-keyring"
    assert store.user_secrets() == {"DEPLOY_TOKEN": "tok-very-secret-42"}
    config_text = options.config_file.read_text()  # type: ignore[union-attr]
    assert "sk-in-keyring" not in config_text and "tok-very-secret" not in config_text
    for saved in (options.persistence_dir or Path()).rglob("*"):
        if saved.is_file():
            assert b"tok-very-secret-42" not in saved.read_bytes(), saved


async def test_the_test_button_says_what_is_wrong(
    first_run: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(first_run)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, wait)
        result = screen.query_one("#check-result")

        async def check(expected: str) -> str:
            await pilot.press("ctrl+t")
            await wait(pilot, lambda: expected in str(result.render()), what=expected)
            return str(result.render())

        fill(screen, provider=CUSTOM, model="test-model", base_url=llm_server.base_url)
        llm_server.reply_error(401, "Incorrect API key provided")
        assert "Check the API key" in await check("rejected the credentials")
        llm_server.reply_error(404, "The model `nope` does not exist", code="model_not_found")
        fill(screen, model="openai/nope")
        assert "Check the model name" in await check("does not know the model")
        fill(screen, base_url="http://127.0.0.1:9/v1")
        assert "check the base URL" in await check("Nothing is listening at")
        fill(screen, base_url=llm_server.base_url, model="openai/test-model")
        llm_server.reply_text("OK")
        assert (await check("answered in")).startswith("✓ openai/test-model answered in")
    assert len(llm_server.requests) == 3  # the unreachable URL never reached the server


async def test_invalid_fields_are_named_and_nothing_is_saved(
    first_run: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    app = OhtuiApp(first_run)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, wait)
        fill(screen, model="openai/x", base_url="localhost:8000")
        await press(pilot, "#save")  # the button, as a mouse user would
        assert "Base URL: must start with http:// or https://" in screen_text(app)
        fill(screen, provider=CUSTOM, base_url="", model="x")
        await pilot.press("ctrl+s")
        assert "needs its base URL" in screen_text(app)
        fill(screen, secret_name="1BAD", secret_value="v")
        await press(pilot, "#add-secret")
        assert "'1BAD' cannot be a secret name" in screen_text(app)
        assert app.screen is screen
    assert saved_config(first_run) == {"ui": {"auto_title": False}}


async def test_model_names_complete_from_the_catalogue(
    first_run: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    app = OhtuiApp(first_run)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_settings(pilot, wait)
        model = screen.query_one(ModelInput)
        model.focus()
        await type_text(pilot, "sonnet 4")
        assert model.menu_open
        assert "anthropic/claude-sonnet-4-5" in screen_text(app)
        await pilot.press("down", "enter")
        assert model.value.startswith("anthropic/claude-sonnet-4")
        assert not model.menu_open
        await pilot.press("tab")
        assert app.focused is not None and app.focused.id == "base-url"


async def test_settings_from_the_chat_apply_to_the_open_conversation(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("First answer.", usage=USAGE)
    llm_server.reply_text("Second answer.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "one")
        await wait(pilot, lambda: status(app) == "finished", what="the first run")
        await submit(pilot, "/settings")
        screen = await open_settings(pilot, wait)
        screen.query_one("#setting-confirmation-policy").value = "always"  # type: ignore[attr-defined]
        screen.query_one("#setting-ui-theme").value = "nord"  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await wait(pilot, lambda: app.screen is app.chat, what="back to the chat")
        assert app.theme == "nord"
        await wait(pilot, lambda: chat_ready(app) and status(app) != "opening", what="reopen")
        assert app.chat is not None and app.chat.session.policy == "always"
        assert "one" in screen_text(app)  # the same conversation, reopened
        await submit(pilot, "two")
        await wait(pilot, lambda: status(app) == "finished", what="the second run")
    config = saved_config(app_options)
    assert config["confirmation"] == {"policy": "always"} and config["ui"]["theme"] == "nord"
    assert "one" in str(llm_server.requests[-1]["messages"])


async def test_a_broken_config_file_is_explained_and_settings_offered(
    app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    assert app_options.config_file is not None
    app_options.config_file.write_text('[llm]\ntemperature = "hot"\n', encoding="utf-8")
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, ConfigProblemScreen), what="the problem")
        text = screen_text(app)
        assert "Your settings have a problem" in text
        # (the dialog's own border stands between two wrapped lines: where it wraps depends
        # on the length of the config file's path)
        assert "line 2: llm.temperature: expected a number" in " ".join(
            text.replace("│", " ").split()
        )
        await pilot.press("s")
        screen = await open_settings(pilot, wait)
        assert not screen.first_run
        await pilot.press("ctrl+s")  # the invalid value is dropped, a backup kept
        await wait(pilot, lambda: app.screen is app.chat, what="back to the chat")
    assert saved_config(app_options) == {}
    backup = app_options.config_file.with_name("config.toml.bak")
    assert 'temperature = "hot"' in backup.read_text(encoding="utf-8")


# --- snapshots ------------------------------------------------------------------------------


@pytest.fixture
def stable_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME is tmp: the config file shows as ~/config/config.toml in every run."""
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


async def settled(pilot: Any, wait: Any, screen_type: type) -> None:
    app = pilot.app
    await wait(pilot, lambda: isinstance(app.screen, screen_type), what=screen_type.__name__)
    if isinstance(app.screen, SettingsScreen):
        screen = app.screen
        await wait(pilot, lambda: screen._catalog is not None, what="the settings to load")
    app.clear_notifications()
    for widget in app.screen.query("Input"):
        widget.cursor_blink = False  # type: ignore[attr-defined]
    await pilot.pause(0.1)
    await pilot.wait_for_scheduled_animations()


def test_snapshot_first_run_without_a_keyring(
    snap_compare: Any, first_run: AppOptions, wait: Any, no_keyring: None, stable_home: Path
) -> None:
    async def ready(pilot: Any) -> None:
        await settled(pilot, wait, SettingsScreen)

    app = OhtuiApp(replace(first_run, use_keyring=True))
    assert snap_compare(app, terminal_size=(100, 34), run_before=ready)


def test_snapshot_settings_with_a_key_in_the_keyring(
    snap_compare: Any,
    app_options: AppOptions,
    wait: Any,
    os_keyring: object,
    stable_home: Path,
    llm_server: ScriptedLLMServer,
) -> None:
    assert app_options.config_file is not None
    app_options.config_file.write_text(
        '[llm]\nmodel = "anthropic/claude-sonnet-4-5"\nreasoning_effort = "medium"\n'
        '[confirmation]\npolicy = "always"\n[ui]\nauto_title = false\nexpand_outputs = true\n',
        encoding="utf-8",
    )
    store = SecretStore(probe_keyring())
    store.set_api_key("anthropic", "sk-ant-snapshot")
    store.set_user_secrets({"GITHUB_TOKEN": "ghp_x", "NPM_TOKEN": "npm_y"})
    options = replace(app_options, model=None, base_url=None, use_keyring=True)

    async def ready(pilot: Any) -> None:
        await wait(pilot, lambda: chat_ready(pilot.app), what="the chat")
        await submit(pilot, "/settings")
        await settled(pilot, wait, SettingsScreen)

    assert snap_compare(OhtuiApp(options), terminal_size=(100, 40), run_before=ready)


def test_snapshot_no_keyring_notice(
    snap_compare: Any, first_run: AppOptions, wait: Any, no_keyring: None, stable_home: Path
) -> None:
    async def ready(pilot: Any) -> None:
        await settled(pilot, wait, SettingsScreen)
        fill(settings_screen(pilot.app), model="openai/gpt-4o", api_key="sk-x")
        await pilot.press("ctrl+s")
        await settled(pilot, wait, NoKeyringScreen)

    app = OhtuiApp(replace(first_run, use_keyring=True))
    assert snap_compare(app, terminal_size=(100, 30), run_before=ready)


async def test_the_theme_applies_from_the_first_frame_and_an_unknown_one_is_named(
    app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    assert app_options.config_file is not None
    app_options.config_file.write_text('[ui]\ntheme = "gruvbox"\n', encoding="utf-8")
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "gruvbox"  # before the conversation (and the settings) load
        await wait(pilot, lambda: chat_ready(app), what="the chat")
    app_options.config_file.write_text('[ui]\ntheme = "solarised"\n', encoding="utf-8")
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await wait(pilot, lambda: "Unknown theme 'solarised'" in screen_text(app), what="it")
        assert app.theme == "textual-dark"


async def test_outputs_can_be_shown_expanded_by_default(
    app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    assert app_options.config_file is not None
    app_options.config_file.write_text("[ui]\nexpand_outputs = true\n", encoding="utf-8")
    llm_server.reply_tool_call(
        "terminal", {"command": "seq 1 30", "security_risk": "LOW"}, usage=USAGE
    )
    llm_server.reply_text("Counted.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "count")
        await wait(pilot, lambda: status(app) == "finished", what="the run")
        (cell,) = action_cells(app, "terminal")
        assert cell.expanded
        assert "30" in cell_text(cell).split() and "more lines" not in cell_text(cell)
        await submit(pilot, "/settings")  # and back to folded, for this conversation too
        screen = await open_settings(pilot, wait)
        screen.query_one("#setting-ui-expand-outputs").value = False  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await wait(pilot, lambda: app.screen is app.chat, what="back to the chat")
        await wait(pilot, lambda: not action_cells(app, "terminal")[0].expanded, what="folded")
        assert "more lines" in cell_text(action_cells(app, "terminal")[0])


async def test_a_keyring_that_hangs_costs_seconds_not_the_session(
    app_options: AppOptions, wait: Any, os_keyring: Any, llm_server: ScriptedLLMServer
) -> None:
    """A locked Secret Service can wait for a password prompt forever: the probe gives up,
    the conversation opens, and the missing key is explained."""
    assert app_options.config_file is not None
    app_options.config_file.write_text(
        '[llm]\nmodel = "anthropic/claude-sonnet-4-5"\n[ui]\nauto_title = false\n',
        encoding="utf-8",
    )
    options = replace(app_options, model=None, base_url=None, api_key=None, use_keyring=True)
    with os_keyring.frozen():
        app = OhtuiApp(options)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await wait(pilot, lambda: chat_ready(app), timeout=15, what="the chat")
            assert status(app) == "idle"
            await wait(pilot, lambda: "No API key for" in screen_text(app), what="the notice")
            text = " ".join(screen_text(app).split())
            assert "did not answer within 3 s" in text and "ANTHROPIC_API_KEY" in text


async def test_saving_settings_before_anything_was_said_opens_a_fresh_conversation(
    app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    """An empty conversation is deleted when it closes, so 'reopen with the new settings'
    must start a new one, not fail to find it."""
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "/settings")
        screen = await open_settings(pilot, wait)
        screen.query_one("#reasoning").value = "high"  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await wait(pilot, lambda: chat_ready(app) and status(app) == "idle", what="reopened")
        assert "No saved conversation" not in screen_text(app)
        assert "The last one is saved" not in screen_text(app)
    assert saved_config(app_options)["llm"] == {"reasoning_effort": "high"}


async def test_the_context_rows_follow_the_strategy_and_save_with_the_plugins(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any, tmp_path: Path
) -> None:
    from textual.widgets import Input

    plugin = tmp_path / "my-plugin"
    plugin.mkdir()
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "/settings")
        screen = await open_settings(pilot, wait)

        def shown(key: str) -> bool:
            return bool(screen.query_one(f"#rows-setting-context-{key}").display)

        # The default strategy: the condenser's rows, not the managers'.
        assert shown("max-size") and shown("keep-first") and shown("threshold")
        assert not shown("window-size") and not shown("summary-ratio")
        strategy = screen.query_one("#setting-context-strategy")
        strategy.value = "summarizing_manager"  # type: ignore[attr-defined]
        await pilot.pause()
        assert shown("summary-ratio") and shown("preserve-recent-messages")
        assert not shown("max-size") and not shown("window-size")
        # A bad value names its row and the bound; nothing is saved.
        fill(screen, setting_context_summary_ratio="0.95")
        await pilot.press("ctrl+s")
        assert "Summary ratio: expected a number at most 0.8" in screen_text(app)
        fill(
            screen,
            setting_context_summary_ratio="0.5",
            setting_context_threshold="0.6",
            setting_context_max_input_tokens="64000",
        )
        screen.query_one("#setting-agent-plugins", Input).value = f"{plugin}, github:acme/x#v1"
        await pilot.press("ctrl+s")
        await wait(pilot, lambda: app.screen is app.chat, what="back to the chat")
    config = saved_config(app_options)
    assert config["context"] == {
        "strategy": "summarizing_manager",
        "threshold": 0.6,
        "max_input_tokens": 64000,
        "summary_ratio": 0.5,
    }
    assert config["agent"]["plugins"] == [str(plugin), "github:acme/x#v1"]


async def test_a_context_strategy_saved_in_settings_is_built_into_the_reopened_agent(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    from ohtui.sdk import SummarizingConversationManager

    llm_server.reply_text("First answer.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "one")
        await wait(pilot, lambda: status(app) == "finished", timeout=60, what="the first run")
        await submit(pilot, "/settings")
        screen = await open_settings(pilot, wait)
        screen.query_one("#setting-context-strategy").value = "summarizing_manager"  # type: ignore[attr-defined]
        fill(screen, setting_context_threshold="")  # emptied: unset
        await pilot.press("ctrl+s")
        await wait(pilot, lambda: app.screen is app.chat, what="back to the chat")
        assert app.chat is not None

        def manager() -> object:
            conversation = app.chat.session.conversation if app.chat else None
            return conversation.agent.conversation_manager if conversation else None

        await wait(
            pilot,
            lambda: isinstance(manager(), SummarizingConversationManager),
            what="the reopened conversation's manager",
        )
        assert "one" in screen_text(app)  # the same conversation, reopened
    assert saved_config(app_options)["context"] == {"strategy": "summarizing_manager"}
