"""The restore preview: which checkpoint, the files that change and their diff, then y/n."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ohtui.tui.checkpoint_types import STATUS_MARKS, RestorePreview, taken_time
from ohtui.tui.display import plural
from ohtui.tui.render import diff_content
from ohtui.tui.screens.fit import fit_to_screen, fits

LEGEND = "enter/y restore · esc/n cancel · ↑↓ PgUp/PgDn scroll"
MAX_DIFF_LINES = 2000
"""Lines of the diff drawn; a longer one ends in a count of the lines left out."""
FIT_TRIES = 5
"""Layouts `_fit` waits for the dialog to fit on the screen."""
NO_CHANGES = "No file differs from the checkpoint: restoring it changes nothing on disk."


def files_content(preview: RestorePreview) -> Content:
    """The files the restore changes, one a line: a status letter, the path, the status."""
    changes = preview.changes
    if not changes:
        return Content.styled(NO_CHANGES, "$text-muted")
    verb = "changes" if len(changes) == 1 else "change"
    heading = Content.styled(f"{plural(len(changes), 'file')} {verb}:", "bold")
    width = max(len(change.path) for change in changes)
    lines = [heading]
    for change in changes:
        letter, style = STATUS_MARKS[change.status]
        lines.append(
            Content.assemble(
                (f"  {letter} ", f"bold {style}"),
                change.path.ljust(width),
                (f"  {change.status}", "$text-muted"),
            )
        )
    return Content("\n").join(lines)


class RestoreScreen(ModalScreen[bool]):
    """Show what restoring a checkpoint changes; Enter or y gives True, Esc or n False."""

    CSS_PATH = "restore.tcss"
    BINDINGS = [
        Binding("enter,y", "restore", "Restore"),
        Binding("escape,n", "cancel", "Cancel"),
        Binding("up", "scroll(-1)", show=False),
        Binding("down", "scroll(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
    ]

    def __init__(self, preview: RestorePreview) -> None:
        super().__init__()
        self.preview = preview

    def compose(self) -> ComposeResult:
        """Title, the checkpoint, the files and diff (they scroll) and the key legend."""
        preview = self.preview
        checkpoint = preview.checkpoint
        title = "Undo the last action?" if preview.undo else "Restore this checkpoint?"
        with Vertical(id="dialog"):
            yield Static(title, id="title", markup=False)
            yield Static(
                Content.assemble(
                    "Back to the workspace ",
                    (checkpoint.before, "bold"),
                    (f"  · taken {taken_time(checkpoint.taken_at)}", "$text-muted"),
                ),
                id="target",
            )
            with VerticalScroll(id="detail", can_focus=False):
                yield Static(files_content(preview), id="files")
                diff = Static(id="diff")
                if preview.diff:
                    diff.update(diff_content(preview.diff.rstrip("\n"), MAX_DIFF_LINES))
                else:
                    diff.display = False
                yield diff
            yield Static(LEGEND, id="legend", markup=False)

    def on_mount(self) -> None:
        """Fit the scrolling part to the screen."""
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        """Fit again to the new size."""
        self.call_after_refresh(self._fit)

    def _fit(self, tries: int = FIT_TRIES) -> None:
        """Let the files and diff take the rows the rest leaves, looked at again after the
        layout until the whole dialog (its legend too) is on screen."""
        fit_to_screen(self.query_one("#dialog"), self.query_one("#detail"), self.size.height)
        if tries > 0 and not fits(self.query_one("#legend"), self.size.height):
            self.call_after_refresh(self._fit, tries - 1)

    def action_scroll(self, lines: int) -> None:
        """Scroll the files and the diff."""
        self.query_one("#detail", VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_page(self, direction: int) -> None:
        """Page the files and the diff."""
        detail = self.query_one("#detail", VerticalScroll)
        if direction < 0:
            detail.scroll_page_up(animate=False)
        else:
            detail.scroll_page_down(animate=False)

    def action_restore(self) -> None:
        """Restore the checkpoint."""
        self.dismiss(True)

    def action_cancel(self) -> None:
        """Leave the workspace as it is."""
        self.dismiss(False)
