"""The picker's preview pane: the highlighted conversation's last events, read off the UI thread
after the highlight rests, earlier ones as the pane is scrolled up; the last few kept."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from ohtui.tui.picker_rows import preview_content
from ohtui.tui.screens.picker_family import tree_lines

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.timer import Timer

    from ohtui.sdk.conversation.branch_tips import ConversationTree
    from ohtui.sdk.conversation.catalog import ConversationCatalog
    from ohtui.sdk.conversation.summary import ConversationSummary

logger = logging.getLogger(__name__)

PREVIEW_DELAY = 0.05
"""Seconds the highlight must rest before its preview is read (holding ↓ reads none); the
highlight a listing places is read at once."""
PREVIEW_EVENTS = 24
"""Events read for a preview at a time: the last ones, then earlier ones as it is scrolled up."""
PREVIEW_CACHE = 64
"""Previews kept: going back to a conversation just seen reads nothing."""

InBackground = Callable[[Callable[[], Message | None], str], None]
"""Runs a job on a worker thread in a named group; posts the message it returns."""


@dataclass
class Preview:
    """What the preview shows of one conversation: its events from `start` on."""

    body: Content
    start: int
    cost: float | None
    family: list[Content] = field(default_factory=list)
    """Where a fork comes from, the branches (see picker_family.tree_lines)."""
    tree: ConversationTree | None = None

    def content(self) -> Content:
        """Its place in the tree, the cost, a line saying how many earlier events there
        are, then the events."""
        lines: list[Content] = list(self.family)
        if self.cost is not None:
            lines.append(Content.assemble(("cost      ", "$foreground-muted"), f"${self.cost:.2f}"))
        if self.start:
            earlier = f"↑ {self.start} earlier event{'' if self.start == 1 else 's'}: scroll up"
            lines.append(Content.styled(earlier, "$foreground-muted"))
        if lines:
            lines.append(Content(""))
        return Content("\n").join([*lines, self.body])


@dataclass
class PreviewLoaded(Message, bubble=False):
    """A page of one conversation's events, read and formatted on a worker."""

    conversation_id: str
    content: Content
    start: int
    """How many earlier events there are (0: the preview reaches the beginning)."""
    cost: float | None
    earlier: bool
    """A page before the one shown (else the last events)."""
    family: list[Content] = field(default_factory=list)
    tree: ConversationTree | None = None


