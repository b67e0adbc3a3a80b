"""The approval modal: the actions waiting for confirmation, a detail pane, and the decision."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import HorizontalGroup, Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive, var
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static

from ohtui.settings.choices import ConfirmationPolicy
from ohtui.tui.approval_types import (
    ApprovalDecision,
    PendingActionView,
    RuleDraft,
    describe_rules,
)
from ohtui.tui.display import waiting_text
from ohtui.tui.render import diff_content
from ohtui.tui.screen_reader import reading_aloud, spoken_key
from ohtui.tui.screens.policy_picker import PolicyPickerScreen
from ohtui.tui.screens.reject_reason import RejectReasonScreen
from ohtui.tui.screens.rule_editor import RuleEditorScreen
from ohtui.tui.widgets.numbered_choices import Choice, NumberedChoices
from ohtui.tui.widgets.risk_badge import RiskBadge

Mark = Literal["undecided", "approve", "outside", "reject"]
MARK_GLYPHS: dict[Mark, str] = {"undecided": "·", "approve": "✓", "outside": "⇱", "reject": "✗"}
MARK_WORDS: dict[Mark, str] = {
    "undecided": "undecided",
    "approve": "approve",
    "outside": "approve outside the sandbox",
    "reject": "reject",
}
"""The marks in screen-reader mode."""
UNDECIDED_MESSAGE = "Mark every action with space, or press y / n"
ALL_OR_NOTHING_MESSAGE = (
    "This agent server rejects all waiting actions at once: approve all (y) or reject all (n)"
)
_MAX_TOOL_WIDTH = 16
_MIN_DETAIL_HEIGHT = 3

# (key as shown, what it does, the actions it runs, "|"-separated): the on-screen legend.
_LEGEND: tuple[tuple[str, str, str], ...] = (
    ("y", "approve all", "approve_all"),
    ("n", "reject all", "reject_all"),
    ("↑↓", "move", "cursor_up|cursor_down"),
    ("space", "approve/reject", "toggle_mark"),
    ("enter", "apply", "apply"),
    ("a", "always allow", "always_allow"),
    ("o", "outside sandbox", "approve_outside"),
    ("p", "policy", "pick_policy"),
    ("esc", "later", "later"),
)


def actions_title(count: int) -> str:
    """E.g. "1 action waits for your approval", "3 actions wait for your approval"."""
    return f"{waiting_text(count)} for your approval"


class KeyLegend(Widget):
    """Key hints that wrap between entries, never inside one, so each hint stays whole."""

    DEFAULT_CSS = """
    KeyLegend {
        height: auto;
    }
    """
    SEPARATOR = " · "

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._entries: list[Content] = []

    def on_mount(self) -> None:
        """Screen-reader mode: commas between the hints, not middle dots."""
        if reading_aloud(self):
            self.SEPARATOR = ", "

    def set_entries(self, entries: Sequence[Content]) -> None:
        """Replace the hints (and re-wrap them)."""
        self._entries = list(entries)
        self.refresh(layout=True)

    def lines(self, width: int) -> list[Content]:
        """The entries packed greedily into lines of at most `width` cells."""
        lines: list[list[Content]] = []
        used = 0
        for entry in self._entries:
            extra = len(self.SEPARATOR) + entry.cell_length
            if lines and used + extra <= width:
                lines[-1].append(entry)
                used += extra
            else:
                lines.append([entry])
                used = entry.cell_length
        return [Content(self.SEPARATOR).join(line) for line in lines]

    @property
    def plain(self) -> str:
        """The legend as one line of plain text."""
        return self.SEPARATOR.join(entry.plain for entry in self._entries)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One row per packed line."""
        return max(1, len(self.lines(width)))

    def render(self) -> Content:
        """The packed lines."""
        return Content("\n").join(self.lines(self.content_region.width))


