"""End-to-end chat flows: the real app, its real engine, litellm over HTTP to the scripted server.

Sending and streaming, tool runs folded into cells, the message queue, errors and recovery,
resuming, long conversations.
"""

from __future__ import annotations

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
    save_long_conversation,
    screen_text,
    send,
    status,
    submit,
    user_message_texts,
    user_texts,
)
from llm_server import ScriptedLLMServer

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.approval import ActionRow, ApprovalScreen
from ohtui.tui.screens.settings import SettingsScreen
from ohtui.tui.widgets.cells import (
    AgentCell,
    ErrorCell,
    FinishCell,
    UserCell,
)
from ohtui.tui.widgets.conversation_view import MAX_MOUNTED
from ohtui.tui.widgets.status_bar import StatusBar

pytestmark = pytest.mark.anyio


def shows_line_ending(app: OhtuiApp, end: str) -> bool:
    """Whether a screen line ends with `end`."""
    return any(line.endswith(end) for line in screen_text(app).splitlines())


async def test_enter_sends_and_the_answer_streams_in(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    chunks = ["Streaming ", "starts ", "here, ", "then ", "the ", "rest."]
    llm_server.reply_text("".join(chunks), chunks=chunks, chunk_delay=0.25, usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        assert status(app) == "idle"
        await send(pilot, "say hello")
        await wait(pilot, lambda: user_texts(app) == ["say hello"], what="the user cell")
        await wait(pilot, lambda: "Streaming starts" in screen_text(app), what="the first chunks")
        # Part of the answer is on screen while the rest is still on its way.
        assert "the rest." not in screen_text(app)
        assert status(app) == "running"

        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
        await pilot.pause(0.05)
        agents = cells(app, AgentCell)
        assert [c.text for c in agents] == ["Streaming starts here, then the rest."]
        assert len(cells(app)) == 2  # the user's message and the answer, nothing left over
        assert "Streaming starts here, then the rest." in screen_text(app)
    assert llm_server.requests[0]["stream"] is True
    assert user_message_texts(llm_server.requests[0]) == ["say hello"]


def rows_between(shown: str, first: str, second: str) -> int:
    """How many screen rows below the row showing `first` the row showing `second` is."""
    lines = shown.splitlines()
    top = next(i for i, line in enumerate(lines) if first in line)
    return next(i for i, line in enumerate(lines) if second in line) - top


async def test_streamed_text_does_not_move_when_the_answer_completes(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    chunks = ["Partial ", "answer ", "here."]
    llm_server.reply_text("".join(chunks), chunks=chunks, chunk_delay=0.4, usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "say hello")
        await wait(pilot, lambda: "Partial" in screen_text(app), what="the first chunk")
        streaming = rows_between(screen_text(app), "❯ say hello", "Partial")
        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
        await pilot.pause(0.05)
        final = rows_between(screen_text(app), "❯ say hello", "Partial answer here.")
        assert streaming == final == 2  # one blank row between the two cells


async def test_a_run_with_tools_folds_each_result_into_its_action(
    app_options: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    (project / "app.py").write_text("print('old')\n", encoding="utf-8")
    llm_server.reply_tool_call(
        "terminal", {"command": "echo out-of-shell; exit 3"}, text="Checking.", usage=USAGE
    )
    llm_server.reply_tool_call(
        "file_editor",
        {"command": "str_replace", "path": "app.py", "old_str": "old", "new_str": "new"},
        usage=USAGE,
    )
    tasks = [
        {"title": "read the code", "status": "done"},
        {"title": "fix the bug", "status": "in_progress", "notes": "off by one\nin tokens()"},
        {"title": "run the tests"},
    ]
    llm_server.reply_tool_call("task_tracker", {"command": "plan", "task_list": tasks}, usage=USAGE)
    llm_server.reply_tool_call("think", {"thought": "The fix looks right."}, usage=USAGE)
    llm_server.reply_tool_call("finish", {"message": "Fixed **app.py**."}, usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "fix it")
        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")

        terminal = action_cells(app, "terminal")[0]
        text = cell_text(terminal)
        assert "echo out-of-shell; exit 3" in text
        assert "✗ exit 3" in text
        assert "out-of-shell" in text.split("\n", 2)[2]  # the output, under the status line
        assert terminal.has_class("-failed")
        assert [c.text for c in cells(app, AgentCell) if not isinstance(c, FinishCell)] == [
            "Checking."
        ]

        editor = action_cells(app, "file_editor")[0]
        text = cell_text(editor)
        assert "edit app.py" in text
        assert "-print('old')" in text
        assert "+print('new')" in text
        assert (project / "app.py").read_text(encoding="utf-8") == "print('new')\n"

        tracker = action_cells(app, "task_tracker")[0]
        assert "☑ read the code" in cell_text(tracker)
        assert "◐ fix the bug\n      off by one\n      in tokens()\n" in cell_text(tracker)
        assert "☐ run the tests" in cell_text(tracker)

        think = action_cells(app, "think")[0]
        rendered = think.render()
        assert rendered.plain == "… The fix looks right."
        assert any("dim" in str(span.style) for span in rendered.spans)

        finish = cells(app, FinishCell)
        assert [c.text for c in finish] == ["Fixed **app.py**."]
        assert all(c.result is not None for c in action_cells(app))
        shown = screen_text(app)
        assert "Fixed app.py." in shown  # Markdown, rendered
        assert "☑ read the code" in shown
        assert "finished" in shown


async def test_enter_and_space_fold_a_focused_cell_and_c_copies_it(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    llm_server.reply_tool_call("terminal", {"command": "seq 1 20"}, usage=USAGE)
    llm_server.reply_text("Counted.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "count")
        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
        cell = action_cells(app, "terminal")[0]
        collapsed = cell_text(cell)
        assert "14 more lines" in collapsed
        assert "\n  20" not in collapsed

        await pilot.press("tab")  # from the composer to the newest cell: the answer
        assert isinstance(app.focused, AgentCell)
        await pilot.press("up")
        assert app.focused is cell
        await pilot.press("enter")
        assert cell.expanded
        expanded = cell_text(cell)
        assert "more lines" not in expanded
        assert "\n  20" in expanded
        await pilot.pause()
        assert shows_line_ending(app, "  20")
        await pilot.press("space")
        assert not cell.expanded
        assert cell_text(cell) == collapsed
        await pilot.pause()
        assert not shows_line_ending(app, "  20")
        assert "14 more lines" in screen_text(app)
        await pilot.press("space")
        assert cell.expanded

        await pilot.press("c")
        numbers = "\n".join(str(n) for n in range(1, 21))
        assert app.clipboard == f"seq 1 20\n{numbers}"  # without the status line the cell hides
        await pilot.press("down")  # the agent's answer
        assert isinstance(app.focused, AgentCell)
        await pilot.press("c")
        assert app.clipboard == "Counted."


async def test_a_message_sent_while_running_is_queued_then_delivered_at_the_next_step(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.policy = "never"
    llm_server.reply_tool_call("terminal", {"command": "sleep 1.5"}, usage=USAGE)
    llm_server.reply_text("Noted, checking the docs too.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "build it")
        await wait(pilot, lambda: bool(action_cells(app, "terminal")), what="the command")
        assert status(app) == "running"
        await submit(pilot, "also check the docs")
        await wait(pilot, lambda: len(cells(app, UserCell)) == 2, what="the queued cell")
        queued = cells(app, UserCell)[-1]
        assert queued.queued
        assert queued.text == "also check the docs"
        assert app.chat is not None
        assert app.chat.query_one(StatusBar).queued == 1
        await pilot.pause(0.05)
        shown = screen_text(app)
        assert "1 queued" in shown.splitlines()[0]
        assert "❯ also check the docs  (queued)" in shown
        assert len(llm_server.requests) == 1  # not sent yet: the command still runs

        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
        # Delivered between the two steps: the second LLM call carries it.
        assert len(llm_server.requests) == 2
        assert user_message_texts(llm_server.requests[0]) == ["build it"]
        assert user_message_texts(llm_server.requests[1])[-1] == "also check the docs"
        assert not queued.queued
        assert app.chat.query_one(StatusBar).queued == 0
        assert user_texts(app) == ["build it", "also check the docs"]
        shown = screen_text(app)
        assert "(queued)" not in shown
        assert "queued" not in shown.splitlines()[0]
        # The answer to it comes after it.
        order = [type(c).__name__ for c in cells(app)]
        assert order == ["UserCell", "ActionCell", "UserCell", "AgentCell"]


async def test_an_llm_error_shows_what_to_do_and_the_next_message_recovers(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_error(401)
    llm_server.reply_text("Recovered.", usage=USAGE)
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "hello")
        await wait(pilot, lambda: status(app) == "error", what="the error")
        errors = cells(app, ErrorCell)
        assert len(errors) == 1
        assert errors[0].title == "The model provider refused the API key"
        assert "Check the API key" in errors[0].detail
        assert errors[0].has_class("error")
        shown = screen_text(app)
        assert "✗ The model provider refused the API key" in shown
        assert "error" in shown.splitlines()[0]
        assert len(llm_server.requests) == 1  # an auth error is not retried

        await submit(pilot, "try again")
        await wait(pilot, lambda: status(app) == "finished", what="the recovery")
        assert [c.text for c in cells(app, AgentCell)] == ["Recovered."]
        assert user_texts(app) == ["hello", "try again"]
        assert len(cells(app, ErrorCell)) == 1


async def test_without_a_model_the_first_run_settings_open(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app_options.model = None
    app = OhtuiApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(
            pilot, lambda: isinstance(app.screen, SettingsScreen), what="the first-run screen"
        )
        assert app.screen.first_run
        assert "Welcome to ohtui" in screen_text(app)
        assert status(app) == "setup"
    assert llm_server.requests == []


async def test_resuming_shows_the_history_and_reopens_the_waiting_actions(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    fixed_id = app_options.conversation_id
    assert fixed_id is not None
    app_options.policy = "always"
    llm_server.reply_text("Hi! What next?", usage=USAGE)
    llm_server.reply_tool_calls(
        [("terminal", {"command": "rm -rf build"}), ("terminal", {"command": "echo cleaned"})],
        usage=USAGE,
    )
    first = OhtuiApp(app_options)
    async with first.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(first), what="the conversation to open")
        await submit(pilot, "hello")
        await wait(pilot, lambda: status(first) == "finished", what="the first answer")
        await submit(pilot, "clean up")
        await wait(pilot, lambda: isinstance(first.screen, ApprovalScreen), what="the modal")
        waiting = [(r.action.action_id, r.action.summary) for r in first.screen.query(ActionRow)]
        await pilot.press("escape", "ctrl+q")
    assert first.resume_hint is not None

    llm_server.reply_text("Cleaned.", usage=USAGE)
    options = replace(app_options, resume_id=fixed_id[:8], conversation_id=None)
    second = OhtuiApp(options)
    async with second.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: isinstance(second.screen, ApprovalScreen), what="the modal")
        rows = [(r.action.action_id, r.action.summary) for r in second.screen.query(ActionRow)]
        assert rows == waiting
        assert [summary for _, summary in rows] == ["rm -rf build", "echo cleaned"]
        assert second.chat is not None
        assert second.chat.session.conversation_id == fixed_id
        # The whole history is back, the actions marked as waiting.
        assert user_texts(second) == ["hello", "clean up"]
        assert [c.text for c in cells(second, AgentCell)] == ["Hi! What next?"]
        assert all("waiting for your approval" in cell_text(c) for c in action_cells(second))
        await pilot.press("y")
        await wait(pilot, lambda: status(second) == "finished", what="the run to finish")
        assert "cleaned" in cell_text(action_cells(second)[1])
        assert [c.text for c in cells(second, AgentCell)] == ["Hi! What next?", "Cleaned."]


async def test_a_long_conversation_mounts_a_bounded_window_and_pages_older_cells_in(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    conversation_id = save_long_conversation(app_options, turns=250)  # 1,002 events
    options = replace(app_options, resume_id=conversation_id, conversation_id=None)
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), timeout=15, what="the conversation to open")
        assert app.chat is not None and app.chat.session.conversation is not None
        assert len(app.chat.session.conversation.state.events) == 1002
        await pilot.pause(0.1)
        view = app.chat.view
        first = len(cells(app))
        assert 0 < first <= MAX_MOUNTED
        assert cell_text(cells(app)[-1]) == "answer 249"  # the newest event, at the bottom
        assert "answer 249" in screen_text(app)
        assert "question 0" not in [c.text for c in cells(app, UserCell)]

        view.scroll_home(animate=False)
        await wait(pilot, lambda: len(cells(app)) > first, what="older cells")
        assert cell_text(cells(app)[-1]) == "answer 249"  # the newest is still there
        older = [c.text for c in cells(app, UserCell)]
        assert all(text.startswith("question ") for text in older)
        assert older == sorted(older, key=lambda text: int(text.split()[-1]))  # in order
        assert len(set(older)) == len(older)  # nothing shown twice
        # The view keeps its place instead of staying at the very top.
        await wait(pilot, lambda: view.scroll_y > 0, what="the view to keep its place")


async def test_new_events_trim_the_window_back_after_paging_older_cells_in(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    conversation_id = save_long_conversation(app_options, turns=250)
    options = replace(app_options, resume_id=conversation_id, conversation_id=None)
    assert options.config_file is not None  # the view's window is tested, not condensation
    with options.config_file.open("a", encoding="utf-8") as file:
        file.write('[context]\nstrategy = "none"\n')
    llm_server.reply_text("answer 250", usage=USAGE)
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), timeout=15, what="the conversation to open")
        assert app.chat is not None
        view = app.chat.view
        while not view.detached:  # page older cells in until the newest leave the window
            oldest = view.window[0]
            view.scroll_home(animate=False)
            await wait(pilot, lambda o=oldest: view.window[0] < o, what="older cells")
            assert len(view.children) <= MAX_MOUNTED
        assert "answer 249" not in [cell_text(c) for c in cells(app)]
        await submit(pilot, "question 250")  # back to the newest, following along
        await wait(pilot, lambda: status(app) == "finished", what="the answer")
        newest = ["❯ question 250", "answer 250"]
        await wait(pilot, lambda: [cell_text(c) for c in cells(app)[-2:]] == newest, what="them")
        assert len(cells(app)) <= MAX_MOUNTED
        assert "answer 250" in screen_text(app)
