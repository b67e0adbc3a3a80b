"""/init: the agent is asked, as an ordinary user turn, to write AGENTS.md for the workspace
(or to improve the one there); refused while the conversation is open read-only."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import pytest
from chat_helpers import SIZE, USAGE, chat_ready, status, submit, user_message_texts, user_texts
from holder import held_elsewhere
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM, Agent, LocalConversation, Tool
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.init_prompt import init_prompt

pytestmark = pytest.mark.anyio


def last_user_text(server: ScriptedLLMServer) -> str:
    return user_message_texts(server.requests[-1])[-1]


async def test_init_asks_the_agent_to_write_agents_md_from_what_it_reads(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("I will look around first.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "/init")
        await wait(pilot, lambda: status(app) == "finished", what="the answer")
        sent = user_texts(app)  # the user sees what was asked, as their own message
    asked = last_user_text(llm_server)
    assert sent == [asked]
    assert asked.startswith("Please create AGENTS.md at the root of this workspace")
    for must in ("how to run a single test", "do not invent", "CLAUDE.md", ".cursorrules"):
        assert must in asked
    assert "already has" not in asked


async def test_init_improves_an_existing_agents_md_and_takes_a_focus(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    (app_options.workspace / "AGENTS.md").write_text("Run make.\n", encoding="utf-8")
    llm_server.reply_text("Improving it.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "/init stress the release steps")
        await wait(pilot, lambda: status(app) == "finished", what="the answer")
    asked = last_user_text(llm_server)
    assert asked.startswith("This workspace already has an AGENTS.md. Please improve it")
    assert "do not start the file over" in asked
    assert asked.endswith("Also: stress the release steps")


def test_the_prompt_for_a_workspace_on_a_server_covers_both_cases() -> None:
    asked = init_prompt(None)
    assert "If it exists already, improve it rather than replace it" in asked


async def test_init_is_refused_while_another_ohtui_runs_the_conversation(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm = LLM(
        model="openai/test-model", base_url=llm_server.base_url, api_key="sk", usage_id="agent"
    )
    saved = LocalConversation(
        agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=app_options.workspace,
        persistence_dir=app_options.persistence_dir,
        conversation_id=uuid.uuid4(),
        visualizer=None,
    )
    llm_server.reply_text("Hi.", usage=USAGE)
    saved.send_message("hello")
    saved.run()
    saved.close()
    assert app_options.persistence_dir is not None
    asked = len(llm_server.requests)
    saved_id = saved.id.hex
    with held_elsewhere(
        app_options.persistence_dir, app_options.workspace, saved_id, ("terminal",)
    ):
        app = OhtuiApp(replace(app_options, resume_id=saved_id[:8], conversation_id=None))
        async with app.run_test(size=SIZE) as pilot:
            await wait(pilot, lambda: chat_ready(app), what="the chat")
            assert status(app) == "read_only"
            before = len(app._notifications)
            await submit(pilot, "/init")
            await pilot.pause(0.2)
            assert user_texts(app) == ["hello"]
            told = [n.message for n in list(app._notifications)[before:]]
            assert len(told) == 1 and told[0].startswith("Read-only: another ohtui runs this")
    assert len(llm_server.requests) == asked
