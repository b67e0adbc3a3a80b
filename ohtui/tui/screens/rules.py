"""The saved approval rules, by scope; mark some for removal."""

from __future__ import annotations

from collections.abc import Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ohtui.opening.safety import RuleRow
from ohtui.settings.choices import RuleScope
from ohtui.tui.widgets.marked import MarkedOptionList

EMPTY_TEXT = "No approval rules yet. Press `a` in the approval dialog to add one."


def rule_prompt(rule: RuleRow, *, marked: bool) -> Content:
    """One rule: allow/deny and its description; struck through, with ✗, when marked."""
    decision_style = "$text-success bold" if rule.decision == "allow" else "$text-error bold"
    body = Content.assemble((f"{rule.decision:<5}", decision_style), "  ", rule.description)
    if not marked:
        # Indented under its scope heading, so the grouping reads without colour.
        return Content.assemble("  ", body)
    # The ✗ says "marked" where strike-through does not render (some terminals, NO_COLOR).
    return Content.assemble(("✗ ", "$text-error bold"), body.stylize("strike $foreground-muted"))


def scope_heading(scope: RuleScope) -> Content:
    """A group heading, e.g. "This workspace"."""
    label = scope.label
    return Content.styled(label[:1].upper() + label[1:], "bold $text-primary")


class RulesScreen(ModalScreen[list[str] | None]):
    """List saved rules; returns the ids marked for removal (None: closed with none marked)."""

    CSS_PATH = "rules.tcss"
    BINDINGS = [
        Binding("d,delete", "toggle_remove", "Remove"),
        # Priority, so Enter closes instead of selecting the highlighted option.
        Binding("enter", "close", "Done", priority=True),
        Binding("escape", "cancel", "Close"),
    ]

    def __init__(self, rules: Sequence[RuleRow]) -> None:
        super().__init__()
        self._rules = {rule.rule_id: rule for rule in rules}
        self._marked: set[str] = set()

    def compose(self) -> ComposeResult:
        """Rules grouped by scope (or the empty state) and a key legend."""
        with Vertical(id="dialog"):
            yield Static("Approval rules", id="heading")
            if not self._rules:
                yield Static(EMPTY_TEXT, id="empty", markup=False)
                yield Static("esc close", id="legend", markup=False)
                return
            options: list[Option] = []
            scopes = [s for s in RuleScope if any(r.scope == s for r in self._rules.values())]
            for scope in scopes:
                # Disabled options are skipped by the cursor, which makes them headings.
                options.append(Option(scope_heading(scope), disabled=True))
                options.extend(
                    Option(rule_prompt(rule, marked=False), id=rule.rule_id)
                    for rule in self._rules.values()
                    if rule.scope == scope
                )
            yield MarkedOptionList(*options, id="rules")
            yield Static(
                "d/del mark for removal · enter done · esc close",
                id="legend",
                markup=False,
            )

    def on_mount(self) -> None:
        """Start on the first rule, not on a heading."""
        if self._rules:
            option_list = self.query_one("#rules", OptionList)
            option_list.highlighted = 1

    @property
    def marked(self) -> list[str]:
        """Ids marked for removal, in list order."""
        return [rule_id for rule_id in self._rules if rule_id in self._marked]

    def _highlighted_id(self) -> str | None:
        if not self._rules:
            return None
        option = self.query_one("#rules", OptionList).highlighted_option
        return option.id if option is not None else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide Remove when no rule is highlighted."""
        if action == "toggle_remove":
            return self._highlighted_id() is not None
        return True

    @on(OptionList.OptionHighlighted, "#rules")
    def _highlighted(self) -> None:
        self.refresh_bindings()

    def action_toggle_remove(self) -> None:
        """Mark or unmark the highlighted rule for removal."""
        rule_id = self._highlighted_id()
        if rule_id is None:
            return
        marked = rule_id not in self._marked
        if marked:
            self._marked.add(rule_id)
        else:
            self._marked.discard(rule_id)
        prompt = rule_prompt(self._rules[rule_id], marked=marked)
        self.query_one("#rules", OptionList).replace_option_prompt(rule_id, prompt)

    def action_close(self) -> None:
        """Close, returning the ids marked for removal (may be empty)."""
        self.dismiss(self.marked)

    def action_cancel(self) -> None:
        """Close; the marked ids still count, None when nothing is marked."""
        self.dismiss(self.marked or None)
