"""Paging through a conversation's events: the tail shown when it opens (a saved one's even
before it opens), and the pages before and after what the screen holds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.opening import Target
from ohtui.opening.local import find_target
from ohtui.tui import messages as msg
from ohtui.tui.status import RunStatus

if TYPE_CHECKING:
    from ohtui.settings.profile import Profile
    from ohtui.tui.options import AppOptions
    from ohtui.tui.session.link import Link

HISTORY_TAIL = 40
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
        """Read the page of events before index `before` and post it."""
        link = self._link

        def work() -> None:
            conversation = link.conversation
            if conversation is None or before <= 0:
                return
            start = max(0, before - HISTORY_TAIL)
            events = conversation.state.events[start:before]
            link.post(msg.OlderEvents(list(events), has_older=start > 0))

        link.spawn(work, "ohtui-older")

    def load_newer(self, after: int) -> None:
        """Read the page of events from index `after` and post it."""
        link = self._link

        def work() -> None:
            conversation = link.conversation
            if conversation is None:
                return
            events = conversation.state.events
            stop = min(after + HISTORY_TAIL, len(events))
            page = events[after:stop] if stop > after else []
            link.post(msg.NewerEvents(list(page), after))

        link.spawn(work, "ohtui-newer")

    def load_page(self, newest: bool) -> None:
        """Read the first page of events, or (`newest`) the last, and post it."""
        link = self._link

        def work() -> None:
            conversation = link.conversation
            if conversation is None:
                return
            events = conversation.state.events
            total = len(events)
            start = max(0, total - HISTORY_TAIL) if newest else 0
            stop = total if newest else min(total, HISTORY_TAIL)
            page = events[start:stop] if stop > start else []
            link.post(msg.EventPage(list(page), start, has_older=start > 0, newest=newest))

        link.spawn(work, "ohtui-page")
