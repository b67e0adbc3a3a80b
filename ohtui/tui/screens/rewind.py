"""The rewind screen: the user's messages newest first, each with what followed it; choosing
one asks what to restore (the conversation, the code, both) or whether to fork there, and
shows which files the code would change."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ohtui.tui.checkpoint_types import STATUS_MARKS
from ohtui.tui.display import plural
from ohtui.tui.rewind_types import RewindAction, RewindChoice, RewindPreview, TurnRow
from ohtui.tui.widgets.marked import MarkedOptionList

LIST_LEGEND = "↑↓ move · enter choose · esc close"
CHOICE_LEGEND = "b both · c conversation · k code · f fork · w fork with code · esc back"
EMPTY_TEXT = "No message of yours to go back to yet on this conversation's branch."
PREVIEW_AHEAD = 20
"""Rows past the highlighted one whose previews are asked for when one is missing."""
TEXT_WIDTH = 200
"""Characters of a message shown in its row (the row clips to the screen)."""
SHOWN_FILES = 12
ROWS_AT_ONCE = 100
"""Messages added to the list at a time (more as the highlight nears its end): a list of
thousands of two-line options costs seconds to lay out."""


def turn_prompt(row: TurnRow) -> Content:
    """A message: its number and first line, and under it what followed it."""
    first = " ".join(row.text.split())[:TEXT_WIDTH] or "(empty message)"
    after = row.preview if row.preview is not None else "…"
    return Content.assemble(
        (f"{row.number:>3}  ", "$text-muted"),
        (first, "bold"),
        "\n     ",
        (f"→ {after}" if after else "→ (nothing yet)", "$text-muted"),
    )


class RewindScreen(ModalScreen[RewindChoice | None]):
    """Pick a message, then what to do there; gives the choice (None: closed)."""

    CSS_PATH = "rewind.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back")]

    def __init__(
        self,
        turns: Sequence[TurnRow],
        plan: Callable[[TurnRow], None],
        previews: Callable[[Sequence[TurnRow]], None],
    ) -> None:
        """`plan(row)`: work out what rewinding to it restores (answered by `show_plan`);
        `previews(rows)`: read what followed those (answered by `show_previews`)."""
        super().__init__()
        self.turns = list(turns)
        self._plan = plan
        self._previews = previews
        self._asked: set[str] = {row.event_id for row in self.turns if row.preview is not None}
        self.chosen: TurnRow | None = None
        """The message being decided on (None: the list shows)."""
        self.preview: RewindPreview | None = None

    def compose(self) -> ComposeResult:
        """The list of messages, and (hidden until one is chosen) the choice."""
        with Vertical(id="dialog"):
            count = plural(len(self.turns), "message")
            yield Static(f"Rewind: go back to one of your {count}", id="heading", markup=False)
            if not self.turns:
                yield Static(EMPTY_TEXT, id="empty", markup=False)
            else:
                yield MarkedOptionList(*self._options(0, ROWS_AT_ONCE), id="turns")
            with Vertical(id="choice"):
                yield Static("", id="message", markup=False)
                with VerticalScroll(id="files"):
                    yield Static("Checking the workspace…", id="changes", markup=False)
                yield MarkedOptionList(id="actions")
            yield Static(LIST_LEGEND if self.turns else "esc close", id="legend", markup=False)

    def on_mount(self) -> None:
        self.query_one("#choice").display = False

    def _options(self, start: int, stop: int) -> list[Option]:
        return [Option(turn_prompt(row), id=row.event_id) for row in self.turns[start:stop]]

    # --- the list --------------------------------------------------------------------------

    @on(OptionList.OptionHighlighted, "#turns")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        """Ask for the previews of the rows coming into view that lack one; add the next
        rows when it nears the end of those listed."""
        turns = self.query_one("#turns", OptionList)
        listed = turns.option_count
        if event.option_index >= listed - PREVIEW_AHEAD and listed < len(self.turns):
            turns.add_options(self._options(listed, listed + ROWS_AT_ONCE))
        wanted = [
            row
            for row in self.turns[event.option_index : event.option_index + PREVIEW_AHEAD]
            if row.event_id not in self._asked
        ]
        if wanted:
            self._asked.update(row.event_id for row in wanted)
            self._previews(wanted)

    def show_previews(self, previews: dict[str, str]) -> None:
        """Fill in what followed these messages."""
        turns = self.query_one("#turns", OptionList)
        for index, old in enumerate(self.turns):
            if old.event_id in previews and old.preview is None:
                row = TurnRow(old.event_id, old.number, old.text, previews[old.event_id])
                self.turns[index] = row
                if index < turns.option_count:
                    turns.replace_option_prompt_at_index(index, turn_prompt(row))

    @on(OptionList.OptionSelected, "#turns")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        row = self.turns[event.option_index]
        self.chosen, self.preview = row, None
        first = " ".join(row.text.split())[:TEXT_WIDTH]
        self.query_one("#message", Static).update(f"Message {row.number}: {first}")
        self.query_one("#changes", Static).update("Checking the workspace…")
        self.query_one("#actions", OptionList).clear_options()
        self.query_one("#turns").display = False
        self.query_one("#choice").display = True
        self.query_one("#legend", Static).update(CHOICE_LEGEND)
        self._plan(row)

    # --- the choice ------------------------------------------------------------------------

    def show_plan(self, preview: RewindPreview) -> None:
        """Show what the code would do and offer the choices (for the message chosen)."""
        if self.chosen is None or preview.turn.event_id != self.chosen.event_id:
            return
        self.preview = preview
        self.query_one("#changes", Static).update(changes_text(preview))
        actions = self.query_one("#actions", OptionList)
        actions.clear_options()
        actions.add_options(
            Option(f"{action.key}  {action.value}", id=action.name, disabled=not self._can(action))
            for action in RewindAction
        )
        actions.highlighted = 0 if preview.code_can_go_back else 1
        actions.focus()

    def _can(self, action: RewindAction) -> bool:
        """Restoring the code is offered when it would change something."""
        preview = self.preview
        if preview is None:
            return False
        return preview.code_can_go_back or action in (
            RewindAction.CONVERSATION,
            RewindAction.FORK,
            RewindAction.FORK_WITH_CODE,
        )

    @on(OptionList.OptionSelected, "#actions")
    def _action_chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self._decide(RewindAction[event.option.id])

    def on_key(self, event: events.Key) -> None:
        """The letters choose an action once the choice shows."""
        if self.chosen is None or self.preview is None or not event.character:
            return
        action = next((a for a in RewindAction if a.key == event.character), None)
        if action is not None and self._can(action):
            event.stop()
            self._decide(action)

    def _decide(self, action: RewindAction) -> None:
        assert self.chosen is not None
        self.dismiss(RewindChoice(self.chosen.event_id, action))

    def action_back(self) -> None:
        """Esc: from the choice back to the list; from the list, close."""
        if self.chosen is None or not self.turns:
            self.dismiss(None)
            return
        self.chosen, self.preview = None, None
        self.query_one("#choice").display = False
        turns = self.query_one("#turns")
        turns.display = True
        turns.focus()
        self.query_one("#legend", Static).update(LIST_LEGEND)


def changes_text(preview: RewindPreview) -> Content:
    """Which files restoring the code would change, or why it would change none."""
    if not preview.changes:
        note = preview.code_note or "The code is already as it was at this message."
        return Content.styled(note, "$text-muted")
    count = plural(len(preview.changes), "file")
    rows = [Content.styled(f"Restoring the code changes {count}:", "bold")]
    for change in preview.changes[:SHOWN_FILES]:
        letter, style = STATUS_MARKS[change.status]
        rows.append(
            Content.assemble(
                (f"  {letter} ", f"bold {style}"), change.path, (f"  {change.status}", "dim")
            )
        )
    hidden = len(preview.changes) - SHOWN_FILES
    if hidden > 0:
        rows.append(Content.styled(f"  … and {plural(hidden, 'more file')}", "dim"))
    return Content("\n").join(rows)
