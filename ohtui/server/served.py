"""One live conversation behind the server: its LocalConversation, run thread and frames.

Every engine event becomes an OpenHands frame for the hub; state changes become per-field
`ConversationStateUpdateEvent`s; streamed tokens become `StreamingDeltaEvent`s; every run
ends with a fresh `full_state` snapshot (after the terminal status), as OpenHands does.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterable
from typing import Any, Protocol

from ohtui.sdk.conversation.exceptions import ConversationRunError
from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
from ohtui.sdk.conversation.state import ConversationExecutionStatus
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.checkpoint import CheckpointRestoreEvent
from ohtui.sdk.event.conversation_state import ConversationStateUpdateEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.user_action import InterruptEvent
from ohtui.sdk.llm.message import Message
from ohtui.sdk.llm.streaming import LLMStreamChunk
from ohtui.sdk.wire.events_out import (
    OHTUI_FIELD_KINDS,
    event_to_wire,
    state_update_to_wire,
    streaming_delta,
)
from ohtui.sdk.wire.extensions import SANDBOX_FIELD, SKILLS_FIELD
from ohtui.server.confinement import SandboxStatus
from ohtui.server.errors import UnknownEventError
from ohtui.server.info import ServerRecord, state_to_wire, updates_to_wire

logger = logging.getLogger(__name__)


class Publish(Protocol):
    """Hub.publish: a frame for the conversation's subscribers (`ours`: with ohtui's fields;
    `frame` None: for those only)."""

    def __call__(
        self,
        conversation_id: uuid.UUID,
        frame: dict[str, Any] | None,
        ours: dict[str, Any] | None = None,
    ) -> None: ...


Status = ConversationExecutionStatus
_STOPPED = frozenset(
    {Status.PAUSED, Status.WAITING_FOR_CONFIRMATION, Status.FINISHED, Status.ERROR, Status.STUCK}
)
"""Statuses a run ends in."""


class ConflictError(Exception):
    """The request cannot be done in the conversation's current state (HTTP 409)."""