class ActionRow(HorizontalGroup):
    """One pending action in the list: decision mark, risk badge, tool and summary."""

    ALLOW_SELECT = False

    mark: reactive[Mark] = reactive[Mark]("undecided", init=False)
    highlighted: reactive[bool] = reactive(False, toggle_class="-highlighted")

    @dataclass
    class Clicked(Message):
        """The row was clicked."""

        row: ActionRow
        index: int

        @property
        def control(self) -> ActionRow:
            """The ActionRow clicked."""
            return self.row

    def __init__(self, index: int, action: PendingActionView, tool_width: int) -> None:
        super().__init__(classes="-undecided")
        self.index = index
        self.action = action
        self._tool_width = tool_width

    def compose(self) -> ComposeResult:
        """Caret, mark, badge, tool and the one-line summary."""
        # A caret as well as the background, so the highlight shows without colour.
        spoken = reading_aloud(self)
        yield Static(
            ">" if spoken else "\N{HEAVY RIGHT-POINTING ANGLE QUOTATION MARK ORNAMENT}",
            classes="caret",
        )
        marks = MARK_WORDS if spoken else MARK_GLYPHS
        yield Static(
            f"{marks['undecided']}:" if spoken else marks["undecided"], classes="mark", markup=False
        )
        yield RiskBadge(self.action.risk)
        tool = Static(self.action.tool, classes="tool", markup=False)
        # One width for every row, so the summaries line up.
        tool.styles.width = self._tool_width
        yield tool
        summary = self.action.summary.splitlines()[0] if self.action.summary else ""
        yield Static(summary, classes="summary", markup=False)

    def watch_mark(self, old: Mark, new: Mark) -> None:
        """Swap the mark class and glyph."""
        self.remove_class(f"-{old}")
        self.add_class(f"-{new}")
        spoken = reading_aloud(self)
        self.query_one(".mark", Static).update(
            f"{MARK_WORDS[new]}:" if spoken else MARK_GLYPHS[new]
        )

    def on_click(self, event: events.Click) -> None:
        """Ask the screen to highlight this row."""
        event.stop()
        self.post_message(self.Clicked(self, self.index))


