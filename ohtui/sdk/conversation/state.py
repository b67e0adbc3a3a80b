"""ConversationState: everything about a conversation except its events, saved as it changes."""

from __future__ import annotations

import json
import logging
import re
import shutil
import threading
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Self

from pydantic import ConfigDict, Field, PrivateAttr, SerializeAsAny, ValidationError

from ohtui.sdk.agent.base import DEFAULT_BUILT_IN_NAMES, AgentBase, check_resumable
from ohtui.sdk.agent.conversation_contract import ConversationExecutionStatus
from ohtui.sdk.context.view import View
from ohtui.sdk.conversation.branch import Branch
from ohtui.sdk.conversation.branch_view import BranchView
from ohtui.sdk.conversation.event_store import EventLog
from ohtui.sdk.conversation.exceptions import (
    ConversationNotFoundError,
    ConversationReadOnlyError,
    PersistenceError,
)
from ohtui.sdk.conversation.lease import ConversationLease
from ohtui.sdk.conversation.pending_calls import unanswered_tool_calls
from ohtui.sdk.conversation.secret_registry import SecretRegistry
from ohtui.sdk.conversation.stats import ConversationStats
from ohtui.sdk.conversation.store import LOCK_TIMEOUT_SECONDS, ConversationStore
from ohtui.sdk.conversation.types import ConversationCallbackType, ConversationID
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.conversation_error import ConversationErrorEvent
from ohtui.sdk.event.conversation_state import ConversationStateUpdateEvent
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.types import ROOT_PARENT_ID, EventID
from ohtui.sdk.plugins.types import ResolvedPluginSource
from ohtui.sdk.sandbox import Sandbox
from ohtui.sdk.security.analyzer import SecurityAnalyzerBase
from ohtui.sdk.security.confirmation_policy import ConfirmationPolicyBase, NeverConfirm
from ohtui.sdk.utils.cipher import Cipher
from ohtui.sdk.utils.fifo_lock import FIFOLock
from ohtui.sdk.utils.models import FastPrivateModel
from ohtui.sdk.utils.valid_text import valid_data, valid_model
from ohtui.sdk.workspace.local import BaseWorkspace

logger = logging.getLogger(__name__)

CLOSE_FLUSH_TIMEOUT = LOCK_TIMEOUT_SECONDS
"""Seconds `close` waits for the events still being written."""


