"""An 80x24 terminal and NO_COLOR: notifications never cover an error, the highlighted or
chosen option shows by a mark (not only a colour), and hints are not cut off."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from chat_helpers import chat_ready, screen_text
from llm_server import ScriptedLLMServer
from rich.cells import cell_len
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.screen import Screen
from textual.widgets import Input, Select, Static, Switch, TextArea
from textual.widgets._select import SelectCurrent, SelectOverlay
from textual.widgets._toast import Toast

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.chat import READ_ONLY_FOLDER_HINT, READ_ONLY_HINT
from ohtui.tui.screens.config_problem import ConfigProblemScreen
from ohtui.tui.screens.help import HelpScreen
from ohtui.tui.screens.settings import SettingsScreen
from ohtui.tui.toast_place import error_regions, watch_screens
from ohtui.tui.widgets.composer import PLACEHOLDER, Composer
from ohtui.tui.widgets.marked import HIGHLIGHT_MARK

pytestmark = pytest.mark.anyio

SMALL = (80, 24)
LONG = "Something went wrong and here is what to do about it, in words a person can act on. " * 3


def toast_regions(screen: Screen[Any]) -> list[Region]:
    """Where the visible toasts are on `screen`."""
    regions = (screen.find_widget(t).region for t in screen.query(Toast))
    return [region for region in regions if region.overlaps(screen.region)]


def covered(screen: Screen[Any]) -> list[tuple[Region, Region]]:
    """(toast, error) pairs that overlap."""
    errors = error_regions(screen)
    return [(t, e) for t in toast_regions(screen) for e in errors if t.overlaps(e)]


async def test_a_toast_never_covers_the_chat_error_cell(
    app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        chat = app.chat
        assert chat is not None
        chat.view.show_error("ohtui could not go on", LONG)
        for n in range(3):
            chat.notify(f"Notice {n}: a notification of some length to wrap once or twice.")
        await wait(pilot, lambda: len(toast_regions(chat)) == 3, what="three toasts")
        await pilot.pause(0.1)
        assert error_regions(chat), "the error cell is on screen"
        assert covered(chat) == []


async def test_a_toast_never_covers_the_settings_error_line(
    app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    first_run = replace(app_options, model=None, base_url=None, api_key=None)
    app = OhtuiApp(first_run)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, SettingsScreen), what="the settings")
        screen = app.screen
        await wait(pilot, lambda: screen._catalog is not None, what="the settings to load")
        await pilot.press("ctrl+s")  # no model: the error line says so
        await wait(pilot, lambda: bool(error_regions(screen)), what="the error line")
        for n in range(4):
            screen.notify(f"Notice {n}: a notification of some length to wrap once or twice.")
        await wait(pilot, lambda: len(toast_regions(screen)) == 4, what="four toasts")
        await pilot.pause(0.1)
        assert covered(screen) == []


async def test_a_toast_never_covers_the_config_problem(
    app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    assert app_options.config_file is not None
    lines = "".join(f"key{n} = {n}\n" for n in range(12))  # 12 unknown keys: 12 warnings
    app_options.config_file.write_text(f'[llm]\ntemperature = "hot"\n{lines}', encoding="utf-8")
    app = OhtuiApp(app_options)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, ConfigProblemScreen), what="the problem")
        screen = app.screen
        problem = str(screen.query_one("#problem", Static).render())
        assert "line 2: llm.temperature" in problem  # the problem, then the warnings
        assert problem.index("line 2:") < problem.index("line 3:") < problem.index("line 14:")
        assert "unknown key llm.key11" in problem
        assert len(screen.query(Toast)) == 0  # not as toasts on top of it
        for n in range(2):
            screen.notify(f"Notice {n}: a notification of some length to wrap once or twice.")
        await wait(pilot, lambda: len(screen.query(Toast)) == 2, what="two toasts")
        await pilot.pause(0.1)
        assert error_regions(screen)
        assert covered(screen) == []


class _ErrorEverywhere(App[None]):
    """A screen whose error fills it: no corner is free."""

    def compose(self) -> ComposeResult:
        yield Static("\n".join(["an error"] * 30), id="error")

    def on_mount(self) -> None:
        watch_screens(self)


async def test_toasts_wait_out_of_sight_while_an_error_fills_the_screen() -> None:
    app = _ErrorEverywhere()
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        app.notify("A notification", timeout=30)
        await pilot.pause(0.2)
        assert len(app.screen.query(Toast)) == 1
        assert toast_regions(app.screen) == []  # out of sight
        app.query_one("#error").display = False
        await pilot.pause(0.2)
        assert len(toast_regions(app.screen)) == 1  # back once the error is gone
        assert covered(app.screen) == []


# --- NO_COLOR: the highlighted or chosen option shows by a mark ---------------------------------


def marked_lines(app: App[Any]) -> list[str]:
    """The screen's lines that hold the highlight mark, from the mark on."""
    lines = screen_text(app).splitlines()  # type: ignore[arg-type]
    return [line[line.index(HIGHLIGHT_MARK) :].rstrip() for line in lines if HIGHLIGHT_MARK in line]


