"""Finding: reading the whole active branch for transcript search, and the page around a hit.

The reading runs on a daemon thread a stretch at a time, newest first, and posts each
stretch's text (`msg.FindTexts`): the count grows on screen while a long conversation is
read, and the UI thread only ever adds one stretch to the index. Events recorded meanwhile
come to the index as they are shown (the chat screen adds them), so none is missed.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from ohtui.tui import messages as msg
from ohtui.tui.session.branches import PAGE, active_branch, read_page

if TYPE_CHECKING:
    from ohtui.tui.session.link import Link

logger = logging.getLogger(__name__)

STRETCH = 500
"""Events read and posted at a time: small enough that the first count comes at once."""
BITE = 50
"""Events read between two pauses."""
PAUSE = 0.002
"""Seconds the reading sleeps after each BITE: the UI thread takes the GIL at once then. Left
to the interpreter's switching, a thread back from waiting for input waits for the reader's
time slice to end, and keys and frames lag by tenths of a second on a loaded machine."""


class Finding:
    """Reads text for the transcript index and pages around hits, off the UI thread."""

    def __init__(self, link: Link) -> None:
        self._link = link
        self._generation = 0

    def read_all(self, generation: int) -> None:
        """Read the text of every event on the active branch and post it, a stretch at a
        time, tagged with `generation` (a newer call stops an older reading)."""
        link = self._link
        self._generation = generation

        def work() -> None:
            conversation = link.conversation
            if conversation is None:
                link.post(msg.FindTexts(generation, [], 0, 0, done=True))
                return
            branch = active_branch(conversation)
            total = len(branch)
            stop = total
            while True:  # newest first: the hits nearest the bottom, where one reads, come first
                if self._generation != generation or link.closed:
                    return
                start = max(0, stop - STRETCH)
                texts: list[tuple[int, Any]] = []
                for bite in range(start, stop, BITE):
                    texts += _texts(branch[bite : min(stop, bite + BITE)], bite)
                    time.sleep(PAUSE)
                link.post(msg.FindTexts(generation, texts, total - start, total, done=start == 0))
                if start == 0:
                    return
                stop = start

        link.spawn(work, "ohtui-find")

    def load_page_at(self, position: int) -> None:
        """Read the page of the active branch around `position` and post it."""
        link = self._link

        def work() -> None:
            conversation = link.conversation
            if conversation is None:
                return
            start = max(0, position - PAGE // 2)
            page = read_page(conversation, start, start + PAGE)
            link.post(
                msg.FindPage(page.events, page.start, page.has_older, position, page.branches)
            )

        link.spawn(work, "ohtui-find-page")


def _texts(events: list[Any], first: int) -> list[tuple[int, Any]]:
    """(position, Searchable) of the events that show text, `first` the first's position."""
    from ohtui.tui.widgets.find_text import searchable

    texts = []
    for offset, event in enumerate(events):
        try:
            found = searchable(event)
        except Exception:  # one odd event must not end the search
            logger.exception("reading an event's text for search failed")
            continue
        if found is not None:
            texts.append((first + offset, found))
    return texts
