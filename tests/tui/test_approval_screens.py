"""The approval modal and its helper screens, driven by keys through a small host app."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, OptionList, RadioButton, Static

from ohtui.opening.safety import RuleDraft, RuleRow
from ohtui.tui.approval_types import ApprovalDecision, PendingActionView
from ohtui.tui.render import diff_content
from ohtui.tui.screens.approval import (
    UNDECIDED_MESSAGE,
    ActionRow,
    ApprovalScreen,
    KeyLegend,
)
from ohtui.tui.screens.policy_picker import PolicyPickerScreen
from ohtui.tui.screens.reject_reason import PLACEHOLDER, RejectReasonScreen
from ohtui.tui.screens.rule_editor import RuleEditorScreen
from ohtui.tui.screens.rules import EMPTY_TEXT, RulesScreen
from ohtui.tui.widgets.risk_badge import RiskBadge

pytestmark = pytest.mark.anyio

SIZE = (100, 40)
NO_RESULT = object()

DIFF = """\
--- a/src/app.py
+++ b/src/app.py
@@ -1,3 +1,3 @@
 import os
-print("old")
+print("new")
-- not a header inside a hunk
"""

PUSH = PendingActionView(
    action_id="a1",
    tool="terminal",
    summary="git push --force origin main",
    detail="git push --force origin main\n  && echo pushed-and-done",
    risk="HIGH",
    risk_reason="pattern analyzer: rule `force-push` matched `git push --force`",
    suggested_rules=(RuleDraft(tool="terminal", command_prefix="git push"),),
)
EDIT = PendingActionView(
    action_id="a2",
    tool="file_editor",
    summary="edit src/app.py",
    detail="/workspace/src/app.py",
    risk="LOW",
    risk_reason="llm analyzer: a small edit",
    diff=DIFF,
)
LIST = PendingActionView(action_id="a3", tool="terminal", summary="ls -la", detail="ls -la")
PENDING = (PUSH, EDIT, LIST)


class Host(App[None]):
    """Pushes one screen on mount and records what it is dismissed with."""

    def __init__(self, make_screen: Callable[[], Screen[Any]]) -> None:
        super().__init__()
        self._make_screen = make_screen
        self.result: object = NO_RESULT

    def on_mount(self) -> None:
        """Push the screen under test."""
        self.push_screen(self._make_screen(), self._record)

    def _record(self, result: object) -> None:
        self.result = result


def approval_host(pending: tuple[PendingActionView, ...] = PENDING, policy: str = "risky") -> Host:
    """A host for an ApprovalScreen."""
    return Host(lambda: ApprovalScreen(pending, policy))


def rendered(widget: Widget) -> str:
    """The text on screen inside the widget's visible region, line by line, as a user reads it."""
    # Textual's own export_screenshot reads the compositor the same way.
    strips = widget.screen._compositor.render_strips()
    region = widget.region
    return "\n".join(
        strips[y].crop(region.x, region.right).text.rstrip() for y in range(region.y, region.bottom)
    )


def on_top(app: App[None], screen: Screen[Any]) -> bool:
    """Whether `screen` is the one the user is typing into."""
    return app.screen is screen


def static_text(screen: Screen[Any], selector: str) -> str:
    """The rendered text of one widget on the screen."""
    return rendered(screen.query_one(selector, Widget))


@pytest.fixture
def anyio_backend() -> str:
    """Textual runs on asyncio."""
    return "asyncio"


async def type_text(pilot: Pilot[None], text: str) -> None:
    """Type text key by key."""
    await pilot.press(*[("space" if char == " " else char) for char in text])


# -- ApprovalScreen: keys and flows ------------------------------------------------------


async def test_y_approves_every_action() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("y")
        await pilot.pause()
    assert app.result == ApprovalDecision(approved=("a1", "a2", "a3"))


async def test_n_rejects_every_action_with_a_reason() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, RejectReasonScreen)
        assert app.screen.query_one(Input).placeholder == PLACEHOLDER
        await type_text(pilot, "  too risky ")
        await pilot.press("enter")
        await pilot.pause()
    assert app.result == ApprovalDecision(rejected=("a1", "a2", "a3"), reason="too risky")


async def test_n_with_an_empty_reason() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "enter")
        await pilot.pause()
    assert app.result == ApprovalDecision(rejected=("a1", "a2", "a3"), reason="")


