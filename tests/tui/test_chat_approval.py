"""Approving and rejecting actions in the real app: the modal, the banner, rules, policies."""

from __future__ import annotations

import threading
import tomllib
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import (
    SIZE,
    USAGE,
    action_cells,
    cell_text,
    chat_ready,
    joined,
    screen_text,
    static_text,
    status,
    submit,
    tool_message_texts,
    user_texts,
)
from llm_server import ScriptedLLMServer
from textual import events
from textual.widgets import Input, OptionList

import ohtui.tui.app as app_module
from ohtui.sdk import ApprovalRulesPolicy, ConfirmRisky, NeverConfirm
from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.approval import ApprovalScreen
from ohtui.tui.screens.policy_picker import PolicyPickerScreen
from ohtui.tui.screens.reject_reason import RejectReasonScreen
from ohtui.tui.screens.rule_editor import RuleEditorScreen
from ohtui.tui.screens.rules import RulesScreen

pytestmark = pytest.mark.anyio

WAITING = "⏸ waiting for your approval"
BANNER = "⏸ 1 action waits for your approval. Press Ctrl+O to review them."


class RecordingApp(OhtuiApp):
    """The real app, recording its bells and notifications."""

    CSS_PATH = str(Path(app_module.__file__).parent / "ohtui.tcss")  # not relative to this file

    def __init__(self, options: AppOptions) -> None:
        super().__init__(options)
        self.bells = 0
        self.notes: list[tuple[str, str]] = []

    def bell(self) -> None:
        self.bells += 1
        super().bell()

    def notify(self, message: str, *, title: str = "", **kwargs: Any) -> None:
        self.notes.append((title, message))
        super().notify(message, title=title, **kwargs)


def approval(app: OhtuiApp) -> ApprovalScreen:
    """The approval modal (the active screen)."""
    screen = app.screen
    assert isinstance(screen, ApprovalScreen)
    return screen


async def ask_for_approval(app: OhtuiApp, pilot: Any, wait: Any, text: str = "do it") -> None:
    """Send a message, and wait for the approval modal its action opens."""
    await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
    await submit(pilot, text)
    await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
    assert status(app) == "waiting_for_confirmation"


@pytest.fixture
def always(app_options: AppOptions) -> AppOptions:
    """Options with the "always confirm" policy."""
    app_options.policy = "always"
    return app_options


async def test_y_approves_and_the_action_runs(
    always: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo approved-run"}, usage=USAGE)
    llm_server.reply_text("It ran.", usage=USAGE)
    app = RecordingApp(always)
    async with app.run_test(size=SIZE) as pilot:
        await ask_for_approval(app, pilot, wait)
        modal = approval(app)
        assert [row.action.summary for row in modal.rows] == ["echo approved-run"]
        assert "1 action waits for your approval" in screen_text(app)
        cell = action_cells(app, "terminal")[0]
        assert WAITING in cell_text(cell)
        assert app.bells == 1
        # The user is here (the app has focus, a key was just pressed): no notification.
        assert all(title != "Approval needed" for title, _ in app.notes)
        assert len(llm_server.requests) == 1

        await pilot.press("y")
        assert not isinstance(app.screen, ApprovalScreen)
        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
        assert "✓ exit 0" in cell_text(cell)
        assert "approved-run" in cell_text(cell)
        assert WAITING not in cell_text(cell)
        assert "approved-run" in tool_message_texts(llm_server.requests[1])[0]


async def test_the_modal_gives_the_reason_in_words_not_class_names(
    always: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "npm test"}, usage=USAGE)
    app = OhtuiApp(always)
    async with app.run_test(size=SIZE) as pilot:
        await ask_for_approval(app, pilot, wait)
        # Not shown to only read, but confined by the sandbox and undoable: ohtui's LOW.
        assert static_text(app, "#detail-reason") == (
            "pattern rules: confined to the workspace and undoable (a checkpoint is taken first)"
        )
        assert "Analyzer" not in screen_text(app)


async def test_n_with_a_reason_rejects_and_the_agent_reads_it(
    always: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "touch ran.txt"}, usage=USAGE)
    llm_server.reply_text("Understood.", usage=USAGE)
    app = OhtuiApp(always)
    async with app.run_test(size=SIZE) as pilot:
        await ask_for_approval(app, pilot, wait)
        await pilot.press("n")
        await wait(pilot, lambda: isinstance(app.screen, RejectReasonScreen), what="the reason")
        app.screen.query_one(Input).value = "not in this repo"
        await pilot.press("enter")
        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
        cell = action_cells(app, "terminal")[0]
        assert "✗ rejected: not in this repo" in cell_text(cell)
        assert cell.has_class("-failed")
        assert "✗ rejected: not in this repo" in screen_text(app)
    assert not (project / "ran.txt").exists()
    assert len(llm_server.requests) == 2
    assert any("not in this repo" in text for text in tool_message_texts(llm_server.requests[1]))


