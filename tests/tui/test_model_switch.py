"""/model in the real app: the next turn thinks with the model switched to, the status bar
and the cost follow it, a switch during a run waits for its end, a missing key is said
plainly, the picker offers the recent models, and a resumed conversation keeps its model."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import SIZE, USAGE, chat_ready, run_over, screen_text, status, submit
from holder import held_elsewhere
from llm_server import Reply, ScriptedLLMServer
from textual.widgets import Input

from ohtui.settings.model_memory import ModelMemory
from ohtui.settings.schema import KNOWN_TOOLS
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.model_picker import ModelPickerScreen
from ohtui.tui.screens.usage_report import usage_report

pytestmark = pytest.mark.anyio
KNOWN = tuple(KNOWN_TOOLS)


@pytest.fixture
def memory_options(app_options: AppOptions, tmp_path: Path) -> AppOptions:
    """The app's options with the models remembered in a file of the test's own."""
    return replace(app_options, model_memory_file=tmp_path / "data" / "models.json")


async def opened(app: OhtuiApp, pilot: Any, wait: Any) -> None:
    await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
    assert status(app) in ("idle", "finished")  # new, or resumed


async def turn(app: OhtuiApp, pilot: Any, wait: Any, text: str) -> None:
    """Send `text` and wait for the run to end."""
    await submit(pilot, text)
    await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
    await wait(pilot, lambda: run_over(app), what="the run's end", timeout=5)


def model_of(app: OhtuiApp) -> str:
    assert app.chat is not None and app.chat.session.conversation is not None
    return app.chat.session.conversation.agent.llm.model


def bar_model(app: OhtuiApp) -> str:
    assert app.chat is not None
    return app.chat.status_bar.model


def notices(app: OhtuiApp) -> str:
    return " ".join(str(n.message) for n in app._notifications)


async def test_model_with_a_name_switches_the_next_turn_and_counts_it_apart(
    memory_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("from the first model", usage=USAGE)
    llm_server.reply_text("from the second model", usage={**USAGE, "prompt_tokens": 2000})
    app = OhtuiApp(memory_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await turn(app, pilot, wait, "hello")
        await submit(pilot, "/model openai/other-model")
        await wait(pilot, lambda: bar_model(app) == "openai/other-model", what="the status bar")
        assert model_of(app) == "openai/other-model"
        await turn(app, pilot, wait, "again")
        assert [r["model"] for r in llm_server.requests] == ["test-model", "other-model"]
        assert app.chat is not None and app.chat.session.conversation is not None
        stats = app.chat.session.conversation.conversation_stats
        rows = usage_report(stats, model_of(app)).rows
        assert [(r.model, r.calls, r.input_tokens) for r in rows] == [
            ("openai/test-model", 1, 1200),
            ("openai/other-model", 1, 2000),
        ]
    recent = ModelMemory(memory_options.model_memory_file).recent()
    assert recent == ["openai/other-model"]


async def test_a_switch_during_a_run_waits_for_the_next_turn(
    memory_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    release = threading.Event()

    def held_answer(body: dict[str, Any]) -> Reply:
        release.wait(30)  # the run goes on until the test has asked for the switch
        return Reply(text="held answer", usage=USAGE)

    llm_server.reply(held_answer)
    llm_server.reply_text("next turn", usage=USAGE)
    app = OhtuiApp(memory_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await submit(pilot, "think")
        await wait(pilot, lambda: status(app) == "running", what="the run")
        await submit(pilot, "/model openai/later-model")
        await wait(pilot, lambda: "from the next turn" in notices(app), what="the notice")
        assert "finishes this one with openai/test-model" in notices(app)
        assert model_of(app) == "openai/test-model"  # not during the run
        release.set()
        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
        await wait(pilot, lambda: model_of(app) == "openai/later-model", what="the switch")
        await wait(pilot, lambda: bar_model(app) == "openai/later-model", what="the status bar")
        await wait(pilot, lambda: run_over(app), what="the run's end", timeout=5)
        await turn(app, pilot, wait, "go on")
    assert [r["model"] for r in llm_server.requests] == ["test-model", "later-model"]


async def test_a_provider_without_a_key_is_refused_saying_how_to_set_one(
    memory_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(memory_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await submit(pilot, "/model anthropic/claude-sonnet-4-5")
        await wait(pilot, lambda: "No API key" in notices(app), what="the refusal")
        said = notices(app)
        assert "No API key for anthropic (anthropic/claude-sonnet-4-5)" in said
        assert "ANTHROPIC_API_KEY" in said and "/settings" in said
        assert model_of(app) == "openai/test-model"
        assert bar_model(app) == "openai/test-model"
    assert ModelMemory(memory_options.model_memory_file).recent() == []


async def test_the_picker_offers_recent_models_and_completes_from_litellm(
    memory_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    assert memory_options.model_memory_file is not None
    ModelMemory(memory_options.model_memory_file).remember("openai/recent-one", None, None)
    app = OhtuiApp(memory_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await submit(pilot, "/model")  # the menu completes it to "/model "
        await pilot.press("enter")
        await wait(pilot, lambda: isinstance(app.screen, ModelPickerScreen), what="the picker")
        await wait(pilot, lambda: "openai/recent-one" in screen_text(app), what="recent models")
        shown = screen_text(app)
        assert "openai/test-model  (now)" in shown
        assert shown.index("openai/test-model") < shown.index("openai/recent-one")
        app.screen.query_one("#model-name", Input).value = "gpt-4o-mini"
        await wait(
            pilot, lambda: "openai/gpt-4o-mini" in screen_text(app), what="litellm's matches"
        )
        await pilot.press("tab")  # to the recent models
        await pilot.press("down", "enter")
        await wait(pilot, lambda: model_of(app) == "openai/recent-one", what="the switch")
        assert not isinstance(app.screen, ModelPickerScreen)


async def test_a_resumed_conversation_keeps_the_model_switched_to(
    memory_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("one", usage=USAGE)
    llm_server.reply_text("two", usage=USAGE)
    app = OhtuiApp(memory_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await turn(app, pilot, wait, "hello")
        await submit(pilot, "/model openai/kept-model")
        await wait(pilot, lambda: model_of(app) == "openai/kept-model", what="the switch")
        conversation_id = app.chat.session.conversation_id if app.chat else None
    assert conversation_id is not None
    again = OhtuiApp(replace(memory_options, resume_id=conversation_id, conversation_id=None))
    async with again.run_test(size=SIZE) as pilot:
        await opened(again, pilot, wait)
        assert model_of(again) == "openai/kept-model"
        assert bar_model(again) == "openai/kept-model"
        said = "This conversation goes on with openai/kept-model, chosen for it with /model."
        await wait(pilot, lambda: said in notices(again), what="the notice")
        await turn(again, pilot, wait, "after the resume")
    assert llm_server.requests[-1]["model"] == "kept-model"
    # Settings naming another model since: the newer choice, theirs, wins.
    newer = replace(memory_options, resume_id=conversation_id, conversation_id=None)
    newer.model = "openai/settings-model"
    third = OhtuiApp(newer)
    async with third.run_test(size=SIZE) as pilot:
        await opened(third, pilot, wait)
        assert model_of(third) == "openai/settings-model"


async def test_model_is_refused_while_another_ohtui_runs_the_conversation(
    memory_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("one", usage=USAGE)
    app = OhtuiApp(memory_options)
    async with app.run_test(size=SIZE) as pilot:
        await opened(app, pilot, wait)
        await turn(app, pilot, wait, "hello")
    directory, conversation_id = memory_options.persistence_dir, memory_options.conversation_id
    assert directory is not None and conversation_id is not None
    with held_elsewhere(directory, memory_options.workspace, conversation_id, KNOWN):
        reader = OhtuiApp(replace(memory_options, resume_id=conversation_id, conversation_id=None))
        async with reader.run_test(size=SIZE) as pilot:
            await wait(pilot, lambda: chat_ready(reader), what="the chat")
            assert status(reader) == "read_only"
            await submit(pilot, "/model openai/other-model")
            await wait(pilot, lambda: "another ohtui" in notices(reader), what="the refusal")
            assert model_of(reader) == "openai/test-model"
    assert ModelMemory(memory_options.model_memory_file).recent() == []
