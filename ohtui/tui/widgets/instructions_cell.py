"""InstructionsCell: the quiet first line of a session saying which instruction files and
skills the agent got; focused or expanded, where each came from."""

from __future__ import annotations

from textual.content import Content

from ohtui.tui.widgets.cells import Cell
from ohtui.tui.widgets.instructions import LoadedInstructions


class InstructionsCell(Cell):
    """ "Instructions: AGENTS.md · skills: 3 (user: 2)"; Enter (or focus) lists the paths."""

    def __init__(self, loaded: LoadedInstructions) -> None:
        super().__init__(classes="cell notice instructions")
        self.loaded = loaded

    def render(self) -> Content:
        summary = Content(self.loaded.summary())
        if not (self.expanded or self.has_focus):
            return summary
        details = "\n".join(f"  {line}" for line in self.loaded.details())
        return Content.assemble(summary, "\n", Content.styled(details, "dim"))

    def on_focus(self) -> None:
        self.refresh(layout=True)

    def on_blur(self) -> None:
        self.refresh(layout=True)

    def can_expand(self) -> bool:
        """It lists the paths when expanded."""
        return True

    def copy_text(self) -> str:
        """The summary and the paths."""
        return "\n".join([self.loaded.summary(), *self.loaded.details()])
