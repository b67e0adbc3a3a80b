"""The diff screen (/diff): what changed in the workspace since the conversation began, or
since one of the user's messages: the files with their added and removed lines, then the
chosen file's hunks, drawn by the approval dialog's diff renderer.

The diff is worked out on a thread (the session's `Diffs`); only the file shown is drawn,
so a diff of many files costs one file's drawing at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, Protocol

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option, OptionDoesNotExist

from ohtui.sdk.tools.file_editor.render import DiffLine, diff_lines
from ohtui.tui.checkpoint_types import STATUS_MARKS
from ohtui.tui.display import plural
from ohtui.tui.render import styled_diff_lines
from ohtui.tui.rewind_types import TurnRow
from ohtui.tui.widgets.marked import MarkedOptionList

if TYPE_CHECKING:
    from ohtui.sdk.conversation.workspace_diff import WorkspaceDiff
    from ohtui.sdk.utils.unified_diff import FilePatch

LEGEND = "n/p next/previous file · ↑↓ PgUp/PgDn scroll · m since a message · esc close"
PICK_LEGEND = "↑↓ move · enter show the changes since then · esc back"
EMPTY_LEGEND = "m since a message · esc close"
LOADING = "Reading the workspace's changes…"
CHUNK = 200
"""Lines of a file's diff drawn at a time: more are drawn as the view nears their end, so a
file of thousands of lines opens as fast as a short one."""
AHEAD = 60
"""Rows left below the view that make the next part be drawn."""
MAX_TURNS = 500
"""Messages offered to start from (the newest)."""
TEXT_WIDTH = 120
CUT = "… the rest of this file's diff is too long to show"
READING_FILE = "Reading this file's diff on its own…"
LEFT_OUT = (
    "This file's diff was left out: the whole diff is too long to read at once. "
    "Choose a later message (m) to see less."
)
SKIPPED_HEADERS = ("diff --git ", "index ")
"""Lines of git's file header that the heading above the hunks already says."""


class DiffProvider(Protocol):
    """Where the screen gets its diff and the messages to start from (the session)."""

    def compute(self, since: str | None, deliver: Callable[[WorkspaceDiff | str], object]) -> None:
        """Work out the diff since a message (None: the conversation's start)."""
        ...

    def file(
        self, checkpoint_id: str, path: str, deliver: Callable[[FilePatch | str], object]
    ) -> None:
        """Read one file's change alone (a file left out of a long diff)."""
        ...

    def turns(self, deliver: Callable[[list[TurnRow]], object]) -> None:
        """The user's messages, newest first."""
        ...


def counts(patch: FilePatch) -> Content:
    """ "+3 -1", "binary", or "…" for a file whose diff was left out."""
    if patch.binary:
        return Content.styled("binary", "$text-muted")
    if not patch.text:
        return Content.styled("…", "$text-muted")
    parts = []
    if patch.added or not patch.removed:
        parts.append(Content.styled(f"+{patch.added:,}", "$text-success"))
    if patch.removed:
        parts.append(Content.styled(f"-{patch.removed:,}", "$text-error"))
    if patch.cut:
        parts.append(Content.styled("(cut)", "$text-muted"))
    return Content(" ").join(parts)


def file_row(patch: FilePatch, width: int) -> Content:
    """One file in the list: its status letter, path and counts."""
    letter, style = STATUS_MARKS[patch.status]
    return Content.assemble(
        (f"{letter} ", f"bold {style}"), patch.path.ljust(width), "  ", counts(patch)
    )


def totals(diff: WorkspaceDiff) -> str:
    """ "3 files changed · +12 -4"."""
    added = sum(patch.added for patch in diff.files)
    removed = sum(patch.removed for patch in diff.files)
    counted = f"{plural(len(diff.files), 'file')} changed · +{added:,} -{removed:,}"
    return f"{counted} (counted up to where the diff is cut)" if diff.cut else counted


def hunk_lines(patch: FilePatch) -> list[tuple[DiffLine, str]]:
    """The file's diff read as the approval dialog reads diffs, without git's header lines
    the heading says already."""
    text = "\n".join(
        line for line in patch.text.splitlines() if not line.startswith(SKIPPED_HEADERS)
    )
    lines = list(diff_lines(text))
    return [*lines, (DiffLine.CONTEXT, CUT)] if patch.cut else lines


