"""The workspace's changes (/diff): worked out on a thread, since the conversation began or
since one of the user's messages, and handed to the screen that asked.

The engine does the work (`ohtui.sdk.conversation.workspace_diff`): it reads the
checkpoints (here or on the server) or, where there are none, the workspace's git
repository, and changes nothing. A diff may be asked for while the agent runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ohtui.tui.session.words import describe, sentence

if TYPE_CHECKING:
    from ohtui.sdk.conversation.workspace_diff import WorkspaceDiff
    from ohtui.sdk.utils.unified_diff import FilePatch
    from ohtui.tui.rewind_types import TurnRow
    from ohtui.tui.session.link import Link

logger = logging.getLogger(__name__)

OPENING = "The conversation is still opening: try /diff again in a moment."
ALONE = (
    "This file's diff was left out: the whole diff is too long, and this file cannot be "
    "read alone here (an agent server answers for the whole workspace only). Choose a "
    "later message (m) to see less."
)


class Diffs:
    """Works out one conversation's workspace diffs for the diff screen."""

    def __init__(self, link: Link) -> None:
        self._link = link

    def compute(self, since: str | None, deliver: Callable[[WorkspaceDiff | str], object]) -> None:
        """Work out what changed since the message `since` (None: since the conversation
        began) on a thread; `deliver` gets the diff, or a sentence saying why there is none
        (called on that thread: it must be thread-safe, as posting a message is)."""
        conversation = self._link.conversation
        if conversation is None:
            deliver(OPENING)
            return

        def work() -> None:
            from ohtui.sdk.conversation.exceptions import CheckpointError
            from ohtui.sdk.conversation.workspace_diff import workspace_diff

            try:
                found: WorkspaceDiff | str = workspace_diff(conversation, since)
            except (CheckpointError, ValueError) as exc:
                found = sentence(str(exc))
            except Exception as exc:
                logger.warning("/diff failed", exc_info=True)
                found = f"Reading the workspace's changes failed: {describe(exc)}"
            deliver(found)

        self._link.spawn(work, "ohtui-diff")

    def file(
        self, checkpoint_id: str, path: str, deliver: Callable[[FilePatch | str], object]
    ) -> None:
        """Read one file's change alone on a thread (a file left out of a long diff);
        `deliver` gets it, or a sentence saying why it cannot be read."""
        conversation = self._link.conversation
        if conversation is None:
            deliver(OPENING)
            return

        def work() -> None:
            from ohtui.sdk.conversation.exceptions import CheckpointError
            from ohtui.sdk.conversation.workspace_diff import file_diff

            try:
                found = file_diff(conversation, checkpoint_id, path)
            except CheckpointError as exc:
                deliver(sentence(str(exc)))
                return
            except Exception as exc:
                logger.warning("/diff of %s failed", path, exc_info=True)
                deliver(f"Reading the change to {path} failed: {describe(exc)}")
                return
            deliver(found if found is not None else ALONE)

        self._link.spawn(work, "ohtui-diff-file")

    def turns(self, deliver: Callable[[list[TurnRow]], object]) -> None:
        """The user's messages on the active branch, newest first, for choosing where the
        diff starts; `deliver` is called on a thread (nothing when none can be read)."""
        conversation = self._link.conversation
        if conversation is None:
            deliver([])
            return

        def work() -> None:
            from ohtui.sdk.conversation.rewind import user_turns
            from ohtui.tui.rewind_types import TurnRow
            from ohtui.tui.session.branches import active_branch

            try:
                turns = user_turns(active_branch(conversation))
            except Exception:
                logger.warning("listing the messages for /diff failed", exc_info=True)
                turns = []
            deliver([TurnRow(t.event_id, t.number, t.text) for t in turns])

        self._link.spawn(work, "ohtui-diff-turns")
