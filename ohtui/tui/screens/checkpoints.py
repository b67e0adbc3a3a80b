"""The workspace's checkpoints, newest first: pick one to preview and restore."""

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

from ohtui.tui.checkpoint_types import CheckpointRow, taken_time
from ohtui.tui.display import plural
from ohtui.tui.widgets.marked import MarkedOptionList

EMPTY_TEXT = (
    "No checkpoints yet. One is taken before each action that may change the workspace; "
    "/undo and this list restore them."
)
LEGEND = "↑↓ move · enter preview and restore · esc close"
RESTORE_MARK = "↶"
"""Marks a checkpoint taken right before a restore (restoring it takes the restore back)."""


def checkpoint_prompt(row: CheckpointRow, time_width: int = 0) -> Content:
    """One checkpoint: time (right-aligned to `time_width`), what it was taken before, how
    many files; marks for /undo's target and for those taken before a restore."""
    mark = (f"{RESTORE_MARK} ", "$text-accent") if row.before_restore else "  "
    undo = ("  ← /undo", "bold $text-accent") if row.undo_target else ""
    return Content.assemble(
        (taken_time(row.taken_at).rjust(time_width), "$text-muted"),
        "  ",
        mark,
        (row.before, "bold" if row.undo_target else ""),
        (f"  {plural(row.files, 'file')}", "$text-muted"),
        undo,
    )


class CheckpointsScreen(ModalScreen[str | None]):
    """List the checkpoints; Enter gives the highlighted one's id, Esc None."""

    CSS_PATH = "checkpoints.tcss"
    BINDINGS = [Binding("escape", "cancel", "Close")]

    def __init__(self, checkpoints: Sequence[CheckpointRow]) -> None:
        super().__init__()
        self.checkpoints = tuple(checkpoints)

    def compose(self) -> ComposeResult:
        """The heading, the checkpoints (or the empty state) and a key legend."""
        with Vertical(id="dialog"):
            count = plural(len(self.checkpoints), "checkpoint")
            yield Static(f"Checkpoints of the workspace: {count}", id="heading", markup=False)
            if not self.checkpoints:
                yield Static(EMPTY_TEXT, id="empty", markup=False)
                yield Static("esc close", id="legend", markup=False)
                return
            width = max(len(taken_time(row.taken_at)) for row in self.checkpoints)
            yield MarkedOptionList(
                *(
                    Option(checkpoint_prompt(row, width), id=row.checkpoint_id)
                    for row in self.checkpoints
                ),
                id="checkpoints",
            )
            if any(row.before_restore for row in self.checkpoints):
                note = f"{RESTORE_MARK} taken before a restore: restoring it takes the restore back"
                yield Static(note, id="note", markup=False)
            yield Static(LEGEND, id="legend", markup=False)

    @on(OptionList.OptionSelected, "#checkpoints")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        """Close without restoring."""
        self.dismiss(None)