class PreviewPane:
    """Fills `#preview-events` (in `#preview-body`) of the picker's screen."""

    def __init__(
        self,
        screen: Screen[Any],
        in_background: InBackground,
        catalog: Callable[[], ConversationCatalog],
        summary_of: Callable[[str], ConversationSummary | None] = lambda _: None,
        title_of: Callable[[str], str] = lambda conversation_id: conversation_id[:8],
        now: Callable[[], float] = time.time,
    ) -> None:
        """`catalog` gives where the events are read from (called on a worker);
        `summary_of` a listed conversation's summary (on the UI thread), `title_of` a
        conversation's title (on a worker: a fork's parent)."""
        self._screen = screen
        self._in_background = in_background
        self._catalog = catalog
        self._summary_of = summary_of
        self._title_of = title_of
        self._now = now
        self._previews: dict[str, Preview] = {}
        self._shown_id: str | None = None
        self._timer: Timer | None = None
        self._asked = False
        self.at_once = False
        """The next preview shown is read at once (for a highlight the listing placed)."""

    def forget(self) -> None:
        """Drop every preview kept (fresh rows: a conversation may have grown)."""
        self._previews.clear()

    def show(self, conversation_id: str | None) -> None:
        """Show the kept preview of `conversation_id` (None: nothing) at once; read it after a
        short pause (at once after `at_once`) if none is kept."""
        body = self._screen.query_one("#preview-events", Static)
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._shown_id = conversation_id
        self._asked = False
        if conversation_id is None:
            body.update("")
            return
        cached = self._previews.get(conversation_id)
        body.update(cached.content() if cached is not None else "")
        if cached is not None:
            self._scroll_end()
            return

        summary = self._summary_of(conversation_id)

        def read() -> None:
            self._in_background(lambda: self.read(conversation_id, summary=summary), "preview")

        if self.at_once:
            self.at_once = False
            read()
        else:
            self._timer = self._screen.set_timer(PREVIEW_DELAY, read)

    def read(
        self,
        conversation_id: str,
        before: int | None = None,
        summary: ConversationSummary | None = None,
    ) -> PreviewLoaded:
        """On a worker: the last events of a conversation (or those `before` an index); with
        its `summary`, its place in the tree too."""
        catalog = self._catalog()
        page = catalog.events(conversation_id, PREVIEW_EVENTS, before)
        cost = catalog.cost(conversation_id) if before is None else None
        family: list[Content] = []
        tree = None
        if summary is not None and before is None:
            try:
                tree = catalog.tree(conversation_id, summary.forked_at)
            # The events are shown all the same: the tree is extra (a server may list none).
            except (LookupError, OSError, ValueError, RuntimeError):
                logger.warning("no tree for %s", conversation_id, exc_info=True)
            parent = summary.forked_from
            parent_title = self._title_of(parent) if parent is not None else None
            family = tree_lines(summary, tree, parent_title, now=self._now())
        return PreviewLoaded(
            conversation_id,
            preview_content(page.events),
            page.start,
            cost,
            before is not None,
            family,
            tree,
        )

    def tree(self, conversation_id: str) -> ConversationTree | None:
        """The branches of a conversation, once its preview has read them (None: not yet)."""
        preview = self._previews.get(conversation_id)
        return preview.tree if preview is not None else None

    def loaded(self, message: PreviewLoaded) -> None:
        """Keep what was read; show it if its conversation is still highlighted."""
        cached = self._previews.pop(message.conversation_id, None)
        if message.earlier:
            if cached is None:
                return  # dropped from the cache meanwhile: the next highlight reads it again
            preview = Preview(
                Content("\n").join([message.content, Content(""), cached.body]),
                message.start,
                cached.cost,
                cached.family,
                cached.tree,
            )
        else:
            preview = Preview(
                message.content, message.start, message.cost, message.family, message.tree
            )
        if len(self._previews) >= PREVIEW_CACHE:
            self._previews.pop(next(iter(self._previews)))
        self._previews[message.conversation_id] = preview
        if self._shown_id != message.conversation_id:
            return
        self._asked = False
        scroller = self._screen.query_one("#preview-body", VerticalScroll)
        below = scroller.virtual_size.height - scroller.scroll_y
        self._screen.query_one("#preview-events", Static).update(preview.content())
        if message.earlier:
            # Keep the lines read in place: the earlier events appear above them.
            def keep_place() -> None:
                scroller.scroll_to(
                    y=max(0, scroller.virtual_size.height - below), animate=False, immediate=True
                )
                self.scrolled(scroller.scroll_y)

            self._screen.call_after_refresh(keep_place)
        else:
            self._scroll_end()

    def _scroll_end(self) -> None:
        scroller = self._screen.query_one("#preview-body", VerticalScroll)

        def to_end() -> None:
            scroller.scroll_end(animate=False, immediate=True)
            self.scrolled(scroller.scroll_y)  # it may not fill the pane yet

        self._screen.call_after_refresh(to_end)

    def scrolled(self, scroll_y: float) -> None:
        """Read the events before those shown once the preview is scrolled to its top (or
        while they all fit in it)."""
        cached = self._previews.get(self._shown_id or "")
        if scroll_y > 0 or cached is None or cached.start == 0 or self._asked:
            return
        self._asked = True
        conversation_id, before = self._shown_id or "", cached.start
        self._in_background(lambda: self.read(conversation_id, before), "preview")