async def test_n_then_escape_stays_in_the_approval_dialog() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, RejectReasonScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen)
        assert app.result is NO_RESULT
        # Still live: a second decision goes through.
        await pilot.press("y")
        await pilot.pause()
    assert app.result == ApprovalDecision(approved=("a1", "a2", "a3"))


async def test_space_cycles_marks_and_enter_applies_a_mix() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        await pilot.press("space")  # a1: approve
        await pilot.press("down", "space", "space")  # a2: approve, then reject
        await pilot.press("down", "space", "space", "space")  # a3: approve, reject, approve
        await pilot.pause()
        assert screen.marks == {"a1": "approve", "a2": "reject", "a3": "approve"}
        rows = list(screen.query(ActionRow))
        assert [rendered(row.query_one(".mark")).strip() for row in rows] == ["✓", "✗", "✓"]
        assert rows[1].has_class("-reject") and rows[0].has_class("-approve")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RejectReasonScreen)
        await type_text(pilot, "not that file")
        await pilot.press("enter")
        await pilot.pause()
    assert app.result == ApprovalDecision(
        approved=("a1", "a3"), rejected=("a2",), reason="not that file"
    )


async def test_enter_with_all_approved_needs_no_reason() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space", "down", "space", "down", "space", "enter")
        await pilot.pause()
    assert app.result == ApprovalDecision(approved=("a1", "a2", "a3"))


async def test_enter_with_a_mix_then_escape_in_reason_stays() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space", "space", "down", "space", "down", "space", "enter")
        await pilot.pause()
        assert isinstance(app.screen, RejectReasonScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen)
        assert app.screen.marks == {"a1": "reject", "a2": "approve", "a3": "approve"}
    assert app.result is NO_RESULT


async def test_enter_with_an_undecided_action_stays_and_says_why() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        message = screen.query_one("#message", Static)
        assert not message.display
        await pilot.press("space", "enter")
        await pilot.pause()
        assert on_top(app, screen)
        assert app.result is NO_RESULT
        assert message.display
        assert UNDECIDED_MESSAGE in static_text(screen, "#message")
        # Marking the rest clears the message.
        await pilot.press("down", "space", "down", "space")
        await pilot.pause()
        assert not message.display


async def test_escape_decides_later() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("space", "escape")
        await pilot.pause()
    assert app.result is None


async def test_always_allow_edits_the_rule_and_approves_the_action() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        approval = app.screen
        assert isinstance(approval, ApprovalScreen)
        await pilot.press("a")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, RuleEditorScreen)
        pattern = editor.query_one("#pattern-0", Input)
        assert pattern.value == "git push"
        assert "Tool: terminal" in static_text(editor, "#tool")
        await pilot.press("ctrl+u")
        await type_text(pilot, "git status")
        await pilot.press("down")  # the scope: this workspace, the prefix keeps focus
        await pilot.pause()
        assert editor.focused is pattern
        assert editor.query_one("#scope-workspace", RadioButton).value
        preview = static_text(editor, "#preview")
        assert "Allow terminal commands starting with `git status` — this workspace" in preview
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert on_top(app, approval)
        assert approval.marks == {"a1": "approve", "a2": "undecided", "a3": "undecided"}
        assert "git status" in static_text(approval, "#rule")
        await pilot.press("y")
        await pilot.pause()
    expected_rule = RuleDraft(tool="terminal", command_prefix="git status", scope="workspace")
    assert app.result == ApprovalDecision(approved=("a1", "a2", "a3"), rules=(expected_rule,))


async def test_an_emptied_prefix_previews_no_rule_rather_than_every_action() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, RuleEditorScreen)
        await pilot.press("ctrl+u")
        await pilot.pause()
        preview = static_text(editor, "#preview")
        assert "every" not in preview
        assert "Type a command prefix" in preview


async def test_always_allow_on_the_only_action_closes_at_once() -> None:
    app = approval_host((PUSH,))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, RuleEditorScreen)
        await pilot.press("end")
        await type_text(pilot, " origin")
        await pilot.press("enter")
        await pilot.pause()
    rule = RuleDraft(tool="terminal", command_prefix="git push origin", scope="session")
    assert app.result == ApprovalDecision(approved=("a1",), rules=(rule,))


