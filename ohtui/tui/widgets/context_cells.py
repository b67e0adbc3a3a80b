"""Cells of context management: a condensation, one quiet line that expands to its summary.

Made by the cell factory from the engine's `Condensation` event; like every cell they know
nothing of the engine.
"""

from __future__ import annotations

from textual import events
from textual.content import Content

from ohtui.tui.display import plural
from ohtui.tui.widgets.cells import Cell


class CondensationCell(Cell):
    """ "⋯ condensed 42 events": enter (or a click) shows the summary that replaced them."""

    def __init__(self, forgotten: int, summary: str | None) -> None:
        super().__init__(classes="cell notice -muted condensation")
        self.forgotten = forgotten
        self.summary = (summary or "").strip()

    def render(self) -> Content:
        line = f"⋯ condensed {plural(self.forgotten, 'event')}"
        if not self.summary:
            return Content.styled(line, "dim")
        if not self.expanded:
            return Content.assemble(
                Content.styled(line, "dim"),
                Content.styled(" · enter to show the summary", "italic dim"),
            )
        body = "\n".join(f"  {row}" for row in self.summary.splitlines())
        return Content.assemble(
            Content.styled(f"{line}, summarized as:", "dim"), "\n", Content(body).stylize("dim")
        )

    def can_expand(self) -> bool:
        """A condensation with a summary expands to it."""
        return bool(self.summary)

    def on_click(self, event: events.Click) -> None:
        """A click expands or collapses the summary, as Enter does."""
        event.stop()
        self.focus()
        self.action_toggle_body()

    def copy_text(self) -> str:
        """The summary (or the line, without one)."""
        return self.summary or f"condensed {plural(self.forgotten, 'event')}"


def skills_line(names: list[str]) -> str:
    """The quiet line under a user message that activated knowledge skills."""
    label = "skill" if len(names) == 1 else "skills"
    return f"✦ {label}: {', '.join(names)}"
