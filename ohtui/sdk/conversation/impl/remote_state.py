"""RemoteState: a remote conversation's state, read from a cache the event socket keeps current.

The cache is the server's ConversationInfo (from the create or attach call); a `full_state`
frame updates it wholesale, a per-field frame sets one key, `refresh_from_server()` GETs it
again. Properties parse from the cache on each read and never call the server.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ohtui.sdk.conversation.branch import Branch
from ohtui.sdk.conversation.impl.rest import request
from ohtui.sdk.conversation.secret_registry import SecretRegistry
from ohtui.sdk.conversation.state import ConversationExecutionStatus, ConversationState
from ohtui.sdk.conversation.stats import ContextUsage, ConversationStats
from ohtui.sdk.event.conversation_state import FULL_STATE_KEY, ConversationStateUpdateEvent
from ohtui.sdk.sandbox import SandboxConfig
from ohtui.sdk.wire.extensions import POLICY_FIELD, SANDBOX_FIELD, SKILLS_FIELD
from ohtui.sdk.wire.state_in import analyzer_from_wire, policy_from_wire, stats_from_wire

if TYPE_CHECKING:
    from ohtui.sdk.agent.base import AgentBase
    from ohtui.sdk.context.skills.loaded import LoadedSkill
    from ohtui.sdk.conversation.impl.remote_events import RemoteEventsList
    from ohtui.sdk.conversation.types import ConversationID
    from ohtui.sdk.event.base import Event
    from ohtui.sdk.event.llm_convertible.action import ActionEvent
    from ohtui.sdk.event.types import EventID
    from ohtui.sdk.security.analyzer import SecurityAnalyzerBase
    from ohtui.sdk.security.confirmation_policy import ConfirmationPolicyBase
    from ohtui.sdk.workspace.remote import RemoteWorkspace


class RemoteState:
    """The state of a conversation on an agent server (the ConversationStateProtocol)."""

    def __init__(
        self,
        conversation_id: ConversationID,
        info: dict[str, Any],
        events: RemoteEventsList,
        agent: AgentBase,
        workspace: RemoteWorkspace,
    ) -> None:
        self._id = conversation_id
        self._info = dict(info)
        self._events = events
        self._agent = agent
        self._workspace = workspace
        self._lock = threading.RLock()
        self.secret_registry = SecretRegistry()
        """The secrets this client gave the server: what to mask in what it shows."""
        self._head_mark = len(events)
        """How many events were listed when the server last said where HEAD is: an event
        after them moved it (the server does not announce HEAD as it moves)."""

    # --- the cache -----------------------------------------------------------------------

    def apply_update(self, update: ConversationStateUpdateEvent) -> None:
        """Take a `full_state` snapshot or a per-field update into the cache."""
        with self._lock:
            if update.key == FULL_STATE_KEY:
                if isinstance(update.value, dict):
                    self._info.update(update.value)
                    if "leaf_event_id" in update.value:
                        self._head_mark = len(self._events)
            else:
                self._info[update.key] = update.value
                if update.key == "leaf_event_id":  # HEAD moved (navigated by any client)
                    self._head_mark = len(self._events)

    def refresh_from_server(self) -> dict[str, Any]:
        """GET the conversation again and cache it; return it."""
        info = request(self._workspace, "GET", f"/api/conversations/{self._id}").json()
        return self.take_info(info)

    def take_info(self, info: dict[str, Any]) -> dict[str, Any]:
        """Cache a ConversationInfo the server sent (HEAD as it says, now); return it."""
        with self._lock:
            self._info.update(info)
            self._head_mark = len(self._events)
            return dict(self._info)

    def _get(self, key: str) -> Any:
        with self._lock:
            if key not in self._info:
                raise RuntimeError(f"'{key}' missing in conversation info")
            return self._info[key]

    def _get_optional(self, key: str, default: Any = None) -> Any:
        with self._lock:
            return self._info.get(key, default)

    def use_agent(self, agent: AgentBase) -> None:
        """The agent the server now runs (after a switch of its LLM)."""
        with self._lock:
            self._agent = agent

    @property
    def info(self) -> dict[str, Any]:
        """A copy of the cached ConversationInfo."""
        with self._lock:
            return dict(self._info)

    # --- the state protocol --------------------------------------------------------------

    @property
    def id(self) -> ConversationID:
        """The conversation id."""
        return self._id

    @property
    def events(self) -> RemoteEventsList:
        """The events, as the server lists them."""
        return self._events

    @property
    def execution_status(self) -> ConversationExecutionStatus:
        """Where the run stands, as the server last said."""
        return ConversationExecutionStatus(self._get("execution_status"))

    @property
    def confirmation_policy(self) -> ConfirmationPolicyBase:
        """Which actions wait for the user, as the server has it: ohtui's whole policy where
        the server keeps it (`ohtui serve`), else the protocol's `confirmation_policy`."""
        with self._lock:
            ours = self._info.get(POLICY_FIELD)
            return policy_from_wire(
                ours if ours is not None else self._info.get("confirmation_policy")
            )

    @property
    def reported_sandbox(self) -> SandboxConfig | None:
        """How the server says it confines the agent's commands (None: it does not say)."""
        value = self._get_optional(SANDBOX_FIELD)
        if not isinstance(value, dict):
            return None
        try:
            return SandboxConfig(mode=value.get("mode"), network=bool(value.get("network")))
        except ValueError:  # a mode we do not know
            return None

    @property
    def reported_sandbox_problem(self) -> str | None:
        """Why the server runs the agent's commands without the sandbox it was asked for, as
        it says (None: it is in force, or the server does not say)."""
        value = self._get_optional(SANDBOX_FIELD)
        problem = value.get("problem") if isinstance(value, dict) else None
        return problem if isinstance(problem, str) and problem else None

    @property
    def reported_skills(self) -> list[LoadedSkill] | None:
        """The skills the agent's context got on the server, as it says (None: it does not
        say; an OpenHands server never does)."""
        value = self._get_optional(SKILLS_FIELD)
        if not isinstance(value, list):
            return None
        from ohtui.sdk.context.skills.loaded import LoadedSkill

        return [skill for item in value if (skill := LoadedSkill.from_json(item)) is not None]

    @property
    def security_analyzer(self) -> SecurityAnalyzerBase | None:
        """The analyzer rating actions on the server (None: none, or one we lack)."""
        return analyzer_from_wire(self._get_optional("security_analyzer"))

    @property
    def stats(self) -> ConversationStats:
        """Cost and tokens per LLM, with the agent model's context use after its last call."""
        stats = stats_from_wire(self._get_optional("stats"))
        if stats.context is None:
            metrics = stats.usage_to_metrics.get(self._agent.llm.usage_id)
            latest = metrics.latest_token_usage if metrics is not None else None
            if latest is not None:
                stats.context = ContextUsage(
                    tokens=latest.prompt_tokens + latest.completion_tokens,
                    window=latest.context_window or self._agent.llm.max_input_tokens,
                    model=self._agent.llm.model,
                )
        return stats

    @property
    def agent(self) -> AgentBase:
        """The agent this client configured (the server's copy has its key redacted)."""
        return self._agent

    @property
    def workspace(self) -> RemoteWorkspace:
        """The workspace on the server."""
        return self._workspace

    @property
    def working_dir(self) -> str:
        """The directory the agent works in, as the server resolved it."""
        workspace = self._get_optional("workspace")
        if isinstance(workspace, dict) and isinstance(workspace.get("working_dir"), str):
            return str(workspace["working_dir"])
        return self._workspace.working_dir

    @property
    def persistence_dir(self) -> str | None:
        """Where the server keeps the conversation (a path on the server)."""
        value = self._get_optional("persistence_dir")
        return str(value) if value else None

    @property
    def title(self) -> str | None:
        """The conversation's title on the server."""
        value = self._get_optional("title")
        return str(value) if value else None

    @property
    def max_iterations(self) -> int:
        """Agent steps allowed per run on the server."""
        return int(self._get_optional("max_iterations", 500))

    @property
    def stuck_detection(self) -> bool:
        """Whether the server detects a stuck agent."""
        return bool(self._get_optional("stuck_detection", True))

    @property
    def activated_knowledge_skills(self) -> list[str]:
        """Knowledge skills recalled so far."""
        return list(self._get_optional("activated_knowledge_skills") or [])

    @property
    def blocked_messages(self) -> dict[str, str]:
        """Messages blocked by hooks, by id."""
        return dict(self._get_optional("blocked_messages") or {})

    @property
    def read_only(self) -> bool:
        """A remote conversation is never opened read-only."""
        return False

    # --- the conversation tree ------------------------------------------------------------

    @property
    def leaf_event_id(self) -> EventID | None:
        """HEAD: the newest event of the tree delivered since the server last said where
        HEAD is, else where it said (a server older than the tree: the newest event)."""
        with self._lock:
            events = self._events
            for index in range(len(events) - 1, self._head_mark - 1, -1):
                if _is_node(events[index]):
                    return events[index].id
            if "leaf_event_id" in self._info:
                leaf = self._info.get("leaf_event_id")
                return str(leaf) if leaf else None
            for index in range(min(self._head_mark, len(events)) - 1, -1, -1):
                if _is_node(events[index]):
                    return events[index].id
            return None

    @property
    def head_is_empty(self) -> bool:
        """Whether HEAD was emptied on purpose (navigate_to(None))."""
        return self.leaf_event_id is None and len(self._events) > 0

    def active_branch(self, limit: int | None = None) -> Branch:
        """The events from the root to HEAD, root first (the last `limit` with a limit)."""
        return Branch(self._events, self._events.branch_indexes(self.leaf_event_id, limit))

    @staticmethod
    def get_unmatched_actions(events: Sequence[Event]) -> list[ActionEvent]:
        """Actions of the latest LLM response waiting to run (see ConversationState)."""
        return ConversationState.get_unmatched_actions(events)


def _is_node(event: Event) -> bool:
    """Whether an event is a node of the tree (not a state-sync artifact)."""
    return not isinstance(event, ConversationStateUpdateEvent)
