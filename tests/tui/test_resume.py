"""Going back to saved conversations through the real app: `ohtui --resume` (the picker
first), `/resume`, `--continue`, and renaming the open conversation from the picker."""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
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
    user_texts,
)
from holder import held_elsewhere
from llm_server import ScriptedLLMServer
from textual.widgets import TextArea

from ohtui.sdk import LLM, Agent, AlwaysConfirm, LocalConversation, Tool
from ohtui.sdk.conversation import list_conversations
from ohtui.tui import app as app_module
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.approval import ApprovalScreen
from ohtui.tui.screens.picker import PickerScreen
from ohtui.tui.screens.text_prompt import TextPromptScreen
from ohtui.tui.session import Session
from ohtui.tui.widgets.cells import ErrorCell
from ohtui.tui.widgets.composer import PLACEHOLDER, Composer

pytestmark = pytest.mark.anyio


def save(
    options: AppOptions,
    server: ScriptedLLMServer,
    messages: list[str],
    *,
    waiting: str | None = None,
    workspace: Any = None,
) -> str:
    """A conversation saved through the engine, one scripted reply per message; returns its id."""
    llm = LLM(
        model="openai/test-model", base_url=server.base_url, api_key="sk-test", usage_id="agent"
    )
    conversation = LocalConversation(
        agent=Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=workspace or options.workspace,
        persistence_dir=options.persistence_dir,
        conversation_id=uuid.uuid4(),
        visualizer=None,
    )
    try:
        for text in messages:
            server.reply_text(f"Answer to {text}.", usage=USAGE)
            conversation.send_message(text)
            conversation.run()
        if waiting:
            conversation.set_confirmation_policy(AlwaysConfirm())
            server.reply_tool_call("terminal", {"command": waiting}, usage=USAGE)
            conversation.send_message("now run it")
            conversation.run()
        return conversation.id.hex
    finally:
        conversation.close()


async def picker_listed(pilot: Any, wait: Any, count: int) -> PickerScreen:
    app = pilot.app
    await wait(pilot, lambda: isinstance(app.screen, PickerScreen), what="the picker")
    screen = app.screen
    assert isinstance(screen, PickerScreen)
    await wait(
        pilot, lambda: not screen.pending and len(screen.rows) == count, what=f"{count} rows"
    )
    return screen