class ConversationState(FastPrivateModel):
    """The conversation's saved state; assigning a field saves it and notifies listeners."""

    model_config = ConfigDict(defer_build=True, extra="forbid", validate_assignment=False)

    id: ConversationID = Field(description="Unique conversation id.")
    agent: SerializeAsAny[AgentBase] = Field(description="The agent running the conversation.")
    workspace: SerializeAsAny[BaseWorkspace] = Field(description="Where the tools work.")
    persistence_dir: str | None = Field(
        default=None, description="This conversation's own directory; None = not persisted."
    )
    max_iterations: int = Field(default=500, gt=0, description="Agent steps allowed per run.")
    stuck_detection: bool = True
    execution_status: ConversationExecutionStatus = ConversationExecutionStatus.IDLE
    confirmation_policy: SerializeAsAny[ConfirmationPolicyBase] = Field(
        default_factory=NeverConfirm, description="Which actions wait for the user."
    )
    security_analyzer: SerializeAsAny[SecurityAnalyzerBase] | None = Field(
        default=None, description="Rates each action's risk before the policy decides."
    )
    activated_knowledge_skills: list[str] = Field(
        default_factory=list, description="Knowledge skills recalled so far (each once)."
    )
    resolved_plugins: list[ResolvedPluginSource] | None = Field(
        default=None,
        description="The plugins loaded, each pinned to its commit: a resume loads the same.",
    )
    blocked_actions: dict[str, str] = Field(
        default_factory=dict, description="Actions blocked by PreToolUse hooks, by action id."
    )
    blocked_messages: dict[str, str] = Field(
        default_factory=dict, description="Messages blocked by UserPromptSubmit hooks, by id."
    )
    stats: ConversationStats = Field(default_factory=ConversationStats)
    secret_registry: SecretRegistry = Field(
        default_factory=SecretRegistry,
        description="Secrets for commands; saved redacted, or encrypted with a cipher.",
    )
    agent_state: dict[str, Any] = Field(
        default_factory=dict, description="Tools' and agent's own saved data (assign to save)."
    )
    title: str | None = Field(default=None, description="A short title for listings.")
    tags: dict[str, str] = Field(
        default_factory=dict, description="User-defined key-value tags (a fork's title too)."
    )
    leaf_event_id: EventID | None = Field(
        default=None,
        description="HEAD of the conversation tree: the parent of the next event appended. "
        "None: an empty tree, or (unless head_is_empty) the newest event of a log older "
        "than the tree. Moving it (navigate_to) re-roots the active branch.",
    )
    head_is_empty: bool = Field(
        default=False, description="Whether HEAD was emptied on purpose (navigate_to(None))."
    )

    _events: EventLog = PrivateAttr(default_factory=EventLog)
    _store: ConversationStore | None = PrivateAttr(default=None)
    _lease: ConversationLease | None = PrivateAttr(default=None)
    _read_only: bool = PrivateAttr(default=False)
    _reopened: bool = PrivateAttr(default=False)
    _closed: bool = PrivateAttr(default=False)
    _letting_go: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _key: int | None = PrivateAttr(default=None)
    _lock: FIFOLock = PrivateAttr(default_factory=FIFOLock)
    _on_state_change: ConversationCallbackType | None = PrivateAttr(default=None)
    _autosave_enabled: bool = PrivateAttr(default=False)
    _stats_dirty: bool = PrivateAttr(default=False)
    _cipher: Cipher | None = PrivateAttr(default=None)
    _sandbox: Sandbox | None = PrivateAttr(default=None)
    _outside_sandbox: set[str] = PrivateAttr(default_factory=set)
    _branch: tuple[EventID | None, Branch] | None = PrivateAttr(default=None)
    """The active branch and the leaf it ends at, in one attribute (read and replaced
    whole: a reader on another thread never pairs a leaf with another branch)."""
    _view: BranchView = PrivateAttr(default_factory=BranchView)

    # --- creation and resume -------------------------------------------------------------

    @classmethod
    def create(
        cls,
        id: ConversationID,
        agent: AgentBase,
        workspace: BaseWorkspace,
        persistence_dir: str | None = None,
        max_iterations: int = 500,
        stuck_detection: bool = True,
        cipher: Cipher | None = None,
        read_only: bool = False,
        exclusive: bool = False,
    ) -> Self:
        """Create a new conversation state, or resume the one saved under `persistence_dir`.

        A persisted state holds the conversation's lease until `close()`: while another
        process has it open, ConversationLockedError names the holder. In this process a
        later open takes it over from a state that is idle (no thread holds its lock), which
        saves what it had pending and turns read-only: its writes then raise
        ConversationReadOnlyError saying it was opened again. An `exclusive` state (a
        LocalConversation's: it runs tools) is never taken over; a later open is refused,
        as it is while a thread uses the state. `read_only` takes no lease and opens a saved
        conversation (else ConversationNotFoundError) that refuses every change.

        `persistence_dir` is the conversation's own directory (made here; its parent holds
        the database); one named for another conversation id is a ValueError naming both.
        Secrets are saved encrypted with `cipher`, or redacted without one. On resume the
        saved status, stuck_detection, stats, title, policy, blocked items, agent_state and
        (with the same cipher) secrets come back;
        the given agent replaces the saved one (its LLM and prompts may change) but it must
        still have every tool the conversation used: ValueError names any that is missing.
        Events are not read until they are needed.
        """
        if persistence_dir is None:
            logger.warning(
                "No persistence_dir provided: conversation %s is kept in memory only and is "
                "gone once closed. Pass persistence_dir to save it.",
                id.hex,
            )
            state = cls(
                id=id,
                agent=agent,
                workspace=workspace,
                max_iterations=max_iterations,
                stuck_detection=stuck_detection,
            )
            state._cipher = cipher
            state._autosave_enabled = True
            return state
        _check_directory_is_for(persistence_dir, id)
        store = ConversationStore(Path(persistence_dir).parent, read_only=read_only)
        lease: ConversationLease | None = None
        try:
            if not read_only:  # taken before reading: what is read stays true while it is held
                lease = store.lease(id.hex, take_over=True)
            stored = store.load(id.hex)
            if stored is None and read_only:
                raise ConversationNotFoundError(
                    f"No saved conversation {id.hex} in {store} to open read-only."
                )
            if stored is None:
                state = cls(
                    id=id,
                    agent=agent,
                    workspace=workspace,
                    persistence_dir=persistence_dir,
                    max_iterations=max_iterations,
                    stuck_detection=stuck_detection,
                )
                state._cipher = cipher
                key = store.create(id.hex, state._dump(), state._summary())
            else:
                state = cls._restore(stored.state_json, id, agent, store, cipher)
                state._restore_head(stored.leaf, store, stored.key)
                state._cipher = cipher
                state.workspace = workspace
                state.persistence_dir = persistence_dir
                state.max_iterations = max_iterations
                key = stored.key
            if not read_only:
                _make_directory(persistence_dir)
        except BaseException:
            store.close()
            if lease is not None:
                lease.release()
            raise
        state._store, state._key, state._lease = store, key, lease
        state._events = EventLog(store, key, pending_state=state._take_pending_state)
        state._autosave_enabled = True
        state._read_only = read_only
        if stored is not None and not read_only:
            state._save()
        if lease is not None and not exclusive:
            lease.allow_takeover(state._let_reopen_take_over)
        return state

    @classmethod
    def _restore(
        cls,
        state_json: str,
        id: ConversationID,
        agent: AgentBase,
        store: ConversationStore,
        cipher: Cipher | None,
    ) -> Self:
        try:
            data = json.loads(state_json)
            saved_agent = data.pop("agent", {}) or {}
            data["agent"] = agent
            state = cls.model_validate(data, context={"cipher": cipher})
        except (ValueError, ValidationError) as exc:
            raise PersistenceError(
                f"The saved state of conversation {id} in {store} cannot be read ({exc}). "
                "It may come from an incompatible version of ohtui."
            ) from exc
        if state.id != id:
            raise ValueError(f"saved conversation id {state.id} does not match {id}")
        check_resumable(
            agent,
            str(saved_agent.get("kind", type(agent).__name__)),
            [str(t.get("name")) for t in saved_agent.get("tools", []) if isinstance(t, dict)],
            saved_agent.get("include_default_tools", DEFAULT_BUILT_IN_NAMES),
        )
        return state

    def _restore_head(self, stored_leaf: str | None, store: ConversationStore, key: int) -> None:
        """HEAD as the store recorded it with the last event appended or the last move; one
        naming no event of the log (a damaged file) gives way to the newest event, so the
        whole conversation still opens."""
        if stored_leaf is not None and store.event_index(key, stored_leaf) is None:
            logger.warning(
                "conversation %s: its saved HEAD names event %r, which is not in its log; "
                "HEAD is its newest event instead",
                self.id.hex,
                stored_leaf,
            )
            stored_leaf = None
        state = object.__setattr__  # not a change: what was saved, read back
        state(self, "leaf_event_id", stored_leaf)  # None: emptied, or the newest event
        if stored_leaf is not None:
            state(self, "head_is_empty", False)

    # --- saving and change notification --------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_") or name not in type(self).model_fields:
            super().__setattr__(name, value)
            return
        if getattr(self, "_read_only", False):
            raise self.read_only_error(f"change its {name}")
        old = getattr(self, name, None)
        value = valid_data(value)  # a title, a tool's saved data: always savable
        super().__setattr__(name, value)
        if getattr(self, "_autosave_enabled", False):
            self._save()  # (HEAD with it: see _save)
            if old != value and name not in _HEAD_FIELDS:  # HEAD moves with every event
                self._notify(name, value)

    def set_on_state_change(self, callback: ConversationCallbackType | None) -> None:
        """Call `callback` with a ConversationStateUpdateEvent whenever a field changes (a
        failing callback is logged: the change stands)."""
        self._on_state_change = callback

    def save_secrets(self) -> None:
        """Save after the secret registry changed in place (redacted, or encrypted)."""
        self._save()

    def notify_stats_changed(self) -> None:
        """Announce `stats` after the LLM metrics inside it were updated in place.

        The save rides along with the next event appended (the agent always records one
        after an LLM call), saving a disk sync per step; `close` saves what is left.
        """
        self._stats_dirty = True
        self._notify("stats", self.stats)

    def _take_pending_state(self) -> tuple[str, dict[str, Any]] | None:
        if not self._stats_dirty:
            return None
        self._stats_dirty = False
        return self._dump(), self._summary()

    def _notify(self, key: str, value: Any) -> None:
        if self._on_state_change is None:
            return
        try:
            self._on_state_change(ConversationStateUpdateEvent(key=key, value=value))
        except Exception:  # the change is made and saved: a listener's bug must not undo it
            logger.exception("state change listener %r failed", self._on_state_change)

    def _dump(self) -> str:
        return self.model_dump_json(context={"cipher": self._cipher})

    def _summary(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "status": self.execution_status.value,
            "workspace": self.workspace.working_dir,
            "model": getattr(getattr(self.agent, "llm", None), "model", None),
        }

    @property
    def read_only(self) -> bool:
        """Whether this state was opened read-only (it refuses every change)."""
        return self._read_only

    def read_only_error(self, what: str) -> ConversationReadOnlyError:
        """The error for trying to `what` ("send a message") on a read-only conversation."""
        if self._reopened:
            return ConversationReadOnlyError(
                f"Conversation {self.id.hex} was opened again in this process, so this older "
                f"object of it cannot {what}: use the one the later open returned."
            )
        return ConversationReadOnlyError(
            f"Conversation {self.id.hex} is open read-only here, so it cannot {what}. Open it "
            "normally once no other ohtui has it open."
        )

    def _let_reopen_take_over(self) -> bool:
        """Called by the lease when this process opens the conversation again: unless a
        thread holds the lock (running or writing), save what is pending and turn read-only.
        """
        if not self._lock.acquire(blocking=False):
            return False
        try:
            with self._letting_go:  # against close(): its last save comes first, or never
                if not self._closed:
                    self._events.flush()  # what it appended is on disk before the reopen reads
                if not self._closed and self._stats_dirty:
                    self._save()
                self._reopened = self._read_only = True
                if self._store is not None:
                    self._store.refuse_writes(self.read_only_error("save anything").args[0])
            return True
        finally:
            self._lock.release()

    def _save(self) -> None:
        if self._read_only:
            raise self.read_only_error("save its state")
        self._stats_dirty = False
        if self._store is not None and self._key is not None:
            self._events.flush()  # the states queued with events are older: written first
            # HEAD goes with the state (head_is_empty is in it): one write, never half moved.
            self._store.save_state(self._key, self._dump(), self._summary(), self.leaf_event_id)

    # --- events and derived views --------------------------------------------------------

    @property
    def events(self) -> EventLog:
        """The conversation's event log."""
        return self._events

    def append_event(self, event: Event, durable: bool = True) -> Event:
        """Record `event` for good, on the active branch, and return it as recorded: when
        persisted, saved before this returns, or with `durable` False written behind (see
        EventLog.flush).

        Every event recorded passes here: one without a `parent_id` gets HEAD as its parent,
        and it becomes HEAD (but a state-sync artifact, which is no node of the tree). Its
        text is made valid here too: one holding a lone surrogate (a file name that is not
        UTF-8, a "\\ud800" from a model or a server) is recorded, and returned, with U+FFFD in
        its place, never refused by the store."""
        event = valid_model(event)
        if event.parent_id is None:
            parent = self._resolve_active_leaf()
            if parent is None and len(self._events) > 0:
                parent = ROOT_PARENT_ID  # a new root over an emptied HEAD, not the last event
            if parent is not None:
                event = event.model_copy(update={"parent_id": parent})
        node = not isinstance(event, ConversationStateUpdateEvent)
        self._events.append(event, durable, head=node)
        if node:
            cached = self._branch
            if cached is not None and event.parent_id == cached[0]:
                cached[1].grow(self._events.get_index(event.id))
                self._branch = (event.id, cached[1])
            else:
                self._branch = None
            setattr_ = object.__setattr__  # HEAD is saved with the event, in the same write
            setattr_(self, "leaf_event_id", event.id)
            setattr_(self, "head_is_empty", False)
        return event

    def _resolve_active_leaf(self) -> EventID | None:
        """HEAD, resolved: `leaf_event_id`; None for an emptied HEAD; for a log older than
        the tree, its newest event that is a node of the tree (not a state-sync artifact or
        a conversation error written after it)."""
        if self.leaf_event_id is not None:
            return self.leaf_event_id
        if self.head_is_empty or len(self._events) == 0:
            return None
        for index in range(len(self._events) - 1, -1, -1):
            event = self._events[index]
            if not isinstance(event, ConversationStateUpdateEvent | ConversationErrorEvent):
                return event.id
        return None

    def active_branch(self, limit: int | None = None) -> Branch:
        """The events of the active branch (root to HEAD), root first: what the agent
        remembers and the screen shows (the log also keeps abandoned branches). With
        `limit`, only its last `limit` events."""
        leaf = self._resolve_active_leaf()
        cached = self._branch
        if cached is not None and cached[0] == leaf:
            branch = cached[1]
        else:
            branch = Branch(self._events, self._events.branch_indexes(leaf))
            self._branch = (leaf, branch)
        return branch if limit is None else branch.last(limit)

    def move_head(self, event_id: EventID | None) -> None:
        """Make `event_id` HEAD (None: an empty HEAD), saved in one write; the next event
        appended is its child. The caller checks that the event is in the log."""
        if self._read_only:
            raise self.read_only_error("move its HEAD")
        setattr_ = object.__setattr__  # both fields, then one save (see _save)
        setattr_(self, "leaf_event_id", event_id)
        setattr_(self, "head_is_empty", event_id is None)
        if self._autosave_enabled:
            self._save()

    @property
    def view(self) -> View:
        """What the model sees of the active branch: its View (condensations applied,
        blocked messages left out), kept up to date as events are appended and built again
        when HEAD moves to another branch. Read it again after `rebuild_view()`."""
        return self._view.current(self.active_branch(), self.blocked_messages)

    def rebuild_view(self) -> None:
        """Build `view` again from the active branch's root (after a resume, a fork or a
        move of HEAD it is built on its first read anyway). On an error the old one stays."""
        self._view.rebuild(self.active_branch(), self.blocked_messages)

    @property
    def sandbox(self) -> Sandbox | None:
        """The sandbox the tools confine the agent to; None or inactive: none."""
        return self._sandbox

    def set_sandbox(self, sandbox: Sandbox | None) -> None:
        """Confine the tools to `sandbox` from their next action on (not saved)."""
        self._sandbox = sandbox

    def runs_outside_sandbox(self, action_id: str | None) -> bool:
        """Whether the user approved this action to run outside the sandbox."""
        return action_id is not None and action_id in self._outside_sandbox

    def allow_outside_sandbox(self, action_ids: Iterable[str]) -> None:
        """Let these actions run outside the sandbox, each once (not saved)."""
        self._outside_sandbox.update(action_ids)

    @property
    def env_observation_persistence_dir(self) -> str | None:
        """Where tools save large outputs; None when the conversation is not persisted."""
        return str(Path(self.persistence_dir) / "observations") if self.persistence_dir else None

    @staticmethod
    def get_unmatched_actions(events: Sequence[Event]) -> list[ActionEvent]:
        """Actions of the latest LLM response waiting to run: no observation, rejection or
        error answers them yet. A call that cannot run (an unknown tool, bad arguments) is
        answered by an error and never runs, so it is never among them."""
        return [a for a in unanswered_tool_calls(events) if a.action is not None]

    # --- hook-blocked actions and messages -----------------------------------------------

    def block_action(self, action_id: str, reason: str) -> None:
        """Persistently record a hook-blocked action."""
        self.blocked_actions = {**self.blocked_actions, action_id: reason}

    def pop_blocked_action(self, action_id: str) -> str | None:
        """Remove and return a hook-blocked action's reason, if present."""
        if action_id not in self.blocked_actions:
            return None
        remaining = dict(self.blocked_actions)
        reason = remaining.pop(action_id)
        self.blocked_actions = remaining
        return reason

    def block_message(self, message_id: str, reason: str) -> None:
        """Persistently record a hook-blocked user message."""
        self.blocked_messages = {**self.blocked_messages, message_id: reason}

    def pop_blocked_message(self, message_id: str) -> str | None:
        """Remove and return a hook-blocked message's reason, if present."""
        if message_id not in self.blocked_messages:
            return None
        remaining = dict(self.blocked_messages)
        reason = remaining.pop(message_id)
        self.blocked_messages = remaining
        return reason

    # --- the lock ------------------------------------------------------------------------

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Acquire the state lock (re-entrant). Returns whether it was acquired."""
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        """Release the lock; RuntimeError if this thread does not hold it."""
        self._lock.release()

    def locked(self) -> bool:
        """Whether any thread holds the lock."""
        return self._lock.locked()

    def owned(self) -> bool:
        """Whether the calling thread holds the lock."""
        return self._lock.owned()

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    # --- end of life ---------------------------------------------------------------------

    def close(self) -> None:
        """Save what is pending, close the store connection and release the lease."""
        try:
            if self._store is not None:
                with self._letting_go:
                    self._closed = True
                    if not self._read_only:
                        self._flush_for_close()
                    if self._stats_dirty and not self._read_only:
                        self._save()
                self._store.close()
        finally:
            if self._lease is not None:
                self._lease.release()

    def _flush_for_close(self) -> None:
        try:
            self._events.flush(CLOSE_FLUSH_TIMEOUT)
        except Exception:  # already raised to the engine at the write after it failed
            logger.exception("conversation %s: events could not be written", self.id.hex)

    def delete_persisted(self) -> None:
        """Delete the saved conversation, its events and its directory."""
        if self._store is not None:
            self._flush_for_close()  # nothing is written after the delete
            self._store.delete(self.id.hex)
        if self.persistence_dir:
            shutil.rmtree(self.persistence_dir, ignore_errors=True)


_HEAD_FIELDS = frozenset({"leaf_event_id", "head_is_empty"})
"""Fields moved with every event appended: saved, never announced to listeners."""


def _check_directory_is_for(persistence_dir: str, id: ConversationID) -> None:
    """A directory named after another conversation id belongs to that conversation."""
    name = Path(persistence_dir).name
    if re.fullmatch(r"[0-9a-f]{32}", name) and name != id.hex:
        raise ValueError(
            f"Conversation ID mismatch: '{persistence_dir}' is the directory of conversation "
            f"{name}, not of {id.hex}. Open {name} with its own id, or give conversation "
            f"{id.hex} its own directory (BaseConversation.get_persistence_dir)."
        )


def _make_directory(persistence_dir: str) -> None:
    try:
        Path(persistence_dir).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise PersistenceError(
            f"Cannot create the conversation directory '{persistence_dir}': "
            f"{exc.strerror or exc}. Fix its permissions or choose another persistence "
            "directory."
        ) from exc


def new_conversation_id() -> ConversationID:
    """A fresh random conversation id."""
    return uuid.uuid4()