class Served:
    """A LocalConversation served over the wire."""

    def __init__(self, record: ServerRecord, publish: Publish) -> None:
        self.record = record
        self._publish = publish
        self.conversation: LocalConversation | None = None
        self._run_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._active = False
        self._stepping = False
        """Whether the engine is running (a run is `_active` until its closing full_state
        is sent, a moment longer)."""
        self._again = False
        self._retired = False
        self._restoring = False
        self.last_user_message_id: str | None = None
        self.sandbox: SandboxStatus | None = None
        """The sandbox in force (set before anything runs)."""
        self.fork_origin: tuple[str, str | None] | None = None
        """The conversation (id hex) and event it was forked from; None if not a fork."""

    def attach(self, conversation: LocalConversation) -> None:
        """Serve `conversation` (opened with `on_event` and `on_token` as callbacks)."""
        self.conversation = conversation
        self._note_last_user_message()

    def _note_last_user_message(self) -> None:
        """Take the newest user message of the active branch as the last one."""
        self.last_user_message_id = None
        for event in reversed(self.live.state.active_branch()):
            if isinstance(event, MessageEvent) and event.source == "user":
                self.last_user_message_id = event.id
                break

    @property
    def live(self) -> LocalConversation:
        """The conversation (RuntimeError before `attach`)."""
        if self.conversation is None:
            raise RuntimeError("the conversation is still opening")
        return self.conversation

    @property
    def id(self) -> uuid.UUID:
        """The conversation id."""
        return self.live.id

    # --- engine callbacks ----------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        """An engine event: to the subscribers as OpenHands JSON."""
        if self.conversation is None:
            return
        if isinstance(event, ConversationStateUpdateEvent):
            value = event.value
            data = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
            for key, wire in updates_to_wire(event.key, _plain(data)):
                self._publish(self.id, state_update_to_wire(key, wire))
            return
        frame_or_none = event_to_wire(event)
        ours = event_to_wire(event, ohtui_fields=True) if event.kind in OHTUI_FIELD_KINDS else None
        if frame_or_none is not None or ours is not None:
            self._publish(self.id, frame_or_none, ours)
        if isinstance(event, MessageEvent) and event.source == "user":
            self.last_user_message_id = event.id
            self._publish(self.id, state_update_to_wire("last_user_message_id", event.id))

    def on_token(self, chunk: LLMStreamChunk) -> None:
        """A streamed token: a StreamingDeltaEvent frame (not persisted)."""
        if self.conversation is None or not (chunk.content or chunk.reasoning_content):
            return
        self._publish(self.id, streaming_delta(chunk.content, chunk.reasoning_content))

    # --- state ---------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """ConversationInfo (also the full_state value)."""
        state = self.live.state
        # Not under the state's lock: a run holds it through each LLM call.
        try:
            data = state.model_dump(mode="json", exclude={"agent"})
        except RuntimeError:  # a dict changed size while being read: read it again
            data = state.model_dump(mode="json", exclude={"agent"})
        info = state_to_wire(data, self.record, origin=self.fork_origin)
        info["last_user_message_id"] = self.last_user_message_id
        info["leaf_event_id"] = head_of(self.live)
        info["head_is_empty"] = state.head_is_empty or len(state.events) == 0
        info[SANDBOX_FIELD] = self.sandbox.to_wire() if self.sandbox is not None else None
        info[SKILLS_FIELD] = self._skills()
        return info

    def _skills(self) -> list[dict[str, Any]]:
        """The skills the agent's context got, as SKILLS_FIELD reports them."""
        from ohtui.sdk.context.skills.loaded import loaded_skills

        conversation = self.live
        context = conversation.agent.agent_context
        return [s.to_json() for s in loaded_skills(context, conversation.workspace.working_dir)]

    def full_state_frame(self) -> dict[str, Any]:
        """A `full_state` ConversationStateUpdateEvent frame."""
        return state_update_to_wire("full_state", self.info())

    @property
    def status(self) -> Status:
        """The execution status."""
        return self.live.state.execution_status

    @property
    def running(self) -> bool:
        """Whether a run is going (until its closing full_state is sent)."""
        return self._active

    # --- actions -------------------------------------------------------------------------

    def send_message(self, message: Message, run: bool) -> None:
        """Add a user message; with `run`, start a run unless one is going. ConflictError
        once retired (the registry serves its replacement)."""
        self._check_serving()
        self.live.send_message(message)
        if run:
            self.start_run(conflict_ok=True)

    def start_run(self, conflict_ok: bool = False) -> bool:
        """Start a run on its own thread; ConflictError (or False) when one is going.

        With `conflict_ok`, a run that is ending runs once more, so a message sent as it
        ends is never left waiting.
        """
        with self._run_lock:
            self._check_serving()
            if self._restoring:
                raise ConflictError(
                    "The workspace is being restored to a checkpoint: try again in a moment."
                )
            if self._active:
                if conflict_ok:
                    self._again = True
                    return False
                raise ConflictError(
                    "Conversation already running. Wait for completion or pause first."
                )
            self._active = True
            self._stepping = True
            self._again = False
            self._thread = threading.Thread(
                target=self._run, name=f"serve-run-{self.id.hex[:8]}", daemon=True
            )
            self._thread.start()
            return True

    def _run(self) -> None:
        while True:
            try:
                self._autotitle()
                self.live.run()
            except ConversationRunError as exc:
                logger.info("conversation %s: run ended in error: %s", self.id.hex, exc)
            except Exception:
                logger.exception("conversation %s: run failed", self.id.hex)
            finally:
                with self._run_lock:
                    # Before the closing snapshot: a client that saw it may move HEAD at once.
                    self._stepping = False
                self._publish(self.id, self.full_state_frame())
            with self._run_lock:
                if not self._again:
                    self._active = False
                    return
                self._again = False
                self._stepping = True

    def _autotitle(self) -> None:
        """Title a new conversation before its first step, as OpenHands' `autotitle` does."""
        conversation = self.live
        if not self.record.autotitle or conversation.state.title:
            return
        try:
            conversation.set_title(conversation.generate_title())
        except ValueError as exc:  # no user message yet: the next run titles it
            logger.info("conversation %s: no title yet: %s", self.id.hex, exc)

    def wait_idle(self, timeout: float) -> bool:
        """Wait for the run thread to end; whether it did."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def interrupt(self) -> None:
        """Stop now; records an InterruptEvent; the run ends paused."""
        conversation = self.live
        event = InterruptEvent()
        conversation.state.append_event(event)
        self.on_event(event)
        if self.running:
            conversation.interrupt()
        else:
            conversation.pause()

    def respond_to_confirmation(
        self, accept: bool, reason: str, action_ids: Iterable[str] | None
    ) -> None:
        """Accept (run the pending actions) or reject (all, or those in `action_ids`)."""
        conversation = self.live
        state = conversation.state
        pending = [a.id for a in state.get_unmatched_actions(state.active_branch())]
        if not accept:
            conversation.reject_pending_actions(reason, action_ids=action_ids)
            if self.status is Status.IDLE and not state.get_unmatched_actions(
                state.active_branch()
            ):
                self._publish(self.id, self.full_state_frame())
            return
        if action_ids is not None:
            wanted = set(action_ids)
            if unknown := wanted - set(pending):
                raise ValueError(f"not pending: {', '.join(sorted(unknown))}")
            if undecided := [a for a in pending if a not in wanted]:
                raise ConflictError(
                    f"actions {', '.join(undecided)} are still undecided: reject them first, "
                    "or accept them too"
                )
        self.start_run(conflict_ok=True)

    def restore_checkpoint(self, checkpoint_id: str | None) -> CheckpointRestoreEvent:
        """Restore the workspace to a checkpoint (None: undo the newest action not undone
        yet); ConflictError while a run goes, and no run starts until it is done.
        CheckpointError from the conversation when it cannot be restored."""
        with self._run_lock:
            self._check_serving()
            if self._active:
                raise ConflictError(
                    "The agent is running: pause it, or wait for it to finish, before "
                    "restoring a checkpoint."
                )
            self._restoring = True
        try:
            return self.live.restore_checkpoint(checkpoint_id)
        finally:
            with self._run_lock:
                self._restoring = False

    def navigate_to(self, event_id: str | None) -> None:
        """Move HEAD to `event_id` (None: an empty HEAD) and tell the subscribers; the next
        message starts a sibling branch there. ConflictError while a run goes (and no run
        starts until it is done); UnknownEventError for an event not in the conversation."""
        with self._run_lock:
            self._check_serving()
            # A run whose status says it stopped is only ending: the move waits for it.
            if self._restoring or (self._stepping and self.status not in _STOPPED):
                raise ConflictError(
                    "The agent is running: pause it, or wait for it to finish, before moving "
                    "the conversation to another event."
                )
            if event_id is not None and event_id not in self.live.state.events:
                raise UnknownEventError(f"Unknown event_id: {event_id}")
            # Under the run lock: a run asked for meanwhile starts from the new HEAD.
            self.live.navigate_to(event_id)
            self._note_last_user_message()
        self._publish(self.id, state_update_to_wire("leaf_event_id", head_of(self.live)))

    def fork(
        self,
        conversation_id: uuid.UUID | None,
        title: str | None,
        tags: dict[str, str] | None,
        reset_metrics: bool,
        from_event_id: str | None,
    ) -> LocalConversation:
        """A fork of the conversation, saved beside it and open (without this server's
        callbacks: the registry reopens it to serve it). ConflictError once retired;
        UnknownEventError for an unknown `from_event_id` (events are never removed: checked
        first), ConversationIdTakenError for a taken id."""
        self._check_serving()
        if from_event_id is not None and from_event_id not in self.live.state.events:
            raise UnknownEventError(f"Unknown from_event_id: {from_event_id}")
        return self.live.fork(
            conversation_id=conversation_id,
            title=title,
            tags=tags,
            reset_metrics=reset_metrics,
            from_event_id=from_event_id,
        )

    def retire(self) -> None:
        """Close the conversation to reopen it another way; ConflictError while it runs
        (and no run starts here once this began). If closing fails, it serves on."""
        self._wait_out_closing_run()
        with self._run_lock:
            if self._active:
                raise ConflictError(
                    "Conversation is running: pause it, or wait for it to finish, before "
                    "switching its LLM."
                )
            self._active = True  # no run starts while it closes
        try:
            self.close()
        except BaseException:
            with self._run_lock:
                self._active = False
            raise
        with self._run_lock:
            self._retired = True

    def _wait_out_closing_run(self, timeout: float = 5.0) -> None:
        """A run whose engine has stopped is `_active` until its closing snapshot is sent: a
        client that saw it stop (and at once switches the LLM) waits that moment out rather
        than get a conflict."""
        thread = self._thread
        if thread is None or thread is threading.current_thread() or not thread.is_alive():
            return
        if self.live.state.execution_status is not Status.RUNNING:
            thread.join(timeout)

    def _check_serving(self) -> None:
        if self._retired:
            raise ConflictError(
                "The conversation was reopened (its LLM switched) as this arrived: send it again."
            )

    def close(self) -> None:
        """Stop the run and close the conversation."""
        if self.conversation is not None:
            self.conversation.close()


def head_of(conversation: LocalConversation) -> str | None:
    """The id of the conversation's HEAD: `leaf_event_id`, or for a log older than the
    tree (which has none) the newest event of its active branch; None for an empty HEAD."""
    state = conversation.state
    if state.leaf_event_id is not None or state.head_is_empty:
        return state.leaf_event_id
    branch = state.active_branch(limit=1)
    return branch[0].id if len(branch) else None


def _plain(value: Any) -> Any:
    """JSON data from a value that may hold enums."""
    from enum import Enum

    if isinstance(value, Enum):
        return value.value
    return value
