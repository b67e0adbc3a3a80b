"""Checkpoints of the workspace: listed (/checkpoints), previewed before a restore (/undo
too), and restored, each on a thread while no run goes on."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ohtui.tui import messages as msg
from ohtui.tui.checkpoint_types import CheckpointRow, FileChange, RestorePreview
from ohtui.tui.session.words import describe, sentence

if TYPE_CHECKING:
    from ohtui.sdk import BaseConversation, CheckpointEvent
    from ohtui.tui.session.link import Link

logger = logging.getLogger(__name__)


class Checkpoints:
    """Lists, previews and restores one conversation's checkpoints."""

    def __init__(self, link: Link, running: Callable[[], bool]) -> None:
        """`running`: whether a run is going on (nothing is restored then)."""
        self._link = link
        self._running = running
        self._restoring = False

    def _work(self, what: str, work: Callable[[BaseConversation], None]) -> None:
        """Run `work` on a thread unless nothing can be restored now; its CheckpointError
        (nothing to undo, unknown id, agent running) and any other failure become notices."""
        link = self._link
        conversation = link.conversation
        if conversation is None:
            link.post(msg.Notice(f"The conversation is still opening: {what} in a moment."))
            return
        if self._running():
            link.post(
                msg.Notice(
                    f"The agent is running: stop it (Ctrl+C) or let it finish, then try {what} "
                    "again."
                )
            )
            return

        def guarded() -> None:
            from ohtui.sdk.conversation.exceptions import CheckpointError

            try:
                work(conversation)
            except CheckpointError as exc:
                link.post(msg.Notice(sentence(str(exc)), "warning"))
            except Exception as exc:
                logger.warning("%s failed", what, exc_info=True)
                failed = f"{what[:1].upper()}{what[1:]} failed"
                link.post(msg.Notice(f"{failed}: {describe(exc)}", "error"))

        link.spawn(guarded, "ohtui-checkpoint")

    def post_list(self) -> None:
        """Read the checkpoints (/checkpoints) and post them, newest first."""

        def work(conversation: BaseConversation) -> None:
            target = conversation.undo_checkpoint()
            undo_id = target.checkpoint_id if target is not None else None
            rows = [_row(event, undo_id) for event in conversation.list_checkpoints()]
            self._link.post(msg.CheckpointsListed(rows))

        self._work("/checkpoints", work)

    def preview_restore(self, checkpoint_id: str | None) -> None:
        """Work out what restoring a checkpoint (None: what /undo restores) would change and
        post it for the user to confirm."""
        what = "/undo" if checkpoint_id is None else "the restore"

        def work(conversation: BaseConversation) -> None:
            from ohtui.sdk.conversation.exceptions import CheckpointError

            target = conversation.undo_checkpoint()
            undo_id = target.checkpoint_id if target is not None else None
            if checkpoint_id is not None:
                found = [
                    c for c in conversation.list_checkpoints() if c.checkpoint_id == checkpoint_id
                ]
                target = found[0] if found else None
            if target is None or target.checkpoint_id is None:
                if checkpoint_id is None and conversation.list_checkpoints():
                    raise CheckpointError(
                        "Nothing more to undo: every action's changes are undone. "
                        "/checkpoints lists the checkpoints, those before restores too."
                    )
                if checkpoint_id is None:
                    raise CheckpointError("Nothing to undo: no action has changed the workspace.")
                raise CheckpointError(f"There is no checkpoint {checkpoint_id[:8]}.")
            changes = conversation.checkpoint_changes(target.checkpoint_id)
            diff = conversation.checkpoint_diff(target.checkpoint_id) if changes else ""
            preview = RestorePreview(
                checkpoint=_row(target, undo_id),
                changes=tuple(FileChange(c.path, c.status) for c in changes),
                diff=diff,
                undo=checkpoint_id is None,
            )
            self._link.post(msg.RestorePreviewReady(preview))

        self._work(what, work)

    def restore(self, checkpoint: CheckpointRow) -> None:
        """Restore the workspace to `checkpoint`; the restore shows as its event's cell."""
        link = self._link

        def work(conversation: BaseConversation) -> None:
            with link.lock:
                if self._restoring:
                    return
                self._restoring = True
            try:
                event = conversation.restore_checkpoint(checkpoint.checkpoint_id)
            finally:
                with link.lock:
                    self._restoring = False
            link.post(msg.Restored(checkpoint.before, len(event.changes)))

        self._work("the restore", work)


def _row(event: CheckpointEvent, undo_id: str | None) -> CheckpointRow:
    """A recorded checkpoint as the modals show it."""
    return CheckpointRow(
        checkpoint_id=event.checkpoint_id or "",
        label=event.label,
        files=event.files,
        taken_at=event.timestamp,
        before_restore=event.action_id is None,
        undo_target=event.checkpoint_id is not None and event.checkpoint_id == undo_id,
    )