async def test_always_allow_without_a_suggestion_starts_from_the_tool() -> None:
    app = approval_host((LIST,))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, RuleEditorScreen)
        assert editor.query_one("#pattern-0", Input).value == ""
        assert editor.current_drafts() == (RuleDraft(tool="terminal"),)


async def test_always_allow_then_cancel_changes_nothing() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, RuleEditorScreen)
        await pilot.press("escape")
        await pilot.pause()
        approval = app.screen
        assert isinstance(approval, ApprovalScreen)
        assert approval.marks["a1"] == "undecided"
        assert approval.rules == ()
        await pilot.press("y")
        await pilot.pause()
    assert app.result == ApprovalDecision(approved=("a1", "a2", "a3"))


async def test_rejecting_the_rules_action_drops_the_rule() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "enter")  # save the suggested rule; a1 approved
        await pilot.pause()
        approval = app.screen
        assert isinstance(approval, ApprovalScreen)
        assert approval.rules != ()
        await pilot.press("space")  # a1: approve -> reject
        await pilot.pause()
        assert approval.rules == ()


async def test_empty_prefix_is_refused() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, RuleEditorScreen)
        await pilot.press("ctrl+u", "enter")
        await pilot.pause()
        assert on_top(app, editor)
        error = static_text(editor, "#error")
        assert "would allow every terminal command" in error
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert on_top(app, editor)
        await type_text(pilot, "ls")
        await pilot.pause()
        assert not editor.query_one("#error").display
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen)
        assert app.screen.rules == (RuleDraft(tool="terminal", command_prefix="ls"),)


async def test_p_changes_the_policy_for_the_decision() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        approval = app.screen
        assert isinstance(approval, ApprovalScreen)
        assert "confirm risky" in static_text(approval, "#policy")
        await pilot.press("p")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, PolicyPickerScreen)
        option_list = picker.query_one(OptionList)
        highlighted = option_list.highlighted_option
        assert highlighted is not None and highlighted.id == "risky"
        await pilot.press("down", "enter")
        await pilot.pause()
        assert on_top(app, approval)
        assert "never confirm" in static_text(approval, "#policy")
        await pilot.press("y")
        await pilot.pause()
    assert app.result == ApprovalDecision(approved=("a1", "a2", "a3"), policy="never")


async def test_policy_goes_out_with_a_rejection_too() -> None:
    app = approval_host(policy="always")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("p", "down", "enter")  # always -> risky
        await pilot.pause()
        await pilot.press("n", "enter")
        await pilot.pause()
    assert app.result == ApprovalDecision(rejected=("a1", "a2", "a3"), policy="risky")


async def test_p_then_escape_keeps_the_policy() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("p", "escape")
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen)
        await pilot.press("y")
        await pilot.pause()
    assert isinstance(app.result, ApprovalDecision)
    assert app.result.policy is None


async def test_policy_chosen_then_escape_goes_out_with_the_later_decision() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("p", "down", "enter")  # risky -> never
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen)
        await pilot.press("escape")
        await pilot.pause()
    assert app.result == ApprovalDecision(policy="never", later=True)


# -- ApprovalScreen: what it shows -----------------------------------------------------------


async def test_title_rows_and_legend() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert "3 actions wait for your approval" in static_text(screen, "#title")
        rows = [rendered(row) for row in screen.query(ActionRow)]
        assert "·" in rows[0] and "HIGH" in rows[0] and "terminal" in rows[0]
        assert "git push --force origin main" in rows[0]
        assert "LOW" in rows[1] and "edit src/app.py" in rows[1]
        assert "UNKNOWN" in rows[2]
        legend = static_text(screen, "#legend")
        for hint in ("y approve all", "n reject all", "space approve/reject", "esc later"):
            assert hint in legend


async def test_detail_pane_follows_the_highlight() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        detail = static_text(screen, "#detail-text")
        assert "git push --force origin main" in detail
        assert "&& echo pushed-and-done" in detail
        assert "HIGH" in static_text(screen, "#detail-badge")
        reason = static_text(screen, "#detail-reason")
        assert "pattern analyzer: rule `force-push` matched `git push --force`" in reason
        assert not screen.query_one("#detail-diff").display

        await pilot.press("down")
        await pilot.pause()
        assert screen.highlighted_action == EDIT
        assert "/workspace/src/app.py" in static_text(screen, "#detail-text")
        assert "LOW" in static_text(screen, "#detail-badge")
        assert "llm analyzer: a small edit" in static_text(screen, "#detail-reason")
        diff = static_text(screen, "#detail-diff")
        assert '-print("old")' in diff and '+print("new")' in diff
        assert "@@ -1,3 +1,3 @@" in diff

        await pilot.press("down")
        await pilot.pause()
        assert "No analyzer gave a reason." in static_text(screen, "#detail-reason")
        assert "UNKNOWN" in static_text(screen, "#detail-badge")
        assert not screen.query_one("#detail-diff").display


