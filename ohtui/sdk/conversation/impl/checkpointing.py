"""One conversation's checkpoints: taken before actions that may change the workspace, listed
from its events, and restored on the user's word.

The files are kept by a CheckpointStore in the conversation's own folder (a private
temporary one for a conversation kept in memory); what exists is recorded as events, so a
resumed or remote conversation lists the same checkpoints.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ohtui.sdk.conversation.exceptions import CheckpointError
from ohtui.sdk.event.checkpoint import (
    CheckpointEvent,
    CheckpointRestoreEvent,
    FileChangeRecord,
    find_checkpoint,
)
from ohtui.sdk.security.undo import FILE_EDITORS, written_paths

if TYPE_CHECKING:
    from ohtui.sdk.event.base import Event
    from ohtui.sdk.event.llm_convertible.action import ActionEvent
    from ohtui.sdk.workspace.checkpoints import CheckpointStore

logger = logging.getLogger(__name__)

RETRY_AFTER = 300.0
"""Seconds before trying again in a workspace that could not be checkpointed (too large)."""
STORE_FOLDER = "checkpoints"
CLOSE_WAIT = 5.0
"""Seconds closing waits for a warm-up to finish."""


class Checkpointing:
    """Takes and restores the workspace's checkpoints for one conversation."""

    def __init__(
        self,
        workspace: str,
        persistence_dir: str | None,
        events: Callable[[], Sequence[Event]],
        on_event: Callable[[Event], None],
    ) -> None:
        self._workspace = workspace
        self._own_dir = persistence_dir
        self._events = events
        self._on_event = on_event
        self._store: CheckpointStore | None = None
        self._temporary: str | None = None
        self._unavailable: str | None = None
        self._failed_at = 0.0
        self._told: str | None = None
        self._lock = threading.Lock()
        self._warming: threading.Thread | None = None

    @property
    def store_dir(self) -> str | None:
        """Where the checkpoints are kept (None until the first is taken, in memory only)."""
        if self._own_dir:
            return str(Path(self._own_dir) / STORE_FOLDER)
        return self._temporary

    @property
    def ready(self) -> bool:
        """Whether the next action can be checkpointed, as far as is known: no recent
        failure (a workspace too large, git missing)."""
        return self._unavailable is None or time.monotonic() - self._failed_at > RETRY_AFTER

    def warm_up(self) -> None:
        """Bring the store up to date with the workspace in the background (the first
        checkpoint of a large workspace hashes every file: seconds), while the model thinks;
        once per conversation object. The first checkpoint waits for it."""
        if self._warming is not None or not self.ready:
            return

        def warm() -> None:
            from ohtui.sdk.workspace.checkpoints import CheckpointUnavailable

            with self._lock, contextlib.suppress(CheckpointUnavailable, OSError):
                store = self._open()
                if not store.list():
                    store.take("the workspace when the conversation started")

        self._warming = threading.Thread(target=warm, name="ohtui-checkpoint-warm", daemon=True)
        self._warming.start()

    def before(self, action: ActionEvent) -> CheckpointEvent | None:
        """Take a checkpoint right before `action` runs and record it; None (recorded once
        per reason) when none could be taken."""
        from ohtui.sdk.workspace.checkpoints import CheckpointUnavailable

        label = _label(action)
        try:
            with self._lock:
                taken = self._open().take(label)
        except CheckpointUnavailable as exc:
            self._failed(str(exc), action.id)
            return None
        except OSError as exc:
            logger.warning("checkpoint failed", exc_info=True)
            self._failed(f"the checkpoint store cannot be written ({exc})", action.id)
            return None
        self._unavailable = None
        self._told = None
        event = CheckpointEvent(
            checkpoint_id=taken.id, action_id=action.id, label=label, files=taken.files
        )
        self._on_event(event)
        return event

    def changes(self, checkpoint_id: str) -> list[FileChangeRecord]:
        """What restoring the checkpoint would change in the workspace now."""
        full, store = self._resolve(checkpoint_id)
        return [FileChangeRecord(path=c.path, status=c.status) for c in store.changes(full)]

    def diff(self, checkpoint_id: str, paths: Sequence[str] | None = None) -> str:
        """The restore as a unified diff (present to checkpoint)."""
        full, store = self._resolve(checkpoint_id)
        return store.diff(full, paths)

    def restore(self, checkpoint_id: str) -> CheckpointRestoreEvent:
        """Make the workspace as it was at the checkpoint; recorded (with the checkpoint of
        the present, taken first) so the restore can be undone and the agent is told."""
        from ohtui.sdk.workspace.checkpoints import CheckpointUnavailable

        target = self._known(checkpoint_id)
        full, store = self._resolve(checkpoint_id)
        try:
            with self._lock:
                before, changed = store.restore(full)
        except CheckpointUnavailable as exc:
            raise CheckpointError(f"cannot restore: {exc}") from exc
        label = f"the restore to before {target.label}" if target.label else "a restore"
        self._on_event(CheckpointEvent(checkpoint_id=before.id, label=label, files=before.files))
        event = CheckpointRestoreEvent(
            checkpoint_id=full,
            label=target.label,
            undo_checkpoint_id=before.id,
            changes=[FileChangeRecord(path=c.path, status=c.status) for c in changed],
        )
        self._on_event(event)
        return event

    def close(self) -> None:
        """Forget the store (after a warm-up still going, up to a few seconds); a temporary
        one (conversation in memory) is removed."""
        if self._warming is not None:
            self._warming.join(CLOSE_WAIT)
        self._store = None
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None

    def _open(self) -> CheckpointStore:
        from ohtui.sdk.workspace.checkpoints import CheckpointStore

        if self._store is None:
            folder = self.store_dir
            if folder is None:
                self._temporary = folder = tempfile.mkdtemp(prefix="ohtui-checkpoints-")
            self._store = CheckpointStore(folder, self._workspace)
        return self._store

    def _known(self, checkpoint_id: str) -> CheckpointEvent:
        found = find_checkpoint(self._events(), checkpoint_id)
        if found is None:
            raise CheckpointError(
                f"this conversation has no checkpoint {checkpoint_id!r}: /checkpoints lists them"
            )
        return found

    def _resolve(self, checkpoint_id: str) -> tuple[str, CheckpointStore]:
        """The checkpoint's full id (a prefix of 4 or more is enough) and its store."""
        full = self._known(checkpoint_id).checkpoint_id or ""
        store = self._open()
        if store.get(full) is None:
            raise CheckpointError(
                f"checkpoint {full[:8]} is recorded but its files are gone from {self.store_dir}"
            )
        return full, store

    def _failed(self, reason: str, action_id: str) -> None:
        self._unavailable = reason
        self._failed_at = time.monotonic()
        if reason != self._told:  # once per reason: not before every action
            self._told = reason
            self._on_event(CheckpointEvent(action_id=action_id, unavailable=reason))


def _label(action: ActionEvent) -> str:
    """What the action does, in a few words: `rm -f src/*`, `edit src/app.py`."""
    data = action.action.model_dump() if action.action is not None else {}
    if action.tool_name == "terminal" and isinstance(data.get("command"), str):
        text = " ".join(data["command"].split())
    elif action.tool_name in FILE_EDITORS and isinstance(data.get("path"), str):
        text = f"{data.get('command', 'edit')} {data['path']}"
    elif written := written_paths(action.tool_name, data):
        text = f"{action.tool_name} {', '.join(written)}"
    else:
        text = action.tool_name
    return text if len(text) <= 80 else text[:79] + "…"