async def test_space_marks_each_action_and_enter_applies(
    always: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_tool_calls(
        [("terminal", {"command": "touch one.txt"}), ("terminal", {"command": "touch two.txt"})],
        usage=USAGE,
    )
    llm_server.reply_text("One of two.", usage=USAGE)
    app = OhtuiApp(always)
    async with app.run_test(size=SIZE) as pilot:
        await ask_for_approval(app, pilot, wait)
        modal = approval(app)
        assert [row.action.summary for row in modal.rows] == ["touch one.txt", "touch two.txt"]
        await pilot.press("enter")  # nothing marked yet: it says so and stays
        assert isinstance(app.screen, ApprovalScreen)
        assert "Mark every action" in screen_text(app)
        await pilot.press("space", "down", "space", "space")
        assert list(modal.marks.values()) == ["approve", "reject"]
        await pilot.press("enter")
        await wait(pilot, lambda: isinstance(app.screen, RejectReasonScreen), what="the reason")
        app.screen.query_one(Input).value = "only one"
        await pilot.press("enter")
        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
        first, second = action_cells(app, "terminal")
        assert "✓ exit 0" in cell_text(first)
        assert "✗ rejected: only one" in cell_text(second)
    assert (project / "one.txt").exists()
    assert not (project / "two.txt").exists()


async def test_always_allow_saves_a_rule_that_rules_lists_and_the_engine_applies(
    always: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo first"}, usage=USAGE)
    llm_server.reply_text("First done.", usage=USAGE)
    llm_server.reply_tool_call("terminal", {"command": "echo second"}, usage=USAGE)
    llm_server.reply_text("Second done.", usage=USAGE)
    app = OhtuiApp(always)
    async with app.run_test(size=SIZE) as pilot:
        await ask_for_approval(app, pilot, wait)
        await pilot.press("a")
        await wait(pilot, lambda: isinstance(app.screen, RuleEditorScreen), what="the editor")
        # `echo` takes no subcommand: the suggestion covers every echo, not just this one.
        assert "Allow terminal commands starting with `echo` — this session" in screen_text(app)
        await pilot.press("enter")  # save: the only action is approved with the rule
        await wait(pilot, lambda: status(app) == "finished", what="the first run")
        assert "✓ exit 0" in cell_text(action_cells(app, "terminal")[0])
        assert app.chat is not None and app.chat.session.conversation is not None
        policy = app.chat.session.conversation.state.confirmation_policy
        assert isinstance(policy, ApprovalRulesPolicy)
        assert [rule.command_prefix for rule in policy.rules] == ["echo"]

        # The rule lets the next echo run without asking.
        await submit(pilot, "again")
        await wait(
            pilot,
            lambda: status(app) == "finished" and len(action_cells(app)) == 2,
            what="the second run",
        )
        assert "✓ exit 0" in cell_text(action_cells(app, "terminal")[1])
        assert not isinstance(app.screen, ApprovalScreen)

        await submit(pilot, "/rules")
        await wait(pilot, lambda: isinstance(app.screen, RulesScreen), what="the rules")
        rows = rule_rows(app)
        assert len(rows) == 1
        assert "terminal commands starting with `echo`" in rows[0]
        assert "terminal commands starting with `echo`" in screen_text(app)
        await pilot.press("escape")
        assert not isinstance(app.screen, RulesScreen)


async def test_always_allow_suggests_one_rule_per_part_and_none_for_rm(
    always: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    (project / "build").mkdir()
    llm_server.reply_tool_call("terminal", {"command": "rm -rf build && echo cleaned"})
    llm_server.reply_text("Not yet.", usage=USAGE)
    llm_server.reply_tool_call("terminal", {"command": "cd build && git status"})
    llm_server.reply_text("Done.", usage=USAGE)
    app = OhtuiApp(always)
    async with app.run_test(size=SIZE) as pilot:
        await ask_for_approval(app, pilot, wait, "clean")
        await pilot.press("a")
        await wait(pilot, lambda: isinstance(app.screen, RuleEditorScreen), what="the editor")
        editor = app.screen
        assert [field.value for field in editor.query(Input)] == [""]
        assert "No rule is suggested: `rm` deletes or changes what it cannot undo" in joined(
            screen_text(app).splitlines()
        )
        await pilot.press("escape", "n", "enter")  # no rule; reject
        await wait(pilot, lambda: status(app) == "finished", what="the rejection")
        assert (project / "build").exists()

        await ask_for_approval(app, pilot, wait, "status")
        await pilot.press("a")
        await wait(pilot, lambda: isinstance(app.screen, RuleEditorScreen), what="the editor")
        assert [field.value for field in app.screen.query(Input)] == ["cd", "git status"]
        await pilot.press("enter")
        await wait(pilot, lambda: status(app) == "finished", what="the run")
        assert app.chat is not None and app.chat.session.conversation is not None
        policy = app.chat.session.conversation.state.confirmation_policy
        assert isinstance(policy, ApprovalRulesPolicy)
        assert [rule.command_prefix for rule in policy.rules] == ["cd", "git status"]


def rule_rows(app: OhtuiApp) -> list[str]:
    """The rules dialog's rule rows (not its scope headings), as plain text."""
    options = app.screen.query_one(OptionList)
    found = [options.get_option_at_index(i) for i in range(options.option_count)]
    return [str(option.prompt) for option in found if not option.disabled]


async def test_rules_lists_a_rule_in_the_words_the_rule_editor_used(
    always: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo first"}, usage=USAGE)
    llm_server.reply_text("Done.", usage=USAGE)
    app = OhtuiApp(always)
    async with app.run_test(size=SIZE) as pilot:
        await ask_for_approval(app, pilot, wait)
        await pilot.press("a")
        await wait(pilot, lambda: isinstance(app.screen, RuleEditorScreen), what="the editor")
        assert "Allow terminal commands starting with `echo` — this session" in screen_text(app)
        await pilot.press("enter")
        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
        await submit(pilot, "/rules")
        await wait(pilot, lambda: isinstance(app.screen, RulesScreen), what="the rules")
        assert rule_rows(app) == ["  allow  terminal commands starting with `echo`"]


async def test_escape_leaves_a_banner_and_ctrl_o_reopens_the_modal(
    always: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo later"}, usage=USAGE)
    llm_server.reply_text("Done later.", usage=USAGE)
    app = OhtuiApp(always)
    async with app.run_test(size=SIZE) as pilot:
        await ask_for_approval(app, pilot, wait)
        ids = [row.action.action_id for row in approval(app).rows]
        await pilot.press("escape")
        assert not isinstance(app.screen, ApprovalScreen)
        assert status(app) == "waiting_for_confirmation"
        assert static_text(app, "#banner") == BANNER
        assert BANNER in screen_text(app)
        assert WAITING in cell_text(action_cells(app, "terminal")[0])

        await pilot.press("ctrl+o")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        assert [row.action.action_id for row in approval(app).rows] == ids
        assert BANNER not in screen_text(app)
        await pilot.press("y")
        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
        assert BANNER not in screen_text(app)


async def test_ctrl_o_with_nothing_waiting_says_so(
    app_options: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    app = RecordingApp(app_options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await pilot.press("ctrl+o")
        assert not isinstance(app.screen, ApprovalScreen)
        assert ("", "No action is waiting for approval.") in app.notes


async def test_p_in_the_modal_switches_the_policy(
    always: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo one"}, usage=USAGE)
    llm_server.reply_tool_call("terminal", {"command": "echo two"}, usage=USAGE)
    llm_server.reply_text("Both ran.", usage=USAGE)
    app = OhtuiApp(always)
    async with app.run_test(size=SIZE) as pilot:
        await ask_for_approval(app, pilot, wait)
        await pilot.press("p")
        await wait(pilot, lambda: isinstance(app.screen, PolicyPickerScreen), what="the picker")
        await pilot.press("down", "down", "enter")  # always → risky → never
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        assert "policy: never confirm (changed)" in screen_text(app)
        await pilot.press("y")
        # With "never", the second action runs without asking.
        await wait(pilot, lambda: status(app) == "finished", what="the run to finish")
        assert len(action_cells(app, "terminal")) == 2
        assert all("✓ exit 0" in cell_text(c) for c in action_cells(app, "terminal"))
        assert app.chat is not None and app.chat.status_bar.policy == "never"
        assert app.chat.session.conversation is not None
        policy = app.chat.session.conversation.state.confirmation_policy
        assert isinstance(policy.fallback, NeverConfirm)
        assert "never confirm" in screen_text(app).splitlines()[0]


async def test_a_policy_chosen_in_the_modal_survives_escape(
    always: AppOptions, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo one"}, usage=USAGE)
    app = OhtuiApp(always)
    async with app.run_test(size=SIZE) as pilot:
        await ask_for_approval(app, pilot, wait)
        await pilot.press("p")
        await wait(pilot, lambda: isinstance(app.screen, PolicyPickerScreen), what="the picker")
        await pilot.press("down", "enter")  # always → risky
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        await pilot.press("escape")
        assert not isinstance(app.screen, ApprovalScreen)
        assert app.chat is not None and app.chat.status_bar.policy == "risky"
        assert static_text(app, "#banner") == BANNER
        conversation = app.chat.session.conversation
        assert conversation is not None

        def switched() -> bool:
            policy = conversation.state.confirmation_policy
            return isinstance(policy, ApprovalRulesPolicy) and isinstance(
                policy.fallback, ConfirmRisky
            )

        await wait(pilot, switched, what="the conversation to take the policy")
        assert status(app) == "waiting_for_confirmation"
        # Reopened, the modal starts from the policy kept.
        await pilot.press("ctrl+o")
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        assert "policy: confirm risky" in screen_text(app)
        assert "(changed)" not in screen_text(app)


async def test_the_bell_rings_and_a_notification_is_posted_when_approval_is_needed(
    always: AppOptions, llm_server: ScriptedLLMServer, wait: Any, monkeypatch: Any
) -> None:
    # The model answers only once the user has switched to another window (a fixed delay
    # raced the app taking the blur on a loaded machine: the bell had rung before it).
    away = threading.Event()
    sleep = llm_server._sleep
    monkeypatch.setattr(llm_server, "_sleep", lambda seconds: away.wait(20) and sleep(seconds))
    llm_server.reply_tool_call("terminal", {"command": "echo hi"}, usage=USAGE)
    app = RecordingApp(always)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await submit(pilot, "do it")
        app.post_message(events.AppBlur())
        await wait(pilot, lambda: not app.app_focus, what="the blur")
        assert len(llm_server.requests) <= 1 and app.bells == 0
        away.set()
        await wait(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        assert app.bells == 1
        assert ("Approval needed", "1 action waits for your approval.") in app.notes
        await wait(pilot, lambda: "Approval needed" in screen_text(app), what="the toast")


async def test_a_message_sent_while_actions_wait_does_not_approve_them(
    always: AppOptions, project: Path, llm_server: ScriptedLLMServer, wait: Any
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "touch ran.txt"}, usage=USAGE)
    llm_server.reply_text("Fine, I will not.", usage=USAGE)
    app = OhtuiApp(always)
    async with app.run_test(size=SIZE) as pilot:
        await ask_for_approval(app, pilot, wait, "make a file")
        await pilot.press("escape")  # decide later: the banner says the action waits
        assert BANNER in screen_text(app)
        await submit(pilot, "wait, do not do that")
        assert app.chat is not None
        session = app.chat.session
        await wait(
            pilot, lambda: "wait, do not do that" in user_texts(app), what="the message shown"
        )
        await pilot.pause(0.5)  # time enough for a run to start and touch the file
        await wait(pilot, lambda: not session.running, what="the message to be handled")
        assert not (project / "ran.txt").exists()
        assert "✓ exit 0" not in cell_text(action_cells(app, "terminal")[0])


async def test_an_always_rule_outlives_the_conversation(
    always: AppOptions, llm_server: ScriptedLLMServer, wait: Any, tmp_path: Any
) -> None:
    """A rule saved for "always" goes to config.toml and applies in the next conversation."""
    always.rules_file = tmp_path / "data" / "approval-rules.json"
    llm_server.reply_tool_call("terminal", {"command": "echo first"}, usage=USAGE)
    llm_server.reply_text("Done.", usage=USAGE)
    app = OhtuiApp(always)
    async with app.run_test(size=SIZE) as pilot:
        await ask_for_approval(app, pilot, wait)
        await pilot.press("a")
        await wait(pilot, lambda: isinstance(app.screen, RuleEditorScreen), what="the editor")
        await pilot.press("tab", "down", "down", "space")  # scope: always (all workspaces)
        await pilot.press("enter")
        await wait(pilot, lambda: status(app) == "finished", what="the first run")
    assert always.config_file is not None
    saved = tomllib.loads(always.config_file.read_text(encoding="utf-8"))
    rules = saved["confirmation"]["rules"]
    assert [(r["tool"], r["command_prefix"]) for r in rules] == [("terminal", "echo")]
    assert saved["ui"]["auto_title"] is False  # what the file held before is kept
    assert not always.rules_file.exists()  # user rules are not workspace rules

    always.conversation_id = "fedcba9876543210fedcba9876543210"  # a new conversation
    llm_server.reply_tool_call("terminal", {"command": "echo second"}, usage=USAGE)
    llm_server.reply_text("Done again.", usage=USAGE)
    app = OhtuiApp(always)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "again")
        await wait(pilot, lambda: status(app) == "finished", what="the second run, unasked")
        assert "✓ exit 0" in cell_text(action_cells(app, "terminal")[0])
