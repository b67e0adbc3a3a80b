"""/rewind and /fork in the real app: a scripted run changes a file over turns (checkpoints
taken before each command); going back to a message restores the conversation, the code or
both (the files on disk, the transcript, the message back in the composer); forks open as
conversations of their own; a branch point shows in the transcript; refusals say why."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import (
    USAGE,
    cell_text,
    cells,
    chat_ready,
    run_over,
    status,
    submit,
    user_texts,
)
from conftest import FIXED_CONVERSATION_ID
from holder import held_elsewhere
from llm_server import ScriptedLLMServer

from ohtui.sdk.conversation import list_conversations
from ohtui.settings.schema import KNOWN_TOOLS
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.rewind_types import RewindAction
from ohtui.tui.screens.rewind import RewindScreen
from ohtui.tui.widgets.cells import BranchCell
from ohtui.tui.widgets.composer import Composer

pytestmark = pytest.mark.anyio

SIZE = (110, 36)
TURNS = (("write one", "echo one > a.txt"), ("write two", "echo two > a.txt"))


def script_turn(server: ScriptedLLMServer, command: str, answer: str) -> None:
    """One terminal call, then a final answer."""
    server.reply_tool_call("terminal", {"command": command}, usage=USAGE)
    server.reply_text(answer, usage=USAGE)


async def run_turns(
    app: OhtuiApp, pilot: Any, wait: Any, server: ScriptedLLMServer, turns: Any = TURNS
) -> None:
    """Open the chat and run each (message, command) turn to its end."""
    await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
    for message, command in turns:
        script_turn(server, command, f"Done: {message}.")
        await submit(pilot, message)
        await wait(pilot, lambda: status(app) == "finished", what=f"the turn {message!r}")
        await wait(pilot, lambda m=message: f"Done: {m}." in _texts(app), what="its answer")
        await wait(pilot, lambda: run_over(app), what="the run's end", timeout=5)


def _texts(app: OhtuiApp) -> str:
    return "\n".join(cell_text(cell) for cell in cells(app))


def composer_text(app: OhtuiApp) -> str:
    assert app.chat is not None
    return app.chat.query_one(Composer).text


def stop_blinking(app: OhtuiApp) -> None:
    """Keep the composer's cursor shown: a screen opened over the chat freezes its blink at
    whatever phase it had, and a snapshot would depend on when that was."""
    assert app.chat is not None
    for widget in app.chat.query("TextArea"):
        widget.cursor_blink = False


async def open_rewind(app: OhtuiApp, pilot: Any, wait: Any) -> RewindScreen:
    await submit(pilot, "/rewind")
    await wait(pilot, lambda: isinstance(app.screen, RewindScreen), what="the rewind screen")
    assert isinstance(app.screen, RewindScreen)
    return app.screen


async def choose(app: OhtuiApp, pilot: Any, wait: Any, row: int) -> RewindScreen:
    """Open /rewind, choose the `row`-th message (0: the newest) and wait for its plan."""
    screen = await open_rewind(app, pilot, wait)
    for _ in range(row):
        await pilot.press("down")
    await pilot.press("enter")
    await wait(pilot, lambda: screen.preview is not None, what="what the rewind restores")
    return screen


@pytest.mark.parametrize(
    ("key", "file_after", "users_after", "composer_after"),
    [
        ("b", "one\n", ["write one"], "write two"),
        ("c", "two\n", ["write one"], "write two"),
        ("k", "one\n", ["write one", "write two"], ""),
    ],
    ids=["both", "conversation", "code"],
)
async def test_rewind_to_a_message_restores_what_was_chosen(
    app_options: AppOptions,
    project: Path,
    llm_server: ScriptedLLMServer,
    wait: Any,
    key: str,
    file_after: str,
    users_after: list[str],
    composer_after: str,
) -> None:
    app_options.policy = "never"
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_turns(app, pilot, wait, llm_server)
        assert (project / "a.txt").read_text(encoding="utf-8") == "two\n"
        screen = await choose(app, pilot, wait, 0)
        assert [row.text for row in screen.turns] == ["write two", "write one"]
        assert screen.turns[0].preview is not None and "Done: write two." in screen.turns[0].preview
        assert screen.preview is not None
        assert [(c.path, c.status) for c in screen.preview.changes] == [("a.txt", "modified")]
        await pilot.press(key)
        if key == "k":
            await wait(
                pilot,
                lambda: (project / "a.txt").read_text(encoding="utf-8") == file_after,
                what="the code restored",
            )
        else:
            await wait(pilot, lambda: composer_text(app) == composer_after, what="the message back")
        assert (project / "a.txt").read_text(encoding="utf-8") == file_after
        assert user_texts(app) == users_after
        assert composer_text(app) == composer_after
        if key != "k":
            assert "Done: write two." not in _texts(app)
            assert cells(app, BranchCell)  # the old branch leaves where the message was
            # Edit and send: the conversation goes on from before message 2.
            script_turn(llm_server, "echo three > b.txt", "Done: three.")
            await submit(pilot, "write three")
            await wait(pilot, lambda: status(app) == "finished", what="the new turn")
            await wait(pilot, lambda: "Done: three." in _texts(app), what="its answer")
            sent = llm_server.requests[-1]["messages"]
            said = [m["content"] for m in sent if m["role"] == "user"]
            assert not any("write two" in str(text) for text in said)  # off the branch
            assert user_texts(app) == ["write one", "write three"]


def test_the_rewind_list_snapshot(
    snap_compare: Any, app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await run_turns(app, pilot, wait, llm_server)
        stop_blinking(app)
        await open_rewind(app, pilot, wait)
        await pilot.pause(0.2)
        app.clear_notifications()
        await pilot.wait_for_scheduled_animations()

    assert snap_compare(OhtuiApp(app_options), terminal_size=SIZE, run_before=run_before)


def test_the_choice_with_its_files_snapshot(
    snap_compare: Any, app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await run_turns(app, pilot, wait, llm_server)
        stop_blinking(app)
        await choose(app, pilot, wait, 1)
        await pilot.pause(0.2)
        app.clear_notifications()
        await pilot.wait_for_scheduled_animations()

    assert snap_compare(OhtuiApp(app_options), terminal_size=SIZE, run_before=run_before)


def test_a_branch_point_shows_in_the_transcript_snapshot(
    snap_compare: Any, app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await run_turns(app, pilot, wait, llm_server)
        await choose(app, pilot, wait, 0)
        await pilot.press("c")
        await wait(pilot, lambda: composer_text(app) == "write two", what="the message back")
        llm_server.reply_text("Done: again.", usage=USAGE)
        await submit(pilot, "write it again")
        await wait(pilot, lambda: "Done: again." in _texts(app), what="the answer")
        await wait(pilot, lambda: status(app) == "finished" and run_over(app), what="the run's end")
        assert [cell_text(c) for c in cells(app, BranchCell)] == [
            "⎇ 2 branches here · enter to switch · /rewind to go back"
        ]
        await pilot.pause(0.2)
        app.clear_notifications()
        for widget in app.chat.query("TextArea"):
            widget.cursor_blink = False
        await pilot.wait_for_scheduled_animations()

    assert snap_compare(OhtuiApp(app_options), terminal_size=SIZE, run_before=run_before)


async def test_a_resumed_conversation_with_branches_shows_its_active_branch_and_marker(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_turns(app, pilot, wait, llm_server)
        await choose(app, pilot, wait, 0)
        await pilot.press("c")
        await wait(pilot, lambda: composer_text(app) == "write two", what="the message back")
        llm_server.reply_text("Done: other.", usage=USAGE)
        await submit(pilot, "something else")
        await wait(pilot, lambda: "Done: other." in _texts(app), what="the answer")
        await wait(pilot, lambda: status(app) == "finished" and run_over(app), what="the run's end")
    resumed = OhtuiApp(replace(app_options, resume_id=FIXED_CONVERSATION_ID, conversation_id=None))
    async with resumed.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(resumed), what="the resumed chat")
        await wait(pilot, lambda: bool(cells(resumed, BranchCell)), what="the branch marker")
        assert user_texts(resumed) == ["write one", "something else"]
        assert "Done: write two." not in _texts(resumed)


async def test_fork_opens_a_copy_and_leaves_the_source_as_it_was(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    directory = app_options.persistence_dir
    assert directory is not None
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_turns(app, pilot, wait, llm_server)
        (source,) = list_conversations(directory)
        await submit(pilot, "/fork Trying another way")
        await wait(
            pilot,
            lambda: (
                app.chat is not None
                and app.chat.session.conversation_id not in (None, FIXED_CONVERSATION_ID)
                and chat_ready(app)
            ),
            what="the fork to open",
        )
        assert app.chat is not None
        await wait(pilot, lambda: user_texts(app) == ["write one", "write two"], what="its events")
        assert app.chat.status_bar.title == "Trying another way"
        fork_id = app.chat.session.conversation_id
    listed = {summary.id: summary for summary in list_conversations(directory)}
    assert listed[FIXED_CONVERSATION_ID].event_count == source.event_count
    assert listed[FIXED_CONVERSATION_ID].title == source.title
    assert fork_id in listed and listed[fork_id].title == "Trying another way"


async def test_fork_at_a_message_with_the_code_takes_its_whole_turn(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_turns(app, pilot, wait, llm_server)
        await choose(app, pilot, wait, 1)  # "write one"
        await pilot.press(RewindAction.FORK_WITH_CODE.key)
        await wait(
            pilot,
            lambda: (
                app.chat is not None
                and app.chat.session.conversation_id not in (None, FIXED_CONVERSATION_ID)
                and chat_ready(app)
            ),
            what="the fork to open",
        )
        assert app.chat is not None
        await wait(pilot, lambda: "Done: write one." in _texts(app), what="the fork's turn")
        assert user_texts(app) == ["write one"]
        assert "write two" not in _texts(app)
        assert app.chat.status_bar.title == "Fork of write one"  # untitled: its first message
        assert (project / "a.txt").read_text(encoding="utf-8") == "one\n"


async def test_rewind_is_refused_while_the_agent_runs(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    app = OhtuiApp(app_options)
    notes: list[str] = []
    notify = app.notify

    def record(message: str, **kwargs: Any) -> None:
        notes.append(message)
        notify(message, **kwargs)

    app.notify = record  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the chat")
        llm_server.reply_text("Slow answer.", usage=USAGE, delay=3.0)
        await submit(pilot, "take your time")
        await wait(pilot, lambda: status(app) == "running", what="the run")
        assert app.chat is not None
        app.chat.run_slash("rewind")
        app.chat.run_slash("fork")
        await wait(pilot, lambda: len(notes) >= 2, what="the refusals")
        assert not isinstance(app.screen, RewindScreen)
        assert [n for n in notes if n.startswith("The agent is running: stop it (Ctrl+C)")]
        assert any("then /rewind again" in n for n in notes)
        assert any("then /fork again" in n for n in notes)


async def test_rewind_and_fork_are_refused_on_a_read_only_conversation(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_turns(app, pilot, wait, llm_server, TURNS[:1])
    directory = app_options.persistence_dir
    assert directory is not None
    tools = tuple(KNOWN_TOOLS)
    with held_elsewhere(directory, app_options.workspace, FIXED_CONVERSATION_ID, tools):
        reader = OhtuiApp(
            replace(app_options, resume_id=FIXED_CONVERSATION_ID, conversation_id=None)
        )
        notes: list[str] = []
        notify = reader.notify

        def record(message: str, **kwargs: Any) -> None:
            notes.append(message)
            notify(message, **kwargs)

        reader.notify = record  # type: ignore[method-assign]
        async with reader.run_test(size=SIZE) as pilot:
            await wait(pilot, lambda: chat_ready(reader), what="the chat")
            assert status(reader) == "read_only"
            notes.clear()
            await submit(pilot, "/rewind")
            await submit(pilot, "/fork A copy")
            assert reader.chat is not None
            reader.chat.prefill("")
            await pilot.press("escape", "escape")
            await pilot.pause(0.3)
            assert not isinstance(reader.screen, RewindScreen)
            assert len(notes) == 3
            said = "Read-only: another ohtui runs this conversation"
            assert all(n.startswith(said) for n in notes)
    (only,) = list_conversations(directory)  # no fork was made
    assert only.id == FIXED_CONVERSATION_ID


async def test_escape_twice_on_an_empty_composer_opens_the_rewind_list(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_turns(app, pilot, wait, llm_server, TURNS[:1])
        assert app.chat is not None
        app.chat.prefill("half written")
        await pilot.press("escape", "escape")
        await pilot.pause(0.3)
        assert not isinstance(app.screen, RewindScreen)  # Esc in a message is no rewind
        app.chat.prefill("")
        await pilot.press("escape", "escape")
        await wait(pilot, lambda: isinstance(app.screen, RewindScreen), what="the rewind list")
        await pilot.press("escape")
        assert not isinstance(app.screen, RewindScreen)


async def test_enter_on_a_branch_marker_switches_to_the_other_branch_and_back(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await run_turns(app, pilot, wait, llm_server)
        await choose(app, pilot, wait, 0)
        await pilot.press("c")
        await wait(pilot, lambda: composer_text(app) == "write two", what="the message back")
        llm_server.reply_text("Done: other.", usage=USAGE)
        await submit(pilot, "something else")
        await wait(pilot, lambda: "Done: other." in _texts(app), what="the answer")
        await wait(pilot, lambda: status(app) == "finished" and run_over(app), what="the run's end")
        (marker,) = cells(app, BranchCell)
        marker.focus()
        await pilot.press("enter")
        await wait(pilot, lambda: "Done: write two." in _texts(app), what="the first branch")
        assert user_texts(app) == ["write one", "write two"]
        (marker,) = cells(app, BranchCell)
        marker.focus()
        await pilot.press("enter")
        await wait(pilot, lambda: "Done: other." in _texts(app), what="the second branch again")
        assert user_texts(app) == ["write one", "something else"]
