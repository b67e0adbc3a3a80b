"""BaseConversation: the interface every conversation (local or remote) implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ohtui.sdk.conversation.exceptions import CheckpointError
from ohtui.sdk.conversation.types import ConversationCallbackType, ConversationID

if TYPE_CHECKING:
    from ohtui.sdk.agent.base import AgentBase
    from ohtui.sdk.conversation.event_store import EventsListBase
    from ohtui.sdk.conversation.secret_registry import SecretValue
    from ohtui.sdk.conversation.state import ConversationExecutionStatus
    from ohtui.sdk.conversation.stats import ConversationStats
    from ohtui.sdk.event.base import Event
    from ohtui.sdk.event.checkpoint import (
        CheckpointEvent,
        CheckpointRestoreEvent,
        FileChangeRecord,
    )
    from ohtui.sdk.event.llm_convertible.action import ActionEvent
    from ohtui.sdk.event.types import EventID
    from ohtui.sdk.llm.llm import LLM
    from ohtui.sdk.llm.message import Message
    from ohtui.sdk.sandbox import SandboxConfig
    from ohtui.sdk.security.analyzer import SecurityAnalyzerBase
    from ohtui.sdk.security.confirmation_policy import ConfirmationPolicyBase
    from ohtui.sdk.tool.schema import Action, Observation
    from ohtui.sdk.workspace.local import BaseWorkspace


class ConversationStateProtocol(Protocol):
    """The read-only view of a conversation's state that every front end may rely on."""

    @property
    def id(self) -> ConversationID: ...
    @property
    def events(self) -> EventsListBase: ...
    @property
    def execution_status(self) -> ConversationExecutionStatus: ...
    @property
    def stats(self) -> ConversationStats: ...
    @property
    def agent(self) -> AgentBase: ...
    @property
    def workspace(self) -> BaseWorkspace: ...
    @property
    def persistence_dir(self) -> str | None: ...
    @property
    def title(self) -> str | None: ...
    @property
    def confirmation_policy(self) -> ConfirmationPolicyBase: ...
    @property
    def security_analyzer(self) -> SecurityAnalyzerBase | None: ...
    @property
    def leaf_event_id(self) -> EventID | None: ...
    def active_branch(self, limit: int | None = None) -> Sequence[Event]: ...