class ApprovalScreen(ModalScreen[ApprovalDecision | None]):
    """Approve or reject pending actions; None or a `later` decision leaves them waiting."""

    CSS_PATH = "approval.tcss"
    BINDINGS = [
        Binding("y", "approve_all", "Approve all"),
        Binding("n", "reject_all", "Reject all"),
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("space", "toggle_mark", "Approve/reject"),
        Binding("enter", "apply", "Apply"),
        Binding("a", "always_allow", "Always allow"),
        Binding("o", "approve_outside", "Outside the sandbox"),
        Binding("p", "pick_policy", "Policy"),
        Binding("escape", "later", "Later"),
        Binding("pageup", "scroll_detail(-1)", "Scroll detail up", show=False),
        Binding("pagedown", "scroll_detail(1)", "Scroll detail down", show=False),
    ]

    cursor: var[int] = var(0, init=False)
    policy: reactive[ConfirmationPolicy] = reactive(ConfirmationPolicy.RISKY, init=False)
    message: reactive[str] = reactive("", init=False)
    rules: reactive[tuple[RuleDraft, ...]] = reactive[tuple[RuleDraft, ...]]((), init=False)

    def __init__(
        self,
        pending: Sequence[PendingActionView],
        policy: ConfirmationPolicy,
        *,
        all_or_nothing: bool = False,
    ) -> None:
        """`all_or_nothing`: the agent server cannot reject some actions and run the others
        (OpenHands'); the screen says so, and refuses a mixed decision."""
        super().__init__()
        self._pending = tuple(pending)
        self._all_or_nothing = all_or_nothing
        self._initial_policy = policy = ConfirmationPolicy(policy)
        self.set_reactive(ApprovalScreen.policy, policy)
        # The action whose "always allow" produced the rules; rejecting it drops them.
        self._rule_index: int | None = None

    def compose(self) -> ComposeResult:
        """Title, the action list, the detail pane, the inline message and the legend."""
        tool_width = min(_MAX_TOOL_WIDTH, max((len(a.tool) for a in self._pending), default=1))
        with Vertical(id="dialog"):
            with HorizontalGroup(id="header"):
                title = actions_title(len(self._pending))
                title = f"needs approval: {title}" if reading_aloud(self) else title
                yield Static(title, id="title", markup=False)
                yield Static(self._policy_text(), id="policy", markup=False)
            yield Static(id="rule", markup=False)
            with VerticalScroll(id="actions", can_focus=False):
                for index, action in enumerate(self._pending):
                    yield ActionRow(index, action, tool_width)
            with VerticalScroll(id="detail", can_focus=False):
                yield Static(id="detail-text", markup=False)
                with HorizontalGroup(id="detail-risk"):
                    yield RiskBadge(id="detail-badge")
                    yield Static(id="detail-reason", markup=False)
                yield Static(id="detail-diff")
            yield Static(id="message", markup=False)
            if reading_aloud(self):
                yield NumberedChoices(self._spoken_choices(), id="choices")
            yield KeyLegend(id="legend")

    def on_mount(self) -> None:
        """Highlight the first action (in screen-reader mode: focus the first choice)."""
        self._show(0)
        if reading_aloud(self):
            self.query_one(NumberedChoices).focus_first()
        if self._all_or_nothing and len(self._pending) > 1:
            self.message = ALL_OR_NOTHING_MESSAGE
        self._refit()

    def on_resize(self) -> None:
        """Give the detail pane whatever height the new size leaves."""
        self._refit()

    def _refit(self) -> None:
        self.call_after_refresh(self._fit_detail)

    def _fit_detail(self) -> None:
        # CSS cannot say "the rest of the screen" for a child of an auto-height dialog, so the
        # detail pane's cap is measured: screen height minus everything else in the dialog.
        dialog = self.query_one("#dialog", Vertical)
        detail = self.query_one("#detail", VerticalScroll)
        others = sum(
            child.outer_size.height + child.styles.margin.height
            for child in dialog.children
            if child is not detail and child.display
        )
        chrome = dialog.styles.gutter.height + detail.styles.margin.height
        room = self.size.height - chrome - others
        detail.styles.max_height = max(_MIN_DETAIL_HEIGHT, room)

    def _spoken_choices(self) -> list[Choice]:
        """The decisions as numbered choices (screen-reader mode): for every action at once,
        and running the highlighted one outside the sandbox where it is sandboxed."""
        count = len(self._pending)
        every = f" all {count}" if count > 1 else ""
        choices = [
            Choice(f"Approve{every}", "approve_all"),
            Choice(f"Reject{every} with a reason", "reject_all"),
            Choice("Always allow (edit a rule, then approve)", "always_allow"),
            Choice("Change the approval policy", "pick_policy"),
            Choice("Decide later", "later"),
        ]
        highlighted = self.highlighted_action
        if highlighted is not None and highlighted.sandboxed:
            choices.append(Choice("Approve it outside the sandbox, this once", "approve_outside"))
        return choices if count else choices[-2:]

    @on(NumberedChoices.Chosen)
    async def _chosen(self, event: NumberedChoices.Chosen) -> None:
        await self.run_action(event.choice.action)

    def on_key(self, event: events.Key) -> None:
        """Screen-reader mode: a choice's number picks it wherever the focus is (the
        choices take it first when they have the focus)."""
        if not reading_aloud(self) or event.character is None:
            return
        if self.query_one(NumberedChoices).choose_number(event.character):
            event.stop()
            event.prevent_default()

    # -- state ---------------------------------------------------------------

    @property
    def rows(self) -> list[ActionRow]:
        """The action rows, in order."""
        return list(self.query(ActionRow))

    @property
    def marks(self) -> dict[str, Mark]:
        """Each action id with its current mark."""
        return {row.action.action_id: row.mark for row in self.rows}

    @property
    def highlighted_action(self) -> PendingActionView | None:
        """The action under the cursor, if any."""
        return self._pending[self.cursor] if self._pending else None

    def _policy_text(self) -> str:
        changed = " (changed)" if self.policy != self._initial_policy else ""
        return f"policy: {self.policy.label}{changed}"

    def _show(self, index: int) -> None:
        """Move the highlight to `index` and fill the detail pane."""
        rows = self.rows
        if not rows:
            self.query_one("#detail-text", Static).update("Nothing waits for approval.")
            self.query_one("#detail-risk").display = False
            self.query_one("#detail-diff").display = False
            self._update_legend()
            return
        index = max(0, min(index, len(rows) - 1))
        for row in rows:
            row.highlighted = row.index == index
        self.cursor = index
        rows[index].scroll_visible(immediate=True)
        action = self._pending[index]
        self.query_one("#detail-text", Static).update(action.detail)
        self.query_one("#detail-badge", RiskBadge).risk = action.risk
        self.query_one("#detail-reason", Static).update(
            action.risk_reason or "No analyzer gave a reason."
        )
        diff = self.query_one("#detail-diff", Static)
        diff.display = bool(action.diff)
        diff.update(diff_content(action.diff) if action.diff else "")
        self.query_one("#detail", VerticalScroll).scroll_home(animate=False)
        self.refresh_bindings()
        self._update_legend()
        if reading_aloud(self) and self.is_mounted:
            self.query_one(NumberedChoices).set_choices(self._spoken_choices())

    def _update_legend(self) -> None:
        # Keys that do not apply right now are dimmed, the same test the footer uses.
        entries: list[Content] = []
        spoken = reading_aloud(self)
        for key, text, actions in _LEGEND:
            enabled = any(self.check_action(action, ()) for action in actions.split("|"))
            if spoken and not enabled:
                continue  # dimmed says "not now" by colour alone: left out instead
            style = "" if enabled else "$text-disabled"
            key_style = "bold $text-accent" if enabled else "$text-disabled"
            shown = spoken_key(key) if spoken else key
            entries.append(Content.assemble((shown, key_style), " ", (text, style)))
        self.query_one("#legend", KeyLegend).set_entries(entries)

    def watch_policy(self) -> None:
        """Show the chosen policy in the title."""
        self.query_one("#policy", Static).update(self._policy_text())
        self.set_class(self.policy != self._initial_policy, "-policy-changed")
        self._refit()

    def watch_message(self, message: str) -> None:
        """Show or hide the inline message."""
        self.query_one("#message", Static).update(message)
        self.set_class(bool(message), "-message")
        self._refit()

    def watch_rules(self, rules: tuple[RuleDraft, ...]) -> None:
        """Show the rules that will be saved with the decision."""
        text = ""
        if rules:
            label = "Rule" if len(rules) == 1 else "Rules"
            text = f"{label}: allow {describe_rules(rules)} — {rules[0].scope.label}"
        self.query_one("#rule", Static).update(text)
        self.set_class(bool(rules), "-rule")
        self._refit()

    def _set_mark(self, index: int, mark: Mark) -> None:
        self.rows[index].mark = mark
        if index == self._rule_index and mark != "approve":
            # The rules came from approving this action; rejecting it must not keep them.
            self.rules = ()
            self._rule_index = None
        if self.message == UNDECIDED_MESSAGE and "undecided" not in self.marks.values():
            self.message = ""

    def _decision(
        self, approved: Sequence[str], rejected: Sequence[str], reason: str = ""
    ) -> ApprovalDecision:
        marks = self.marks
        return ApprovalDecision(
            approved=tuple(approved),
            rejected=tuple(rejected),
            reason=reason,
            rules=self.rules if approved else (),
            policy=self.policy if self.policy != self._initial_policy else None,
            outside_sandbox=tuple(i for i in approved if marks.get(i) == "outside"),
        )

    def _ids(self) -> list[str]:
        return [action.action_id for action in self._pending]

    # -- keys ------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide keys that need an action when there is none; dim moves at either end."""
        if action in ("approve_all", "reject_all", "toggle_mark", "apply", "always_allow"):
            return bool(self._pending)
        if action == "approve_outside":
            highlighted = self.highlighted_action
            return True if highlighted is not None and highlighted.sandboxed else None
        if action == "cursor_up":
            return None if self.cursor <= 0 else True
        if action == "cursor_down":
            return None if self.cursor >= len(self._pending) - 1 else True
        return True

    def action_approve_all(self) -> None:
        """Approve every action (with the rule and policy chosen so far)."""
        self.dismiss(self._decision(self._ids(), ()))

    def action_reject_all(self) -> None:
        """Ask why, then reject every action."""

        def rejected(reason: str | None) -> None:
            if reason is not None:
                self.dismiss(self._decision((), self._ids(), reason))

        count = len(self._pending)
        heading = "Reject the action" if count == 1 else f"Reject all {count} actions"
        self.app.push_screen(RejectReasonScreen(heading), rejected)

    def action_cursor_up(self) -> None:
        """Highlight the previous action."""
        self._show(self.cursor - 1)

    def action_cursor_down(self) -> None:
        """Highlight the next action."""
        self._show(self.cursor + 1)

    def action_scroll_detail(self, direction: int) -> None:
        """Page the detail pane (long commands, diffs)."""
        detail = self.query_one("#detail", VerticalScroll)
        if direction < 0:
            detail.scroll_page_up(animate=False)
        else:
            detail.scroll_page_down(animate=False)

    def action_toggle_mark(self) -> None:
        """Undecided → approve → reject → approve …"""
        row = self.rows[self.cursor]
        self._set_mark(self.cursor, "reject" if row.mark in ("approve", "outside") else "approve")

    def action_approve_outside(self) -> None:
        """Approve the highlighted command to run outside the sandbox, this once."""
        action = self.highlighted_action
        if action is None or not action.sandboxed:
            return
        self._set_mark(self.cursor, "outside")
        if "undecided" not in self.marks.values() and "reject" not in self.marks.values():
            self.action_apply()

    def action_apply(self) -> None:
        """Send the marks; every action must be marked, rejections ask for a reason first."""
        marks = self.marks
        if "undecided" in marks.values():
            self.message = UNDECIDED_MESSAGE
            return
        approved = [
            action_id for action_id, mark in marks.items() if mark in ("approve", "outside")
        ]
        rejected = [action_id for action_id, mark in marks.items() if mark == "reject"]
        if not rejected:
            self.dismiss(self._decision(approved, ()))
            return
        if approved and self._all_or_nothing:
            self.message = ALL_OR_NOTHING_MESSAGE  # rejecting these would reject those too
            return

        def with_reason(reason: str | None) -> None:
            if reason is not None:
                self.dismiss(self._decision(approved, rejected, reason))

        heading = "Reject 1 action" if len(rejected) == 1 else f"Reject {len(rejected)} actions"
        self.app.push_screen(RejectReasonScreen(heading), with_reason)

    def action_always_allow(self) -> None:
        """Edit an "always allow" rule for the highlighted action; saving approves it."""
        action = self.highlighted_action
        if action is None:
            return
        index = self.cursor
        drafts = action.suggested_rules or (RuleDraft(tool=action.tool),)
        note = ""
        if action.no_rule_reason:
            note = f"No rule is suggested: {action.no_rule_reason}. Type one only if you mean it."

        def saved(rules: tuple[RuleDraft, ...] | None) -> None:
            if rules is None:
                return
            self._set_mark(index, "approve")
            self.rules = rules
            self._rule_index = index
            if all(mark == "approve" for mark in self.marks.values()):
                self.action_approve_all()

        self.app.push_screen(RuleEditorScreen(drafts, note), saved)

    def action_pick_policy(self) -> None:
        """Choose another confirmation policy; it goes out with the decision."""

        def picked(policy: str | None) -> None:
            if policy is not None:
                self.policy = ConfirmationPolicy(policy)

        self.app.push_screen(PolicyPickerScreen(self.policy), picked)

    def action_later(self) -> None:
        """Close without deciding; the actions keep waiting, a policy chosen here applies."""
        if self.policy != self._initial_policy:
            self.dismiss(ApprovalDecision(policy=self.policy, later=True))
        else:
            self.dismiss(None)

    @on(ActionRow.Clicked)
    def _row_clicked(self, event: ActionRow.Clicked) -> None:
        self._show(event.index)