async def test_cursor_stops_at_the_ends_and_rows_show_the_highlight() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        await pilot.press("up")
        assert screen.cursor == 0
        assert screen.check_action("cursor_up", ()) is None
        await pilot.press("down", "down", "down")
        await pilot.pause()
        assert screen.cursor == 2
        assert screen.check_action("cursor_down", ()) is None
        rows = list(screen.query(ActionRow))
        assert [row.has_class("-highlighted") for row in rows] == [False, False, True]


async def test_clicking_a_row_highlights_it() -> None:
    app = approval_host()
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        rows = list(screen.query(ActionRow))
        await pilot.click(rows[1])
        await pilot.pause()
        assert screen.cursor == 1
        assert rows[1].has_class("-highlighted")
        assert "/workspace/src/app.py" in static_text(screen, "#detail-text")
        assert screen.marks["a2"] == "undecided"  # a click highlights, it does not decide


async def test_keys_without_an_action_are_disabled() -> None:
    app = approval_host(())
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, ApprovalScreen)
        for action in ("always_allow", "approve_all", "reject_all", "toggle_mark", "apply"):
            assert not screen.check_action(action, ())
        assert screen.check_action("later", ())
        await pilot.press("a", "y", "space", "enter")
        await pilot.pause()
        assert on_top(app, screen)
        assert app.result is NO_RESULT
        assert "Nothing waits for approval." in static_text(screen, "#detail-text")


async def test_long_diff_scrolls_inside_a_small_terminal() -> None:
    long_diff = "@@ -1,60 +1,60 @@\n" + "\n".join(f"+line {n}" for n in range(60))
    action = PendingActionView("big", "file_editor", "edit big.py", "big.py", diff=long_diff)
    app = approval_host((action,))
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        await pilot.pause()
        screen = app.screen
        legend = screen.query_one("#legend", KeyLegend)
        detail = screen.query_one("#detail")
        # The legend stays on screen; the diff scrolls in its pane instead of pushing it off.
        assert 0 < legend.region.bottom <= 19
        assert "esc later" in rendered(legend)
        assert detail.max_scroll_y > 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert detail.scroll_y > 0


# -- RejectReasonScreen -----------------------------------------------------------------------


async def test_reject_reason_on_its_own() -> None:
    app = Host(RejectReasonScreen)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "  use a branch  ")
        await pilot.press("enter")
        await pilot.pause()
    assert app.result == "use a branch"


async def test_reject_reason_escape_gives_none() -> None:
    app = Host(RejectReasonScreen)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "half")
        await pilot.press("escape")
        await pilot.pause()
    assert app.result is None


# -- RuleEditorScreen on its own ---------------------------------------------------------------


async def test_rule_editor_for_a_path_glob() -> None:
    draft = RuleDraft(tool="file_editor", path_glob="src/**", scope="user")
    app = Host(lambda: RuleEditorScreen((draft,)))
    async with app.run_test(size=SIZE) as pilot:
        editor = app.screen
        assert "Path glob" in rendered(editor.query_one(".field-label"))
        assert editor.query_one("#scope-user", RadioButton).value
        await pilot.press("end")
        await type_text(pilot, "/*.py")
        await pilot.click("#save")
        await pilot.pause()
    assert app.result == (RuleDraft(tool="file_editor", path_glob="src/**/*.py", scope="user"),)


async def test_rule_editor_without_a_pattern_notes_it_covers_every_action() -> None:
    app = Host(lambda: RuleEditorScreen((RuleDraft(tool="browser"),)))
    async with app.run_test(size=SIZE) as pilot:
        editor = app.screen
        assert not editor.query(Input)
        assert "allows every browser action" in static_text(editor, "#every")
        assert "Allow every browser action — this session" in static_text(editor, "#preview")
        await pilot.press("enter")
        await pilot.pause()
    assert app.result == (RuleDraft(tool="browser"),)