@pytest.fixture
def no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app runs as under NO_COLOR=1 (Textual reads it when the app is made)."""
    monkeypatch.setenv("NO_COLOR", "1")


async def test_without_colour_the_composer_menu_marks_its_highlighted_entry(
    no_color: None, app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SMALL) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        assert app.no_color
        await pilot.press("slash", "h", "e")
        await wait(pilot, lambda: bool(marked_lines(app)), what="the marked menu")
        assert [line.split()[:2] for line in marked_lines(app)] == [["❯", "/help"]]


async def test_without_colour_settings_choices_and_switches_show_their_state(
    no_color: None, app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    app = OhtuiApp(replace(app_options, model=None, base_url=None, api_key=None))
    async with app.run_test(size=SMALL) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, SettingsScreen), what="the settings")
        screen = app.screen
        await wait(pilot, lambda: screen._catalog is not None, what="the settings to load")
        provider = screen.query_one("#provider", Select)
        provider.focus()
        await pilot.press("enter")  # the drop-down opens on the chosen provider
        await wait(pilot, lambda: provider.expanded, what="the drop-down")
        await pilot.press("down")
        overlay = provider.query_one(SelectOverlay)
        assert overlay.highlighted is not None
        label = str(overlay.get_option_at_index(overlay.highlighted).prompt)
        (line,) = marked_lines(app)
        assert line.startswith(f"❯ {label} ")
        await pilot.press("escape")

        switch = screen.query(Switch).first()
        switch.scroll_visible(animate=False)
        await pilot.pause()
        before = "● on" if switch.value else "○ off"
        after = "○ off" if switch.value else "● on"
        row = switch.region.y
        assert before in screen_text(app).splitlines()[row]
        switch.toggle()
        await pilot.pause(0.3)
        assert after in screen_text(app).splitlines()[row]


async def test_without_colour_the_model_menu_marks_its_highlighted_match(
    no_color: None, app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    app = OhtuiApp(replace(app_options, model=None, base_url=None, api_key=None))
    async with app.run_test(size=SMALL) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, SettingsScreen), what="the settings")
        screen = app.screen
        await wait(pilot, lambda: screen._catalog is not None, what="the settings to load")
        screen.query_one("#model-name", Input).focus()
        await pilot.press("c", "l", "down")  # the provider is Anthropic
        await wait(pilot, lambda: bool(marked_lines(app)), what="the marked menu")
        assert len(marked_lines(app)) == 1
        assert marked_lines(app)[0].startswith("❯ anthropic/claude")


# --- 80x24: hints are whole ----------------------------------------------------------------------


async def test_at_80_columns_the_composer_hints_are_whole(
    app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SMALL) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        area = app.screen.query_one(Composer).query_one(TextArea)
        room = area.content_region.width - 1  # the cursor's cell
        hints = [PLACEHOLDER, READ_ONLY_HINT.format(pid=4194304), READ_ONLY_FOLDER_HINT]
        for hint in hints:
            assert cell_len(hint) <= room, hint
        assert PLACEHOLDER in screen_text(app)


async def test_at_80_columns_every_settings_hint_is_whole(
    app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    app = OhtuiApp(replace(app_options, model=None, base_url=None, api_key=None))
    async with app.run_test(size=SMALL) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, SettingsScreen), what="the settings")
        screen = app.screen
        await wait(pilot, lambda: screen._catalog is not None, what="the settings to load")
        inputs = [i for i in screen.query(Input) if i.placeholder and i.display]
        assert "#base-url" in [f"#{i.id}" for i in inputs]
        for field in inputs:
            field.scroll_visible(animate=False)
            await pilot.pause()
            placeholder = str(field.placeholder)
            assert cell_len(placeholder) < field.content_region.width, field.id
            assert placeholder in screen_text(app), field.id


async def test_without_colour_the_focused_field_is_underlined(
    no_color: None, app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    app = OhtuiApp(replace(app_options, model=None, base_url=None, api_key=None))
    async with app.run_test(size=SMALL) as pilot:
        await wait(pilot, lambda: isinstance(app.screen, SettingsScreen), what="the settings")
        screen = app.screen
        await wait(pilot, lambda: screen._catalog is not None, what="the settings to load")
        model, base_url = (
            screen.query_one("#model-name", Input),
            screen.query_one("#base-url", Input),
        )
        provider = screen.query_one("#provider", Select)
        for field in (model, base_url, provider):
            field.focus()
            await pilot.pause()
            shown = field.query_one(SelectCurrent) if field is provider else field
            assert shown.rich_style.underline, field.id
            others = {model, base_url, provider} - {field}
            assert not any(
                (o.query_one(SelectCurrent) if o is provider else o).rich_style.underline
                for o in others
            )


async def test_at_80_columns_the_help_wraps_under_its_own_column(
    app_options: AppOptions, wait: Any, llm_server: ScriptedLLMServer
) -> None:
    app = OhtuiApp(app_options)
    async with app.run_test(size=SMALL) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        assert app.chat is not None
        app.chat.run_slash("help")
        await wait(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        grid = app.screen.query_one("#help-grid")
        rows = [w for w in grid.children if not w.has_class("heading")]
        keys, descriptions = rows[0::2], rows[1::2]
        assert {k.region.x for k in keys} == {keys[0].region.x}
        assert {d.region.x for d in descriptions} == {descriptions[0].region.x}
        assert all(k.region.height == 1 for k in keys)
        assert any(d.region.height > 1 for d in descriptions)  # some wrap, under themselves
        assert all(d.region.right <= grid.region.right for d in descriptions)