class DiffScreen(ModalScreen[None]):
    """The workspace's changes, file by file; Esc closes."""

    CSS_PATH = "diff.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Close"),
        Binding("n,right_square_bracket", "file(1)", "Next file", show=False),
        Binding("p,left_square_bracket", "file(-1)", "Previous file", show=False),
        Binding("m", "pick", "Since a message", show=False),
        Binding("up", "scroll(-1)", show=False),
        Binding("down", "scroll(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        # Before the view's own: End draws what is not drawn yet, then goes there.
        Binding("home", "edge(0)", show=False, priority=True),
        Binding("end", "edge(1)", show=False, priority=True),
    ]

    class Loaded(Message):
        """The diff asked for (number `ask`), or why there is none."""

        def __init__(self, ask: int, found: WorkspaceDiff | str) -> None:
            super().__init__()
            self.ask = ask
            self.found = found

    class FileLoaded(Message):
        """One file's change read alone (for the diff number `ask`), or why it cannot be."""

        def __init__(self, ask: int, path: str, found: FilePatch | str) -> None:
            super().__init__()
            self.ask = ask
            self.path = path
            self.found = found

    class TurnsLoaded(Message):
        """The user's messages to start from, newest first."""

        def __init__(self, turns: list[TurnRow]) -> None:
            super().__init__()
            self.turns = turns

    def __init__(self, source: DiffProvider, *, pick: bool = False, number: int = 0) -> None:
        """`pick`: open on the list of messages to start from; `number`: start from that
        message (1 the first) instead of the conversation's start."""
        super().__init__()
        self._source = source
        self._pick_first = pick
        self._number = number
        self._asked = 0
        self.since: TurnRow | None = None
        """The message the diff starts from (None: the conversation's start)."""
        self.diff: WorkspaceDiff | None = None
        self.message: str = ""
        """Why there is no diff, when there is none."""
        self.current = 0
        """The file shown."""
        self.turns: list[TurnRow] | None = None
        self.picking = False
        self._alone: dict[str, str] = {}
        """Files left out of a long diff, asked for alone: "" while being read, or why
        they cannot be."""
        self._lines: list[tuple[DiffLine, str]] = []
        """The diff of the file shown, read whole; drawn a part at a time."""
        self.drawn = 0
        """Lines of it drawn so far."""
        self._start = 0
        """The first line of it drawn (past 0 once End drew the end alone)."""

    def compose(self) -> ComposeResult:
        """The heading, the files, the chosen file's hunks, the messages to start from."""
        with Vertical(id="dialog"):
            yield Static(self._title(), id="title", markup=False)
            yield Static(LOADING, id="summary", markup=False)
            yield Static("", id="note", markup=False)
            yield MarkedOptionList(id="files")
            yield Static("", id="file-heading", markup=False)
            yield VerticalScroll(id="hunks")
            yield MarkedOptionList(id="since")
            yield Static(LEGEND, id="legend", markup=False)

    def on_mount(self) -> None:
        for selector in ("#note", "#files", "#file-heading", "#since"):
            self.query_one(selector).display = False
        self.query_one("#files", OptionList).can_focus = False
        hunks = self.query_one("#hunks", VerticalScroll)
        hunks.focus()
        self.watch(hunks, "scroll_y", self._near_end, init=False)
        if self._pick_first or self._number:
            self._source.turns(lambda turns: self.post_message(self.TurnsLoaded(turns)))
            if self._pick_first:
                self._show_picker()
                return
        if not self._number:
            self._ask(None)

    # --- the diff --------------------------------------------------------------------------

    def _title(self) -> str:
        if self.since is None:
            return "Changes since the conversation began"
        first = " ".join(self.since.text.split())[:TEXT_WIDTH] or "(empty message)"
        return f"Changes since message {self.since.number}: {first}"

    def _ask(self, since: TurnRow | None) -> None:
        self.since = since
        self._asked += 1
        ask = self._asked
        self.diff, self.message, self.current = None, "", 0
        self._alone = {}
        self.query_one("#title", Static).update(self._title())
        self._show()
        self._source.compute(
            since.event_id if since else None,
            lambda found: self.post_message(self.Loaded(ask, found)),
        )

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        if message.ask != self._asked:
            return  # an older question, answered late
        if isinstance(message.found, str):
            self.message = message.found
        else:
            self.diff = message.found
        if not self.picking:  # else shown when the picker closes
            self._show()

    def _show(self) -> None:
        """Show what is known: the diff, why there is none, or that it is being read."""
        found = self.diff
        note = self.query_one("#note", Static)
        files = self.query_one("#files", OptionList)
        heading = self.query_one("#file-heading")
        note.display = files.display = heading.display = False
        if found is None:
            if self.message:
                self._show_nothing(self.message)
            else:
                self.query_one("#summary", Static).update(LOADING)
                self._draw_text(Content(""))
            return
        source = f"From {found.source.value}"
        if not found.files:
            self._show_nothing(found.note or "Nothing differs.", source.lower())
            return
        note.update(found.note)
        note.display = bool(found.note)
        self.query_one("#summary", Static).update(f"{source} · {totals(found)}")
        files.clear_options()
        width = min(max(len(p.path) for p in found.files), 60)
        files.add_options(Option(file_row(p, width)) for p in found.files)
        files.display = heading.display = True
        self.query_one("#legend", Static).update(LEGEND)
        self._show_file(min(self.current, len(found.files) - 1))

    def _show_nothing(self, why: str, source: str = "") -> None:
        """No changes, or no diff: say so plainly."""
        summary = f"No changes ({source})." if source else "No diff."
        self.query_one("#summary", Static).update(summary)
        self._draw_text(Content(why))
        self.query_one("#legend", Static).update(EMPTY_LEGEND)

    def _show_file(self, index: int) -> None:
        """Draw file `index` (only it: the others are drawn when shown)."""
        assert self.diff is not None
        self.current = index
        patch = self.diff.files[index]
        self.query_one("#files", OptionList).highlighted = index
        heading = Content.assemble(
            (patch.path, "bold"),
            (f"  ·  {patch.status}  ·  file {index + 1} of {len(self.diff.files)}", "$text-muted"),
        )
        self.query_one("#file-heading", Static).update(heading)
        if not patch.text:
            self._draw_text(Content.styled(self._left_out(patch), "$text-muted"))
            return
        self._draw_text(None)
        self._lines = hunk_lines(patch)
        self._draw_more()

    def _left_out(self, patch: FilePatch) -> str:
        """What shows for a file left out of a long diff: its own diff is asked for (from
        the checkpoints) once, and this says it is being read, or why it cannot be."""
        assert self.diff is not None
        checkpoint_id = self.diff.checkpoint_id
        if checkpoint_id is None:
            return LEFT_OUT
        if patch.path not in self._alone:
            self._alone[patch.path] = ""
            ask, path = self._asked, patch.path
            self._source.file(
                checkpoint_id,
                path,
                lambda found: self.post_message(self.FileLoaded(ask, path, found)),
            )
        return self._alone[patch.path] or READING_FILE

    @on(FileLoaded)
    def _file_loaded(self, message: FileLoaded) -> None:
        diff = self.diff
        if message.ask != self._asked or diff is None:
            return
        index = next((n for n, p in enumerate(diff.files) if p.path == message.path), None)
        if index is None:
            return
        if isinstance(message.found, str):
            self._alone[message.path] = message.found
        else:
            diff.files[index] = message.found
            width = min(max(len(p.path) for p in diff.files), 60)
            files = self.query_one("#files", OptionList)
            files.replace_option_prompt_at_index(index, file_row(message.found, width))
            source = f"From {diff.source.value}"
            self.query_one("#summary", Static).update(f"{source} · {totals(diff)}")
        if index == self.current and not self.picking:
            self._show_file(index)

    def _draw_text(self, text: Content | None) -> None:
        """Empty the hunks' view (and show `text` there)."""
        hunks = self.query_one("#hunks", VerticalScroll)
        hunks.remove_children()
        hunks.scroll_home(animate=False)
        self._lines, self.drawn, self._start = [], 0, 0
        if text is not None:
            hunks.mount(Static(text, classes="part"))

    def _draw_more(self) -> None:
        """Draw the next part of the file shown."""
        if self.drawn < len(self._lines):
            self.query_one("#hunks", VerticalScroll).mount(self._part())

    def _part(self) -> Static:
        """The next lines of the file shown, drawn (counted as drawn)."""
        part = self._lines[self.drawn : self.drawn + CHUNK]
        self.drawn += len(part)
        return Static(styled_diff_lines(part), classes="part")

    def _near_end(self) -> None:
        hunks = self.query_one("#hunks", VerticalScroll)
        if self.drawn < len(self._lines) and hunks.max_scroll_y - hunks.scroll_y < AHEAD:
            self._draw_more()

    @on(OptionList.OptionHighlighted, "#files")
    def _file_clicked(self, event: OptionList.OptionHighlighted) -> None:
        if self.diff is not None and event.option_index != self.current:
            self._show_file(event.option_index)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """File keys only with files shown; the picker's own keys while it shows."""
        if action == "file":
            return not self.picking and self.diff is not None and bool(self.diff.files)
        if action in ("scroll", "page", "edge", "pick"):
            return not self.picking
        return True

    def action_file(self, step: int) -> None:
        """The next or previous file."""
        assert self.diff is not None
        index = max(0, min(len(self.diff.files) - 1, self.current + step))
        if index != self.current:
            self._show_file(index)

    def action_scroll(self, lines: int) -> None:
        """Scroll the hunks."""
        self.query_one("#hunks", VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_page(self, direction: int) -> None:
        """Page the hunks."""
        hunks = self.query_one("#hunks", VerticalScroll)
        if direction < 0:
            hunks.scroll_page_up(animate=False)
        else:
            hunks.scroll_page_down(animate=False)

    def action_edge(self, end: int) -> None:
        """The hunks' first or last line. The end of a long file is drawn on its own (the
        lines above it left undrawn, and said so): a file of any length gets there at once."""
        hunks = self.query_one("#hunks", VerticalScroll)
        if end and self.drawn < len(self._lines):
            hunks.remove_children()
            self._start = max(0, len(self._lines) - 2 * CHUNK)
            self.drawn = len(self._lines)
            parts = [Static(styled_diff_lines(self._lines[self._start :]), classes="part")]
            if self._start:
                above = f"… {plural(self._start, 'line')} above: Home shows them"
                parts.insert(0, Static(Content.styled(above, "$text-muted"), classes="part"))
            hunks.mount_all(parts)
        elif not end and self._start:
            hunks.remove_children()
            self._start = self.drawn = 0
            self._draw_more()
        if end:
            hunks.scroll_end(animate=False)
        else:
            hunks.scroll_home(animate=False)

    # --- since a message ---------------------------------------------------------------------

    def action_pick(self) -> None:
        """Choose the message the diff starts from."""
        if self.turns is None:
            self._source.turns(lambda turns: self.post_message(self.TurnsLoaded(turns)))
        self._show_picker()

    def _show_picker(self) -> None:
        self.picking = True
        since = self.query_one("#since", OptionList)
        since.display = True
        for selector in ("#summary", "#note", "#files", "#file-heading", "#hunks"):
            self.query_one(selector).display = False
        self.query_one("#title", Static).update("Show the changes since…")
        self.query_one("#legend", Static).update(PICK_LEGEND)
        self._fill_picker()
        since.focus()

    def _fill_picker(self) -> None:
        since = self.query_one("#since", OptionList)
        since.clear_options()
        since.add_option(Option("the conversation began", id="start"))
        if self.turns is None:
            since.add_option(Option("Reading your messages…", disabled=True))
        for row in (self.turns or [])[:MAX_TURNS]:
            first = " ".join(row.text.split())[:TEXT_WIDTH] or "(empty message)"
            prompt = Content.assemble((f"message {row.number:>3}  ", "$text-muted"), first)
            since.add_option(Option(prompt, id=row.event_id))
        chosen = self.since.event_id if self.since else "start"
        try:
            since.highlighted = since.get_option_index(chosen)
        except OptionDoesNotExist:
            since.highlighted = 0

    @on(TurnsLoaded)
    def _turns_loaded(self, message: TurnsLoaded) -> None:
        self.turns = message.turns
        if self._number:
            number, self._number = self._number, 0
            row = next((t for t in self.turns if t.number == number), None)
            if row is None:
                self.notify(
                    f"There is no message {number}: showing the changes since the "
                    "conversation began.",
                    severity="warning",
                )
            self._ask(row)
            return
        if self.picking:
            self._fill_picker()

    @on(OptionList.OptionSelected, "#since")
    def _since_chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is None:
            return
        row = next((t for t in self.turns or [] if t.event_id == event.option.id), None)
        self._hide_picker()
        self._ask(row)

    def _hide_picker(self) -> None:
        self.picking = False
        self.query_one("#since").display = False
        for selector in ("#summary", "#hunks"):
            self.query_one(selector).display = True
        self.query_one("#title", Static).update(self._title())
        self.query_one("#hunks").focus()

    def action_back(self) -> None:
        """Esc: from the messages back to the diff (once one was asked for); from the
        diff, close."""
        if self.picking and self._asked:
            self._hide_picker()
            self._show()
            return
        self.dismiss(None)