async def test_rule_editor_up_and_down_choose_the_scope_from_the_prefix_field() -> None:
    draft = RuleDraft(tool="terminal", command_prefix="git status")
    app = Host(lambda: RuleEditorScreen((draft,)))
    async with app.run_test(size=SIZE) as pilot:
        editor = app.screen
        assert isinstance(editor, RuleEditorScreen)
        field = editor.query_one("#pattern-0", Input)
        assert editor.focused is field
        scopes = []
        for key in ("down", "down", "down", "up"):
            await pilot.press(key)
            await pilot.pause()
            scopes.append(editor.scope)
        assert scopes == ["workspace", "user", "user", "workspace"]
        assert editor.focused is field
        assert "— this workspace" in static_text(editor, "#preview")
        # The choice reads without colour: a filled dot for the chosen scope only.
        assert ["●" in rendered(b) for b in editor.query(RadioButton)] == [False, True, False]
        assert ["○" in rendered(b) for b in editor.query(RadioButton)] == [True, False, True]
        assert "↑↓ scope" in static_text(editor, "#legend")
        await pilot.press("enter")
        await pilot.pause()
    assert app.result == (replace(draft, scope="workspace"),)


async def test_rule_editor_edits_one_prefix_per_part() -> None:
    drafts = (
        RuleDraft(tool="terminal", command_prefix="cd"),
        RuleDraft(tool="terminal", command_prefix="npm test"),
    )
    app = Host(lambda: RuleEditorScreen(drafts))
    async with app.run_test(size=SIZE) as pilot:
        editor = app.screen
        assert [f.value for f in editor.query(Input)] == ["cd", "npm test"]
        assert "one for each part" in static_text(editor, ".field-label")
        preview = static_text(editor, "#preview")
        assert "Allow terminal commands starting with `cd` or `npm test`" in preview
        await pilot.press("tab", "end")
        await type_text(pilot, " -- --ci")
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert app.result == (drafts[0], RuleDraft(tool="terminal", command_prefix="npm test -- --ci"))


async def test_always_allow_with_no_suggestion_says_why() -> None:
    rm = PendingActionView(
        action_id="a9",
        tool="terminal",
        summary="rm -rf build && npm test",
        detail="rm -rf build && npm test",
        no_rule_reason="`rm` deletes or changes what it cannot undo",
    )
    app = approval_host((rm,))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, RuleEditorScreen)
        note = static_text(editor, "#note")
        assert "No rule is suggested: `rm` deletes or changes what it cannot undo." in note
        assert [f.value for f in editor.query(Input)] == [""]


async def test_always_allow_with_two_rules_shows_both_and_sends_both() -> None:
    drafts = (
        RuleDraft(tool="terminal", command_prefix="cd"),
        RuleDraft(tool="terminal", command_prefix="npm test"),
    )
    both = PendingActionView(
        action_id="a8",
        tool="terminal",
        summary="cd build && npm test",
        detail="cd build && npm test",
        suggested_rules=drafts,
    )
    app = approval_host((both, LIST))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a", "enter")
        await pilot.pause()
        approval = app.screen
        assert isinstance(approval, ApprovalScreen)
        text = static_text(approval, "#rule")
        assert "Rules: allow terminal commands starting with `cd` or `npm test`" in text
        await pilot.press("y")
        await pilot.pause()
    assert app.result == ApprovalDecision(approved=("a8", "a3"), rules=drafts)