class BaseConversation(ABC):
    """Sends messages to an agent, runs it, and exposes its state.

    Front ends use only this surface and the state protocol, so a conversation running
    elsewhere (a RemoteConversation) drops in for a LocalConversation unchanged.
    """

    agent: AgentBase
    """The agent running the conversation (set by every implementation)."""
    workspace: BaseWorkspace
    """Where the agent's tools work (set by every implementation)."""
    delete_on_close: bool = False
    """Delete the saved conversation when it is closed (e.g. nothing was said in it)."""

    @property
    @abstractmethod
    def id(self) -> ConversationID:
        """The conversation id."""

    @property
    @abstractmethod
    def state(self) -> ConversationStateProtocol:
        """The conversation state."""

    @property
    def conversation_stats(self) -> ConversationStats:
        """Cost, tokens and latency of every LLM used."""
        return self.state.stats

    @abstractmethod
    def send_message(self, message: str | Message, sender: str | None = None) -> None:
        """Add a user message (a string or a Message)."""

    @abstractmethod
    def run(self) -> None:
        """Run the agent until it finishes, pauses, waits for confirmation or fails."""

    @property
    @abstractmethod
    def confirmation_policy_active(self) -> bool:
        """Whether the confirmation policy may ask the user."""

    @property
    @abstractmethod
    def is_confirmation_mode_active(self) -> bool:
        """True only with a security analyzer set and an active policy."""

    @abstractmethod
    def set_confirmation_policy(self, policy: ConfirmationPolicyBase) -> None:
        """Set the confirmation policy."""

    @abstractmethod
    def set_security_analyzer(self, analyzer: SecurityAnalyzerBase | None) -> None:
        """Set the security analyzer."""

    @abstractmethod
    def reject_pending_actions(
        self, reason: str = "User rejected the action.", action_ids: Iterable[str] | None = None
    ) -> None:
        """Reject pending actions (all, or the given ids) without running them."""

    @abstractmethod
    def update_secrets(self, secrets: Mapping[str, SecretValue]) -> None:
        """Add secrets the agent's commands may use."""

    @abstractmethod
    def pause(self) -> None:
        """Ask the agent to pause between steps (from any thread)."""

    @abstractmethod
    def interrupt(self) -> None:
        """Stop now, from any thread: abandon the LLM call and the running command; the
        conversation pauses, and `run()` continues it later."""

    @abstractmethod
    def set_title(self, title: str) -> None:
        """Rename the conversation: its one writer of `state.title`, which notifies the
        callbacks. ValueError for an empty title."""

    @abstractmethod
    def close(self) -> None:
        """Release resources; idempotent."""

    @abstractmethod
    def generate_title(self, llm: LLM | None = None, max_length: int = 50) -> str:
        """A title from the first user message; ValueError if there is none."""

    @abstractmethod
    def ask_agent(self, question: str) -> str:
        """Answer a side question without recording anything (thread-safe)."""

    @abstractmethod
    def condense(self, focus: str | None = None) -> None:
        """Force condensation of the history; ValueError without a suitable condenser.

        `focus` tells a summarizing condenser what to keep above all.
        """

    @abstractmethod
    def execute_tool(self, tool_name: str, action: Action) -> Observation:
        """Run one tool directly, outside the agent loop; KeyError for an unknown tool."""

    @property
    def sandbox(self) -> SandboxConfig | None:
        """How the tools are confined (None: not by this process; a remote agent's tools
        run where its server runs them)."""
        return None

    def set_sandbox(
        self,
        config: SandboxConfig | None,
        *,
        private_paths: Sequence[str] = (),
        protected_paths: Sequence[str] = (),
    ) -> None:
        """Confine the agent's tools from their next action on (None: no sandbox).

        `private_paths`: the application's own files (settings, saved conversations, logs,
        keys), out of the agent's reach in every mode, the sandbox off too; `protected_paths`:
        its files the agent may read but never change. NotImplementedError where this process
        does not run the tools."""
        raise NotImplementedError(
            f"{type(self).__name__} runs its tools elsewhere: ohtui cannot sandbox them here"
        )

    def check_sandbox(self) -> str | None:
        """Start the agent's shell in its sandbox once: None when it starts (or there is no
        sandbox here), else why it cannot, in words."""
        return None

    def approve_outside_sandbox(self, action_ids: Iterable[str]) -> None:
        """Let these waiting actions run outside the sandbox, once each. ValueError where
        there is no sandbox to run them outside of."""
        raise ValueError(f"{type(self).__name__} has no sandbox to run actions outside of")

    def outside_sandbox_matters(self, action: ActionEvent) -> bool:
        """Whether running this action outside the sandbox would change anything (so a
        front end offers it): a command while the sandbox confines the shell, or an edit
        that the sandbox alone refuses. False where there is no sandbox here."""
        return False

    # --- the conversation tree ----------------------------------------------------------

    @abstractmethod
    def fork(
        self,
        *,
        conversation_id: ConversationID | None = None,
        agent: AgentBase | None = None,
        title: str | None = None,
        tags: dict[str, str] | None = None,
        reset_metrics: bool = True,
        from_event_id: EventID | None = None,
    ) -> BaseConversation:
        """A new conversation with a copy of this one's events (all of them, or with
        `from_event_id` the branch up to it, made its HEAD), its own id, title and tags, and
        (unless `reset_metrics` is False) fresh metrics; it starts idle. ValueError for an
        unknown `from_event_id` or a `conversation_id` already taken."""

    @abstractmethod
    def navigate_to(self, event_id: EventID | None) -> None:
        """Move HEAD (`state.leaf_event_id`) to an event of this conversation (None: empty):
        the agent continues from there; every branch stays. ValueError for an unknown id."""

    # --- checkpoints of the workspace ----------------------------------------------------

    def list_checkpoints(self) -> list[CheckpointEvent]:
        """The workspace's checkpoints, newest first: one before each action that may have
        changed it, and one before each restore ([] where there are none)."""
        return []

    def undo_checkpoint(self) -> CheckpointEvent | None:
        """The checkpoint an undo restores: from before the newest action not undone yet."""
        return None

    def checkpoint_changes(self, checkpoint_id: str) -> list[FileChangeRecord]:
        """The files restoring the checkpoint would change now (a 4+ character prefix of
        its id is enough). CheckpointError when there is no such checkpoint."""
        raise CheckpointError(f"{type(self).__name__} keeps no checkpoints")

    def checkpoint_diff(self, checkpoint_id: str) -> str:
        """What restoring the checkpoint would change now, as a unified diff."""
        raise CheckpointError(f"{type(self).__name__} keeps no checkpoints")

    def restore_checkpoint(self, checkpoint_id: str | None = None) -> CheckpointRestoreEvent:
        """Make the workspace as it was at the checkpoint (None: undo the newest action not
        undone yet). The present is checkpointed first, so the restore can be undone; the
        agent is told which files changed. Never while the agent runs (CheckpointError)."""
        raise CheckpointError(f"{type(self).__name__} keeps no checkpoints")

    @staticmethod
    def get_persistence_dir(
        persistence_base_dir: str | Path, conversation_id: ConversationID
    ) -> str:
        """The conversation's own directory under a base directory, as a normalised string."""
        return str(Path(persistence_base_dir).expanduser().resolve() / conversation_id.hex)

    @staticmethod
    def compose_callbacks(
        callbacks: Iterable[ConversationCallbackType],
    ) -> ConversationCallbackType:
        """One callback calling each of `callbacks` in order. As in the SDK, one that raises
        stops the chain and its exception reaches the caller (a LocalConversation's run then
        ends in ERROR); wrap a listener that must never stop anything in
        `callbacks.logging_failures`."""
        chain = list(callbacks)

        def composed(event: Event) -> None:
            for callback in chain:
                callback(event)

        return composed
