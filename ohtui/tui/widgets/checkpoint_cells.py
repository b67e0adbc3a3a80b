"""The cell of a restore: one line saying what the workspace went back to, expanding to the
files that changed. Made by the cell factory from the engine's CheckpointRestoreEvent."""

from __future__ import annotations

from collections.abc import Sequence

from textual import events
from textual.content import Content

from ohtui.tui.checkpoint_types import STATUS_MARKS, FileChange, before_text
from ohtui.tui.display import plural
from ohtui.tui.widgets.cells import Cell

NO_CHECKPOINT = "No checkpoint: {reason} — actions are not undoable, so they ask"
"""The quiet notice when no checkpoint could be taken before an action."""


class RestoreCell(Cell):
    """ "↶ Restored the workspace to before …: 2 files changed"; enter (or a click) lists
    the files."""

    def __init__(self, label: str, changes: Sequence[FileChange]) -> None:
        super().__init__(classes="cell notice restore")
        self.label = label
        self.changes = tuple(changes)

    @property
    def line(self) -> str:
        """The one line it shows collapsed."""
        changed = plural(len(self.changes), "file")
        return f"↶ Restored the workspace to {before_text(self.label)}: {changed} changed"

    def render(self) -> Content:
        if not self.changes:
            return Content(self.line)
        if not self.expanded:
            return Content.assemble(
                self.line, Content.styled(" · enter to list them", "italic dim")
            )
        rows = [Content(self.line)]
        for change in self.changes:
            letter, style = STATUS_MARKS[change.status]
            rows.append(
                Content.assemble(
                    (f"  {letter} ", f"bold {style}"),
                    change.path,
                    (f"  {change.status}", "dim"),
                )
            )
        return Content("\n").join(rows)

    def can_expand(self) -> bool:
        """A restore that changed files expands to them."""
        return bool(self.changes)

    def on_click(self, event: events.Click) -> None:
        """A click lists the files or hides them, as Enter does."""
        event.stop()
        self.focus()
        self.action_toggle_body()

    def copy_text(self) -> str:
        """The line and the files."""
        files = "\n".join(f"{change.status} {change.path}" for change in self.changes)
        return f"{self.line}\n{files}".strip()
