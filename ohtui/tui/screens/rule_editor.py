"""Edit an "always allow" rule before it is saved: pattern and scope."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import HorizontalGroup, Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Button, Input, RadioButton, RadioSet, Static

from ohtui.settings.choices import RuleScope
from ohtui.tui.approval_types import RuleDraft

PatternKind = Literal["prefix", "glob"]
SCOPES: tuple[RuleScope, ...] = tuple(RuleScope)

_FIELD_LABELS: dict[PatternKind, str] = {
    "prefix": "Command prefix",
    "glob": "Path glob",
}
_EMPTY_ERRORS: dict[PatternKind, str] = {
    "prefix": "An empty prefix would allow every {tool} command. Type a prefix, or cancel.",
    "glob": "An empty glob would allow {tool} on every path. Type a glob, or cancel.",
}


def pattern_kind(draft: RuleDraft) -> PatternKind | None:
    """Which pattern the draft is edited by; None when it covers every action of its tool."""
    if draft.command_prefix is not None or draft.tool == "terminal":
        return "prefix"
    if draft.path_glob is not None:
        return "glob"
    return None


class RuleEditorScreen(ModalScreen[RuleDraft | None]):
    """Edit a RuleDraft: Save gives the edited draft, Cancel gives None."""

    CSS_PATH = "rule_editor.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save"),
        # Priority, so Enter saves from the scope list too (RadioSet would take it otherwise).
        Binding("enter", "submit", "Save", priority=True, show=False),
    ]

    error: reactive[str] = reactive("", init=False)

    def __init__(self, draft: RuleDraft) -> None:
        super().__init__()
        self._draft = draft
        self._kind = pattern_kind(draft)
        self._scope: RuleScope = draft.scope

    def compose(self) -> ComposeResult:
        """Tool, pattern field (or a note), scope choice, preview, error, buttons, legend."""
        with Vertical(id="dialog") as dialog:
            dialog.border_title = "Always allow"
            yield Static(f"Tool: {self._draft.tool}", id="tool", markup=False)
            if self._kind is None:
                yield Static(
                    f"This rule allows every {self._draft.tool} action.",
                    id="note",
                    markup=False,
                )
            else:
                initial = (
                    self._draft.command_prefix if self._kind == "prefix" else self._draft.path_glob
                )
                yield Static(_FIELD_LABELS[self._kind], classes="field-label")
                yield Input(initial or "", id="pattern")
            yield Static("Remember it for", classes="field-label")
            with RadioSet(id="scope"):
                for scope in SCOPES:
                    yield RadioButton(scope.label, value=scope == self._scope, id=f"scope-{scope}")
            yield Static(id="preview", markup=False)
            yield Static(id="error", markup=False)
            with HorizontalGroup(id="buttons"):
                yield Button("Save", id="save", variant="primary", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
            yield Static("enter / ctrl+s save · esc cancel", id="legend", markup=False)

    def on_mount(self) -> None:
        """Show the preview for the draft as given."""
        self._update_preview()

    def current_draft(self) -> RuleDraft:
        """The draft as edited so far."""
        if self._kind is None:
            return replace(self._draft, scope=self._scope)
        value = self.query_one("#pattern", Input).value
        if self._kind == "prefix":
            return replace(self._draft, command_prefix=value or None, scope=self._scope)
        return replace(self._draft, path_glob=value or None, scope=self._scope)

    def _update_preview(self) -> None:
        draft = self.current_draft()
        preview = f"Allow {draft.describe()} — {draft.scope.label}"
        self.query_one("#preview", Static).update(preview)

    def watch_error(self, error: str) -> None:
        """Show or hide the inline error."""
        self.query_one("#error", Static).update(error)
        self.set_class(bool(error), "-error")

    @on(Input.Changed, "#pattern")
    def _pattern_changed(self) -> None:
        self.error = ""
        self._update_preview()

    @on(RadioSet.Changed, "#scope")
    def _scope_changed(self, event: RadioSet.Changed) -> None:
        for scope in SCOPES:
            if event.pressed.id == f"scope-{scope}":
                self._scope = scope
        self._update_preview()

    @on(Input.Submitted, "#pattern")
    def _pattern_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    @on(Button.Pressed, "#save")
    def _save_pressed(self) -> None:
        self.action_save()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Let a focused button take Enter itself (Enter on Cancel must not save)."""
        return not (action == "submit" and isinstance(self.focused, Button))

    def action_submit(self) -> None:
        """Enter: save."""
        self.action_save()

    def action_save(self) -> None:
        """Save the rule, unless its pattern is empty (that would allow everything)."""
        if self._kind is not None:
            value = self.query_one("#pattern", Input).value
            if not value.strip():
                self.error = _EMPTY_ERRORS[self._kind].format(tool=self._draft.tool)
                self.query_one("#pattern", Input).focus()
                return
        self.dismiss(self.current_draft())

    def action_cancel(self) -> None:
        """Leave without a rule."""
        self.dismiss(None)
