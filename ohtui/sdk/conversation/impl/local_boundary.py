"""LocalBoundary: a local conversation's sandbox and checkpoints, how its tools are
confined and how what they change is undone (`LocalConversation` builds on it)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from ohtui.sdk.conversation.base import BaseConversation
from ohtui.sdk.conversation.exceptions import CheckpointError
from ohtui.sdk.conversation.impl.checkpointing import Checkpointing
from ohtui.sdk.conversation.state import ConversationState
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.checkpoint import (
    CheckpointEvent,
    CheckpointRestoreEvent,
    FileChangeRecord,
    checkpoints_in,
    undo_target_in,
)
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.sandbox import Sandbox, SandboxConfig, SandboxMode
from ohtui.sdk.security.undo import CONFINED_WRITERS


class LocalBoundary(BaseConversation):
    """The sandbox and checkpoint half of a local conversation (see BaseConversation)."""

    _state: ConversationState
    checkpointing: Checkpointing | None
    _running: bool

    @abstractmethod
    def _writable(self, what: str) -> None:
        """Refuse `what` when the conversation is open read-only."""

    @abstractmethod
    def _on_event(self, event: Event) -> None:
        """Record and hand on an event of the conversation."""

    @property
    def sandbox(self) -> SandboxConfig | None:
        """How the tools are confined (None, or mode off: not at all)."""
        current = self._state.sandbox
        return current.config if current is not None else None

    def set_sandbox(
        self,
        config: SandboxConfig | None,
        *,
        private_paths: Sequence[str] = (),
        protected_paths: Sequence[str] = (),
    ) -> None:
        """Confine the agent's tools from their next action on (None: no sandbox).

        Writable: the workspace, this conversation's own directory and `config.writable`;
        hidden: `config.hidden`, every other saved conversation and `private_paths` (the
        application's own files, which the file editor refuses even with no sandbox, as it
        refuses to change `protected_paths`). The terminal restarts its shell in the new
        sandbox, and says so. Not saved: the front end sets it on open.
        """
        own = self._state.persistence_dir
        if own and config is not None and config.mode is not SandboxMode.OFF:
            Path(own).mkdir(parents=True, exist_ok=True)  # bound into the sandbox if it exists
        # Commands may write the conversation's own folder, never its checkpoints.
        store = self.checkpointing.store_dir if self.checkpointing is not None else None
        if store:
            Path(store).mkdir(mode=0o700, parents=True, exist_ok=True)
            protected_paths = (*protected_paths, store)
        self._release_kept_shell()
        self._state.set_sandbox(
            Sandbox(
                config if config is not None else SandboxConfig(mode=SandboxMode.OFF),
                self.workspace.working_dir,
                extra_writable=(own,) if own else (),
                extra_hidden=(str(Path(own).parent),) if own else (),
                private=tuple(private_paths),
                protected=tuple(protected_paths),
            )
        )

    def undoable(self, tool_name: str) -> bool:
        """Whether the tool's next action would be confined and undoable: a checkpoint can be
        taken first, and for the terminal, the sandbox keeps its writes in the workspace
        with no network (the file editor, and the tools built on its handles, only write
        where ohtui lets them)."""
        if self.checkpointing is None or not self.checkpointing.ready:
            return False
        if tool_name in CONFINED_WRITERS:
            return True
        sandbox = self._state.sandbox
        return (
            tool_name == "terminal"
            and sandbox is not None
            and sandbox.config.mode is SandboxMode.WORKSPACE_WRITE
            and not sandbox.config.network
        )

    def list_checkpoints(self) -> list[CheckpointEvent]:
        """The workspace's checkpoints, newest first (see BaseConversation)."""
        return checkpoints_in(self._state.active_branch())

    def undo_checkpoint(self) -> CheckpointEvent | None:
        """The checkpoint an undo restores (see BaseConversation)."""
        return undo_target_in(self._state.active_branch())

    def checkpoint_changes(self, checkpoint_id: str) -> list[FileChangeRecord]:
        """The files restoring the checkpoint would change now (see BaseConversation)."""
        return self._checkpointing().changes(checkpoint_id)

    def checkpoint_diff(self, checkpoint_id: str) -> str:
        """What restoring the checkpoint would change now, as a unified diff."""
        return self._checkpointing().diff(checkpoint_id)

    def _checkpointing(self) -> Checkpointing:
        """The checkpoints of a conversation opened with them; a resumed one that recorded
        some opens their store even when opened without `checkpoints`."""
        if self.checkpointing is None:
            if not checkpoints_in(self._state.events):
                raise CheckpointError(
                    "this conversation keeps no checkpoints (opened without them)"
                )
            self.checkpointing = self._new_checkpointing()
        return self.checkpointing

    def _new_checkpointing(self) -> Checkpointing:
        return Checkpointing(
            self.workspace.working_dir,
            self._state.persistence_dir,
            lambda: self._state.events,
            self._on_event,
        )

    def restore_checkpoint(self, checkpoint_id: str | None = None) -> CheckpointRestoreEvent:
        """Restore the workspace to a checkpoint (see BaseConversation)."""
        self._writable("restore a checkpoint")
        if self._running:
            raise CheckpointError("the agent is running: stop it first, then restore")
        if checkpoint_id is None:
            target = self.undo_checkpoint()
            if target is None or target.checkpoint_id is None:
                raise CheckpointError("nothing to undo: no action has changed the workspace")
            checkpoint_id = target.checkpoint_id
        checkpointing = self._checkpointing()
        with self._state:
            return checkpointing.restore(checkpoint_id)

    def check_sandbox(self) -> str | None:
        """Start the agent's shell in the sandbox once, exactly as it will start: None when
        it starts (or there is no sandbox), else why it cannot, in words. The started shell
        is kept for the first command (see first_shell): one sandbox start, not two."""
        sandbox = self._state.sandbox
        if sandbox is None or not sandbox.active:
            return None
        from ohtui.sdk.tools.terminal.environment import agent_environment
        from ohtui.sdk.tools.terminal.first_shell import check_and_keep
        from ohtui.sdk.tools.terminal.session import DEFAULT_ENV
        from ohtui.sdk.tools.terminal.supervisor import shell_command

        return check_and_keep(
            sandbox,
            shell_command("bash", sandboxed=True),
            {**agent_environment(), **DEFAULT_ENV},  # as the terminal's shell starts
            self.workspace.working_dir,
        )

    def _release_kept_shell(self) -> None:
        """End the shell `check_sandbox` kept, if no command took it (see first_shell)."""
        sandbox = self._state.sandbox
        if sandbox is not None and sandbox.active:
            from ohtui.sdk.tools.terminal.first_shell import release

            release(sandbox)

    def _hook_sandbox(self) -> Sandbox | None:
        """Where an agent hook's tools run: in this sandbox, with the saved conversations
        (this one's too) among the application's own files, refused in every mode."""
        sandbox = self._state.sandbox
        if sandbox is None:
            return None
        own = self._state.persistence_dir
        store = (str(Path(own).parent),) if own else ()
        return replace(sandbox, private=(*sandbox.private, *store))

    def outside_sandbox_matters(self, action: ActionEvent) -> bool:
        """Whether running this action outside the sandbox would change anything: a command
        while the sandbox confines the shell, or an edit the sandbox alone refuses (never
        one that ohtui's own files refuse: those stay out of reach in every mode)."""
        from ohtui.sdk.tools.file_editor import FileEditorAction
        from ohtui.sdk.tools.terminal import TerminalAction

        sandbox = self._state.sandbox
        if sandbox is None or not sandbox.active:
            return False
        inner = action.action
        if isinstance(inner, TerminalAction):
            return True
        if not isinstance(inner, FileEditorAction) or not inner.path.strip():
            return False
        reading = inner.command == "view"
        unconfined = sandbox.unconfined()
        confined_says, free_says = (
            (sandbox.check_read, unconfined.check_read)
            if reading
            else (sandbox.check_write, unconfined.check_write)
        )
        return confined_says(inner.path) is not None and free_says(inner.path) is None

    def approve_outside_sandbox(self, action_ids: Iterable[str]) -> None:
        """Let these waiting actions run outside the sandbox when they run (each once).

        ValueError for an id that is not pending. The next `run()` runs them.
        """
        self._writable("approve actions outside the sandbox")
        wanted = set(action_ids)
        pending = {a.id for a in self._state.get_unmatched_actions(self._state.active_branch())}
        unknown = wanted - pending
        if unknown:
            raise ValueError(f"not pending: {', '.join(sorted(unknown))}")
        self._state.allow_outside_sandbox(wanted)
