"""/cost (and /usage) in the real app: tokens in and out, cache reads and writes and cost per
model and for the whole conversation, and the context used against the model's window; and
snapshots of the cost table and of the /model picker."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import SIZE, chat_ready, run_over, screen_text, status, submit, type_text
from llm_server import ScriptedLLMServer
from textual.command import CommandPalette
from textual.widgets import Static

from ohtui.settings.model_memory import ModelMemory
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.cost import NO_CALLS, CostScreen
from ohtui.tui.screens.help import HelpScreen
from ohtui.tui.screens.model_picker import ModelPickerScreen

pytestmark = pytest.mark.anyio

CACHED = {
    "prompt_tokens": 1200,
    "completion_tokens": 40,
    "prompt_tokens_details": {"cached_tokens": 900},
    "cache_creation_input_tokens": 250,
}
"""A reply's usage with cache reads and writes, as providers report them."""
PRICED = "openai/gpt-4o-mini"
"""A model litellm has prices and a window for (served by the scripted server here)."""


@pytest.fixture
def memory_options(app_options: AppOptions, tmp_path: Path) -> AppOptions:
    return replace(app_options, model_memory_file=tmp_path / "data" / "models.json")


async def turn(app: OhtuiApp, pilot: Any, wait: Any, text: str) -> None:
    await submit(pilot, text)
    await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
    await wait(pilot, lambda: run_over(app), what="the run's end", timeout=5)


async def two_models(app: OhtuiApp, pilot: Any, wait: Any, llm: ScriptedLLMServer) -> None:
    """A turn with the test model, then one with a priced model."""
    llm.reply_text("first", usage=CACHED)
    llm.reply_text("second", usage={**CACHED, "prompt_tokens": 3000})
    await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
    await turn(app, pilot, wait, "hello")
    await submit(pilot, f"/model {PRICED}")
    assert app.chat is not None
    await wait(pilot, lambda: app.chat is not None and app.chat.status_bar.model == PRICED)
    await turn(app, pilot, wait, "again")


async def settle(pilot: Any) -> None:
    app = pilot.app
    app.clear_notifications()
    for screen in {app.chat, app.screen}:
        for widget in screen.query("TextArea, Input"):
            widget.cursor_blink = False
    await pilot.pause(0.1)
    await pilot.wait_for_scheduled_animations()


def row(text: str, start: str) -> list[str]:
    """The cells of the table row that starts with `start`."""
    line = next(line for line in text.splitlines() if line.strip().lstrip("│ ").startswith(start))
    return line.replace("│", " ").split()


async def test_cost_shows_tokens_cache_and_cost_per_model_and_the_context(
    memory_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(memory_options)
    async with app.run_test(size=(120, 40)) as pilot:
        await two_models(app, pilot, wait, llm_server)
        await submit(pilot, "/cost")
        await wait(pilot, lambda: isinstance(app.screen, CostScreen), what="the cost screen")
        shown = screen_text(app)
        assert row(shown, "openai/test-model") == [
            "openai/test-model", "1", "1,200", "40", "900", "250", "$0.00",
        ]  # fmt: skip
        priced = row(shown, PRICED)
        assert priced[:7] == [PRICED, "(now)", "1", "3,000", "40", "900", "250"]
        assert priced[7].startswith("$") and priced[7] != "$0.00"  # litellm knows its price
        total = row(shown, "whole conversation")
        assert total[2:8] == ["2", "4,200", "80", "1,800", "500", priced[7]]
        assert "Cache hits: 43% of the input was read from the provider's cache." in shown
        assert "Context: 3,040 tokens of 128,000 (2%) · openai/gpt-4o-mini" in shown
        await pilot.press("escape")
        assert not isinstance(app.screen, CostScreen)
        await submit(pilot, "/usage")  # the alias
        await wait(pilot, lambda: isinstance(app.screen, CostScreen), what="the cost screen")
        # Too narrow for the names beside the figures: each name on its own line, whole.
        await pilot.resize_terminal(60, 40)
        await pilot.pause(0.1)
        lines = [line.replace("│", " ").strip() for line in screen_text(app).splitlines()]
        stacked = {
            "openai/test-model": ["1", "1,200", "40", "900", "250", "$0.00"],
            f"{PRICED} (now)": ["1", "3,000", "40", "900", "250", priced[7]],
            "whole conversation": ["2", "4,200", "80", "1,800", "500", priced[7]],
        }
        for name, figures in stacked.items():
            at = lines.index(name)
            assert lines[at + 1].split() == ["cache", "cache"]
            assert lines[at + 2].split() == ["calls", "input", "output", "read", "write", "cost"]
            assert lines[at + 3].split() == figures


async def test_cost_before_any_call_says_so(
    memory_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(memory_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "/cost")
        await wait(pilot, lambda: isinstance(app.screen, CostScreen), what="the cost screen")
        shown = " ".join(screen_text(app).split())
        assert " ".join(NO_CALLS.split()) in shown.replace("│", " ").replace("  ", " ")
        assert "Context: nothing sent to the model yet." in shown


async def test_model_and_cost_are_in_the_help_and_the_palette(
    memory_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(memory_options)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "/help")
        await wait(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        lines = [str(static.render()) for static in app.screen.query(Static)]
        assert "/model" in lines and "/cost" in lines
        assert lines[lines.index("/model") + 1].startswith("switch the model from the next turn")
        assert lines[lines.index("/cost") + 1].endswith("(also /usage)")
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await wait(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette")
        await type_text(pilot, "/cos")
        await wait(pilot, lambda: "tokens, cache and cost" in screen_text(app), what="the hit")
        await pilot.press("enter")
        await wait(pilot, lambda: isinstance(app.screen, CostScreen), what="the cost screen")


def test_cost_table_snapshot(
    snap_compare: Any, memory_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    async def run_before(pilot: Any) -> None:
        await two_models(pilot.app, pilot, wait, llm_server)
        await settle(pilot)  # the chat's notices, before a screen covers them
        await submit(pilot, "/cost")
        await wait(pilot, lambda: isinstance(pilot.app.screen, CostScreen), what="/cost")
        await settle(pilot)

    assert snap_compare(OhtuiApp(memory_options), terminal_size=(100, 30), run_before=run_before)


def test_model_picker_snapshot(
    snap_compare: Any, memory_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    assert memory_options.model_memory_file is not None
    memory = ModelMemory(memory_options.model_memory_file)
    for model in ("openai/gpt-4o", "anthropic/claude-sonnet-4-5"):
        memory.remember(model, None, None)

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "/model ")
        await wait(pilot, lambda: isinstance(app.screen, ModelPickerScreen), what="the picker")
        await wait(pilot, lambda: "openai/gpt-4o" in screen_text(app), what="recent models")
        await pilot.press(*"gpt-4o-m")
        await wait(pilot, lambda: "openai/gpt-4o-mini" in screen_text(app), what="matches")
        await settle(pilot)

    assert snap_compare(OhtuiApp(memory_options), terminal_size=(100, 30), run_before=run_before)
