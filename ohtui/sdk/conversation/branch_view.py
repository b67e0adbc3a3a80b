"""BranchView: the View of a conversation's active branch (`ConversationState.view`).

Kept as the branch grows, reading each new event once (an IncrementalView); when HEAD moves
to another branch, or a message already taken in is blocked, it is built again from the
branch's root. Reads may come from any thread: a lock keeps one build at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

from ohtui.sdk.context.view import IncrementalView, View
from ohtui.sdk.event.base import Event


class BranchView:
    """The View of whatever branch it is given, kept from one read to the next."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._incremental = IncrementalView()
        self._skipped: frozenset[str] = frozenset()

    def current(self, branch: Sequence[Event], blocked: Mapping[str, str]) -> View:
        """The View of `branch` without the `blocked` messages: the events appended since
        the last read are taken in; another branch, or a new blocked message, starts over."""
        with self._lock:
            skipped = frozenset(blocked)
            if skipped != self._skipped:
                self._incremental, self._skipped = IncrementalView(), skipped
            return self._incremental.update(branch, skipped)

    def rebuild(self, branch: Sequence[Event], blocked: Mapping[str, str]) -> View:
        """The View of `branch` built from its root; the old one stays if that fails."""
        with self._lock:
            fresh, skipped = IncrementalView(), frozenset(blocked)
            view = fresh.update(branch, skipped)
            self._incremental, self._skipped = fresh, skipped
            return view