async def test_resume_without_an_id_opens_the_picker_and_shows_the_whole_history(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    older = save(app_options, llm_server, ["alpha one", "alpha two"])
    newer = save(app_options, llm_server, ["beta one"])
    app = OhtuiApp(replace(app_options, pick=True, conversation_id=None))
    async with app.run_test(size=SIZE) as pilot:
        picker = await picker_listed(pilot, wait, 2)
        assert [row.id for row in picker.rows] == [newer, older]
        await pilot.press("down", "enter")
        await wait(pilot, lambda: chat_ready(app) and "alpha one" in user_texts(app), what="it")
        assert user_texts(app) == ["alpha one", "alpha two"]
        assert app.chat is not None and app.chat.session.conversation_id == older
        assert status(app) == "finished"
        # Its stats come back too: the context the last call used (scripted usage).
        await wait(pilot, lambda: app.chat.status_bar.context_used == 1240, what="stats")
    assert len(list_conversations(app_options.persistence_dir or "")) == 2  # no new one


async def test_escape_from_the_first_picker_starts_a_new_conversation(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    save(app_options, llm_server, ["old"])
    app = OhtuiApp(replace(app_options, pick=True))
    async with app.run_test(size=SIZE) as pilot:
        await picker_listed(pilot, wait, 1)
        await pilot.press("escape")
        await wait(pilot, lambda: chat_ready(app) and status(app) == "idle", what="a new chat")
        assert user_texts(app) == []
        assert app.chat is not None
        assert app.chat.session.conversation_id == app_options.conversation_id


async def test_slash_resume_switches_and_keeps_both_saved(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    other = save(app_options, llm_server, ["the other one"])
    llm_server.reply_text("Hello from here.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "here")
        await wait(pilot, lambda: status(app) == "finished", what="the reply")
        await submit(pilot, "/resume")
        picker = await picker_listed(pilot, wait, 2)
        assert picker.rows[0].id == app_options.conversation_id  # the open one, newest
        await pilot.press("down", "enter")
        await wait(pilot, lambda: user_texts(app) == ["the other one"], what="the other one")
        assert app.chat is not None and app.chat.session.conversation_id == other
        await submit(pilot, f"/resume {app_options.conversation_id}")
        await wait(pilot, lambda: user_texts(app) == ["here"], what="back again")
    assert len(list_conversations(app_options.persistence_dir or "")) == 2


async def test_picking_a_conversation_that_waits_for_approval_reopens_the_modal(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    waiting = save(app_options, llm_server, ["clean up"], waiting="rm -rf build")
    app = OhtuiApp(replace(app_options, pick=True))
    async with app.run_test(size=SIZE) as pilot:
        await picker_listed(pilot, wait, 1)
        await pilot.press("enter")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        assert app.chat is not None and app.chat.session.conversation_id == waiting
        assert "rm -rf build" in screen_text(app)


async def test_a_resumed_conversation_waiting_for_approval_shows_waiting_from_the_start(
    app_options: AppOptions,
    llm_server: ScriptedLLMServer,
    wait: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waiting = save(app_options, llm_server, ["clean up"], waiting="rm -rf build")
    opened = Session._create_conversation

    def slow_open(self: Session) -> Any:
        time.sleep(1.0)  # a slow keyring: the saved history is on screen well before this
        return opened(self)

    monkeypatch.setattr(Session, "_create_conversation", slow_open)
    app = OhtuiApp(replace(app_options, resume_id=waiting))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: bool(app.chat and action_cells(app)), what="the saved history")
        assert not isinstance(app.screen, ApprovalScreen)  # still opening
        shown = cell_text(action_cells(app)[0])
        assert "waiting for your approval" in shown
        assert "running" not in shown
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")


async def test_continue_opens_this_workspace_latest(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any, tmp_path: Any
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    save(app_options, llm_server, ["here, older"])
    latest_here = save(app_options, llm_server, ["here, latest"])
    save(app_options, llm_server, ["somewhere else"], workspace=elsewhere)
    app = OhtuiApp(replace(app_options, continue_latest=True, conversation_id=None))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: user_texts(app) == ["here, latest"], what="the latest")
        assert app.chat is not None and app.chat.session.conversation_id == latest_here


async def test_continue_with_nothing_saved_says_so(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(replace(app_options, continue_latest=True))
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the opening to fail")
        assert status(app) == "error"
        (error,) = cells(app, ErrorCell)
        assert "No saved conversation in" in error.detail and "ohtui --resume" in error.detail


async def test_renaming_the_open_conversation_in_the_picker_sticks(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("Hi.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "hello")
        await wait(pilot, lambda: status(app) == "finished", what="the reply")
        await submit(pilot, "/resume")
        await picker_listed(pilot, wait, 1)
        await pilot.press("ctrl+r")
        await wait(pilot, lambda: isinstance(app.screen, TextPromptScreen), what="the prompt")
        app.screen.query_one("#text").value = "Greeting test"  # type: ignore[attr-defined]
        await pilot.press("enter")
        assert app.chat is not None
        session = app.chat.session
        await wait(
            pilot,
            lambda: (
                session.conversation is not None
                and session.conversation.state.title == "Greeting test"
            ),
            what="the live title",
        )
        await pilot.press("escape")
    (saved,) = list_conversations(app_options.persistence_dir or "")
    assert saved.title == "Greeting test"


async def test_nothing_is_collected_while_the_picker_opens_and_all_is_as_before_after(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any, monkeypatch: Any
) -> None:
    """In ohtui's own program (long_lived.holding): the picker is built with the garbage
    collector off, and once its opening frame is drawn the collector is on again, with
    nothing frozen for it (the picker is closed again)."""
    import gc

    from ohtui import long_lived
    from ohtui.tui.app import navigation

    monkeypatch.setattr(long_lived, "_own_program", True)
    monkeypatch.setattr(long_lived, "_holds", 0)
    monkeypatch.setattr(navigation, "OPENING_HOLD_LIMIT", 600.0)  # the frame lets go, not this
    collecting_while_built: list[bool] = []
    resume = PickerScreen.on_screen_resume

    def on_screen_resume(screen: PickerScreen, event: Any) -> None:
        collecting_while_built.append(gc.isenabled())  # as its opening frame is made
        resume(screen, event)

    monkeypatch.setattr(PickerScreen, "on_screen_resume", on_screen_resume)
    llm_server.reply_text("Hi.", usage=USAGE)
    app = OhtuiApp(app_options)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait(pilot, lambda: chat_ready(app), what="the chat")
            await submit(pilot, "hello")
            await wait(pilot, lambda: status(app) == "finished", what="the reply")
            assert gc.isenabled()
            frozen = gc.get_freeze_count()
            await submit(pilot, "/resume")
            await picker_listed(pilot, wait, 1)
            await wait(pilot, gc.isenabled, what="collecting again")
            assert collecting_while_built == [False]
            assert gc.get_freeze_count() <= frozen  # (frozen objects freed since count down)
    finally:
        gc.enable()


async def test_a_picker_opened_and_left_at_once_again_and_again_leaves_the_collector_on(
    app_options: AppOptions, wait: Any, monkeypatch: Any
) -> None:
    """/resume, then Esc before its frame can settle, five times over: every hold lets go
    once its frame is drawn (not by the safety timer)."""
    import gc

    from ohtui import long_lived
    from ohtui.tui.app import navigation

    monkeypatch.setattr(long_lived, "_own_program", True)
    monkeypatch.setattr(long_lived, "_holds", 0)
    monkeypatch.setattr(navigation, "OPENING_HOLD_LIMIT", 600.0)
    app = OhtuiApp(app_options)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait(pilot, lambda: chat_ready(app), what="the chat")
            for _ in range(5):
                await submit(pilot, "/resume")
                await pilot.press("escape")
            await wait(pilot, lambda: isinstance(app.screen, type(app.chat)), what="the chat")
            await wait(pilot, gc.isenabled, what="collecting again")
            assert long_lived._holds == 0
    finally:
        gc.enable()


async def test_the_model_titles_a_conversation_after_its_first_exchange(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    assert app_options.config_file is not None
    app_options.config_file.write_text("[ui]\nauto_title = true\n", encoding="utf-8")
    llm_server.reply_text("Hello! What shall we build?", usage=USAGE)
    llm_server.reply_text("Planning a parser", usage=USAGE)
    llm_server.reply_text("Sure.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "let us write a parser")
        assert app.chat is not None
        session = app.chat.session
        await wait(
            pilot,
            lambda: (
                session.conversation is not None
                and session.conversation.state.title == "Planning a parser"
            ),
            what="the title",
        )
        await submit(pilot, "go on")  # a second exchange asks for no second title
        await wait(pilot, lambda: status(app) == "finished" and not session.running, what="run")
    title_request = llm_server.requests[1]
    assert "Write a short title" in str(title_request["messages"])
    assert "tools" not in title_request  # a plain call, not an agent step
    assert len(llm_server.requests) == 3
    (saved,) = list_conversations(app_options.persistence_dir or "")
    assert saved.title == "Planning a parser"


async def test_resume_with_an_unknown_id_says_so_and_stays(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_text("Hi.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        await submit(pilot, "hello")
        await wait(pilot, lambda: status(app) == "finished", what="the reply")
        await submit(pilot, "/resume abc123")
        await wait(pilot, lambda: "No saved conversation has an id" in screen_text(app), what="it")
        assert app.chat is not None
        assert app.chat.session.conversation_id == app_options.conversation_id
        assert user_texts(app) == ["hello"] and status(app) == "finished"


async def test_a_message_with_no_conversation_open_is_kept_not_lost(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = OhtuiApp(replace(app_options, resume_id="abc123"))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the opening to fail")
        assert status(app) == "error"
        await submit(pilot, "are you there?")
        await wait(pilot, lambda: "No conversation is open" in screen_text(app), what="it")
        assert app.chat is not None
        assert app.chat.query_one(Composer).text == "are you there?"
    assert llm_server.requests == []


# --- a conversation another ohtui runs ---------------------------------------------------------


class NotingApp(OhtuiApp):
    """The real app, keeping the text of every notification."""

    CSS_PATH = str(Path(app_module.__file__).parent / "ohtui.tcss")  # not relative to this file

    def __init__(self, options: AppOptions) -> None:
        super().__init__(options)
        self.notes: list[str] = []

    def notify(self, message: str, **kwargs: Any) -> None:
        self.notes.append(message)
        super().notify(message, **kwargs)


def placeholder(app: OhtuiApp) -> str:
    assert app.chat is not None
    return str(app.chat.query_one(Composer).query_one("#input", TextArea).placeholder)


async def test_a_conversation_another_ohtui_runs_opens_read_only(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    saved = save(app_options, llm_server, ["alpha one"], workspace=app_options.workspace)
    directory = app_options.persistence_dir
    assert directory is not None
    (before,) = list_conversations(directory)
    asked = len(llm_server.requests)
    with held_elsewhere(directory, app_options.workspace, saved, ("terminal",)) as holder:
        app = NotingApp(replace(app_options, resume_id=saved[:8], conversation_id=None))
        async with app.run_test(size=SIZE) as pilot:
            await wait(pilot, lambda: chat_ready(app), what="the chat")
            assert app.chat is not None
            assert status(app) == "read_only"
            assert "read-only" in screen_text(app)
            assert user_texts(app) == ["alpha one"]  # the history is there
            assert f"pid {holder.pid}" in placeholder(app)  # the composer says why
            said = f"Read-only: another ohtui runs this conversation (pid {holder.pid} on "
            assert [n for n in app.notes if n.startswith(said)]

            app.notes.clear()
            await submit(pilot, "are you there?")
            assert app.chat.query_one(Composer).text == "are you there?"  # kept, not sent
            policy = app.chat.status_bar.policy
            await pilot.press("shift+tab")
            assert app.chat.status_bar.policy == policy
            await submit(pilot, "/title Renamed from the reader")
            await pilot.pause(0.2)
            assert app.chat.sub_title != "Renamed from the reader"
            assert len(app.notes) == 3 and all(n.startswith(said) for n in app.notes)
        (after,) = list_conversations(directory)
        assert after.held_by is not None and after.held_by.pid == holder.pid
    assert len(llm_server.requests) == asked
    assert (after.event_count, after.title, after.status) == (
        before.event_count,
        before.title,
        before.status,
    )


async def test_resume_takes_a_read_only_conversation_over_once_it_is_free(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    saved = save(app_options, llm_server, ["alpha one"])
    directory = app_options.persistence_dir
    assert directory is not None
    with held_elsewhere(directory, app_options.workspace, saved, ("terminal",)) as holder:
        app = OhtuiApp(replace(app_options, resume_id=saved, conversation_id=None))
        async with app.run_test(size=SIZE) as pilot:
            await wait(pilot, lambda: status(app) == "read_only", what="the read-only chat")
            holder.release()
            await submit(pilot, f"/resume {saved[:8]}")
            await wait(pilot, lambda: status(app) == "finished", what="it taken over")
            assert app.chat is not None and app.chat.session.held_by is None
            assert placeholder(app) == PLACEHOLDER
            llm_server.reply_text("Beta.", usage=USAGE)
            await submit(pilot, "beta")
            await wait(
                pilot,
                lambda: status(app) == "finished" and user_texts(app) == ["alpha one", "beta"],
                what="the reply",
            )
    (summary,) = list_conversations(directory)
    assert summary.first_user_message == "alpha one" and summary.id == saved
