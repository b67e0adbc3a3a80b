"""Paging through the active branch of a conversation (positions on it, see `branches`):
the tail shown when it opens (a saved one's even before it opens), and the pages before and
after what the screen holds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.opening import Target
from ohtui.opening.local import find_target
from ohtui.tui import messages as msg
from ohtui.tui.session.branches import PAGE, newest_page, read_page
from ohtui.tui.status import RunStatus

if TYPE_CHECKING:
    from ohtui.settings.profile import Profile
    from ohtui.tui.options import AppOptions
    from ohtui.tui.session.link import Link

HISTORY_TAIL = PAGE
"""Events read when a conversation opens; older ones are read as the user scrolls up."""


class Paging:
    """Reads pages of one conversation's events off the UI thread and posts them."""

    def __init__(self, link: Link) -> None:
        self._link = link

    def show_saved(self, options: AppOptions, profile: Profile) -> None:
        """Resuming: show the saved history at once, before the keyring and the agent are
        ready (the conversation opens a moment later; a failure here is reported then)."""
        if not (options.resume_id or options.continue_latest) or profile.settings.server.url:
            return  # a conversation on a server: its history comes from there
        if options.leaf_event_id is not None:
            return  # it opens on another branch than the one saved as HEAD
        from ohtui.sdk.conversation import history_tail

        directory = options.persistence_dir or profile.conversations_dir
        target = Target(options.resume_id, options.continue_latest)
        summary = find_target(directory, options.workspace, target)
        if summary is None:
            return
        events, total = history_tail(directory, summary.id, HISTORY_TAIL)
        status = RunStatus(summary.status) if summary.status else None
        self._link.post(msg.SavedHistory(events, total, total > len(events), status))

    def load_older(self, before: int) -> None:
        """Read the page of the active branch before position `before` and post it."""
        link = self._link

        def work() -> None:
            conversation = link.conversation
            if conversation is None or before <= 0:
                return
            page = read_page(conversation, before - HISTORY_TAIL, before)
            link.post(msg.OlderEvents(page.events, page.has_older, page.branches))

        link.spawn(work, "ohtui-older")

    def load_newer(self, after: int) -> None:
        """Read the page of the active branch from position `after` and post it."""
        link = self._link

        def work() -> None:
            conversation = link.conversation
            if conversation is None:
                return
            page = read_page(conversation, after, after + HISTORY_TAIL)
            link.post(msg.NewerEvents(page.events, after, page.branches))

        link.spawn(work, "ohtui-newer")

    def load_page(self, newest: bool) -> None:
        """Read the first page of the active branch, or (`newest`) the last, and post it."""
        link = self._link

        def work() -> None:
            conversation = link.conversation
            if conversation is None:
                return
            page = (
                newest_page(conversation, HISTORY_TAIL)
                if newest
                else read_page(conversation, 0, HISTORY_TAIL)
            )
            link.post(msg.EventPage(page.events, page.start, page.has_older, newest, page.branches))

        link.spawn(work, "ohtui-page")
