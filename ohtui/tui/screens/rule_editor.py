"""Edit "always allow" rules before they are saved: one pattern per rule, one scope for all."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import HorizontalGroup, Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Button, Input, RadioSet, Static

from ohtui.opening.safety import RuleDraft
from ohtui.settings.choices import RuleScope
from ohtui.tui.approval_types import describe_rules
from ohtui.tui.widgets.marked_choices import MarkedRadioButton

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


class RuleEditorScreen(ModalScreen[tuple[RuleDraft, ...] | None]):
    """Edit RuleDrafts (one per part of a command): Save gives them, Cancel gives None."""

    CSS_PATH = "rule_editor.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save"),
        Binding("up", "scope(-1)", "Scope", show=False),
        Binding("down", "scope(1)", "Scope", show=False),
        # Priority, so Enter saves from anywhere but a focused button.
        Binding("enter", "submit", "Save", priority=True, show=False),
    ]

    error: reactive[str] = reactive("", init=False)

    def __init__(self, drafts: Sequence[RuleDraft], note: str = "") -> None:
        super().__init__()
        if not drafts:
            raise ValueError("RuleEditorScreen needs at least one draft")
        self._drafts = tuple(drafts)
        self._tool = self._drafts[0].tool
        self._kind = pattern_kind(self._drafts[0])
        self._note = note
        self._scope: RuleScope = self._drafts[0].scope

    def compose(self) -> ComposeResult:
        """Tool, pattern fields (or a note), scope choice, preview, error, buttons, legend."""
        with Vertical(id="dialog") as dialog:
            dialog.border_title = "Always allow"
            yield Static(f"Tool: {self._tool}", id="tool", markup=False)
            if self._note:
                yield Static(self._note, id="note", markup=False)
            if self._kind is None:
                yield Static(f"This rule allows every {self._tool} action.", id="every")
            else:
                label = _FIELD_LABELS[self._kind]
                if len(self._drafts) > 1:
                    label = f"{label}es, one for each part of the command"
                yield Static(label, classes="field-label")
                for index, draft in enumerate(self._drafts):
                    initial = draft.command_prefix if self._kind == "prefix" else draft.path_glob
                    yield Input(initial or "", id=f"pattern-{index}", classes="pattern")
            yield Static("Remember it for (↑↓)", classes="field-label")
            with RadioSet(id="scope") as scopes:
                scopes.can_focus = False  # ↑↓ choose the scope from any field
                for scope in SCOPES:
                    yield MarkedRadioButton(
                        scope.label, value=scope == self._scope, id=f"scope-{scope}"
                    )
            yield Static(id="preview", markup=False)
            yield Static(id="error", markup=False)
            with HorizontalGroup(id="buttons"):
                yield Button("Save", id="save", variant="primary", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
            yield Static("↑↓ scope · enter / ctrl+s save · esc cancel", id="legend", markup=False)

    def on_mount(self) -> None:
        """Show the preview for the drafts as given."""
        self._update_preview()

    @property
    def patterns(self) -> list[Input]:
        """The pattern fields, one per draft (none for a rule without a pattern)."""
        return list(self.query(".pattern").results(Input))

    @property
    def scope(self) -> RuleScope:
        """The scope chosen so far."""
        return self._scope

    def current_drafts(self) -> tuple[RuleDraft, ...]:
        """The drafts as edited so far."""
        if self._kind is None:
            return tuple(replace(d, scope=self._scope) for d in self._drafts)
        edited = []
        for draft, field in zip(self._drafts, self.patterns, strict=True):
            value = field.value.strip() or None
            if self._kind == "prefix":
                edited.append(replace(draft, command_prefix=value, scope=self._scope))
            else:
                edited.append(replace(draft, path_glob=value, scope=self._scope))
        return tuple(edited)

    def _update_preview(self) -> None:
        drafts = self.current_drafts()
        if self._kind is not None and not all(d.command_prefix or d.path_glob for d in drafts):
            preview = f"Type a {_FIELD_LABELS[self._kind].lower()} to see what the rule allows."
        else:
            preview = f"Allow {describe_rules(drafts)} — {self._scope.label}"
        self.query_one("#preview", Static).update(preview)

    def watch_error(self, error: str) -> None:
        """Show or hide the inline error."""
        self.query_one("#error", Static).update(error)
        self.set_class(bool(error), "-error")

    @on(Input.Changed, ".pattern")
    def _pattern_changed(self) -> None:
        self.error = ""
        self._update_preview()

    @on(RadioSet.Changed, "#scope")
    def _scope_changed(self, event: RadioSet.Changed) -> None:
        for scope in SCOPES:
            if event.pressed.id == f"scope-{scope}":
                self._scope = scope
        self._update_preview()

    @on(Input.Submitted, ".pattern")
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

    def action_scope(self, step: int) -> None:
        """Choose the previous or next scope (they do not wrap around)."""
        index = max(0, min(SCOPES.index(self._scope) + step, len(SCOPES) - 1))
        self.query_one(f"#scope-{SCOPES[index]}", MarkedRadioButton).value = True

    def action_submit(self) -> None:
        """Enter: save."""
        self.action_save()

    def action_save(self) -> None:
        """Save the rules, unless a pattern is empty (that would allow everything)."""
        for field in self.patterns:
            if not field.value.strip():
                assert self._kind is not None
                self.error = _EMPTY_ERRORS[self._kind].format(tool=self._tool)
                field.focus()
                return
        self.dismiss(self.current_drafts())

    def action_cancel(self) -> None:
        """Leave without a rule."""
        self.dismiss(None)