async def test_rule_editor_cancel_button() -> None:
    app = Host(lambda: RuleEditorScreen((RuleDraft(tool="terminal", command_prefix="make"),)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.click("#cancel")
        await pilot.pause()
    assert app.result is None


# -- PolicyPickerScreen on its own -------------------------------------------------------------


async def test_policy_picker_marks_the_current_policy() -> None:
    app = Host(lambda: PolicyPickerScreen("always"))
    async with app.run_test(size=SIZE) as pilot:
        picker = app.screen
        option_list = picker.query_one(OptionList)
        assert option_list.highlighted == 0
        text = rendered(option_list)
        assert "always confirm: every action waits for you" in text
        assert "confirm risky: actions rated MEDIUM or HIGH, or unrated, wait" in text
        assert "never confirm: actions run at once" in text
        current_line = next(line for line in text.splitlines() if "(current)" in line)
        assert "always confirm" in current_line
        await pilot.press("down", "enter")
        await pilot.pause()
    assert app.result == "risky"


async def test_policy_picker_escape_gives_none() -> None:
    app = Host(lambda: PolicyPickerScreen("never"))
    async with app.run_test(size=SIZE) as pilot:
        assert app.screen.query_one(OptionList).highlighted == 2
        await pilot.press("escape")
        await pilot.pause()
    assert app.result is None


# -- RulesScreen -------------------------------------------------------------------------------

RULES = (
    RuleRow("r1", "terminal commands starting with `git status`", "session"),
    RuleRow("r2", "file_editor on paths matching `src/**`", "workspace"),
    RuleRow("r3", "terminal commands starting with `rm -rf`", "workspace", "deny"),
    RuleRow("r4", "every think action", "user"),
)


async def test_rules_screen_removes_two_rules() -> None:
    app = Host(lambda: RulesScreen(RULES))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, RulesScreen)
        text = rendered(screen.query_one(OptionList))
        for heading in ("This session", "This workspace", "Always (all workspaces)"):
            assert heading in text
        assert "deny   terminal commands starting with `rm -rf`" in text
        await pilot.press("d")  # r1
        await pilot.press("down", "down", "delete")  # skips the heading: r2, then r3
        await pilot.press("down", "d", "d")  # r4 marked, then unmarked
        await pilot.pause()
        assert screen.marked == ["r1", "r3"]
        option_list = screen.query_one(OptionList)
        assert str(option_list.get_option("r1").prompt).startswith("✗ allow")
        assert str(option_list.get_option("r4").prompt).startswith("  allow")
        lines = rendered(option_list).splitlines()
        # A mark column in front: the highlighted rule is marked without colour (NO_COLOR).
        assert any(line[2:].startswith("✗ deny") for line in lines)
        assert [line[2:] for line in lines if line.startswith("❯ ")] == [
            "  allow  every think action"
        ]
        await pilot.press("enter")
        await pilot.pause()
    assert app.result == ["r1", "r3"]


async def test_rules_screen_escape_with_nothing_marked_gives_none() -> None:
    app = Host(lambda: RulesScreen(RULES))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
        await pilot.pause()
    assert app.result is None


async def test_rules_screen_escape_keeps_marked_ids() -> None:
    app = Host(lambda: RulesScreen(RULES))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "d", "escape")
        await pilot.pause()
    assert app.result == ["r2"]


async def test_rules_screen_empty_state() -> None:
    app = Host(lambda: RulesScreen([]))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert EMPTY_TEXT in static_text(screen, "#empty").replace("\n", " ")
        assert not screen.check_action("toggle_remove", ())
        await pilot.press("d", "enter")
        await pilot.pause()
    assert app.result == []


# -- risk_badge helpers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("risk", "css_class"),
    [("HIGH", "-high"), ("MEDIUM", "-medium"), ("LOW", "-low"), ("UNKNOWN", "-unknown")],
)
def test_risk_badge_classes(risk: str, css_class: str) -> None:
    badge = RiskBadge(risk)
    assert badge.has_class(css_class)
    assert str(badge.content) == f" {risk} "


def test_diff_preview_colours_lines_with_theme_variables() -> None:
    content = diff_content(DIFF)
    lines = content.split("\n")
    assert [span.style for span in lines[0].spans] == ["bold"]  # --- header
    assert [span.style for span in lines[1].spans] == ["bold"]  # +++ header
    assert [span.style for span in lines[2].spans] == ["$text-accent"]  # @@ hunk
    assert [span.style for span in lines[4].spans] == ["$text-error"]
    assert [span.style for span in lines[5].spans] == ["$text-success"]
    assert [span.style for span in lines[6].spans] == ["$text-error"]  # "--" in a hunk


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (1, "1 action waits for your approval"),
        (2, "2 actions wait for your approval"),
        (1200, "1,200 actions wait for your approval"),
    ],
)
def test_counts_read_as_words(count: int, text: str) -> None:
    from ohtui.tui.display import plural
    from ohtui.tui.screens.approval import actions_title

    assert actions_title(count) == text
    assert plural(1, "rule") == "1 rule"
    assert plural(3, "match", "matches") == "3 matches"
