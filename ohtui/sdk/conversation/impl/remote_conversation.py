"""RemoteConversation: a conversation whose agent runs on an agent server.

It speaks the OpenHands agent-server protocol (REST under /api, events on
/sockets/events/{id}); `ohtui serve` speaks it too. httpx and websockets are imported when
the first conversation is made, never by importing this module.

One module, over 600 lines, on purpose: code written against the SDK (its tests among it)
patches `WebSocketCallbackClient`, `generate_conversation_title`, `time` and `logger` at
this module's path, so the methods that look them up stay here; the socket client, the
REST helpers, the state, the event list and the errors are modules of their own.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ohtui.sdk.conversation.base import BaseConversation
from ohtui.sdk.conversation.callbacks import logging_failures
from ohtui.sdk.conversation.exceptions import CheckpointError, ConversationRunError
from ohtui.sdk.conversation.impl.remote_errors import (
    RemoteAuthenticationError,
    RemoteConnectionError,
    RemoteServerError,
    WebSocketConnectionError,
)
from ohtui.sdk.conversation.impl.remote_events import RemoteEventsList
from ohtui.sdk.conversation.impl.remote_state import RemoteState
from ohtui.sdk.conversation.impl.rest import detail_of, error_for, request
from ohtui.sdk.conversation.impl.websocket_client import (
    DEFAULT_BACKOFF_BASE,
    SocketStatus,
    WebSocketCallbackClient,
)
from ohtui.sdk.conversation.secret_registry import SecretValue
from ohtui.sdk.conversation.state import ConversationExecutionStatus
from ohtui.sdk.conversation.stuck_detector import StuckDetectionThresholds
from ohtui.sdk.conversation.title_utils import generate_conversation_title
from ohtui.sdk.conversation.types import (
    ConversationCallbackType,
    ConversationID,
    ConversationTokenCallbackType,
)
from ohtui.sdk.conversation.visualizer.base import ConversationVisualizerBase
from ohtui.sdk.conversation.visualizer.default import DefaultConversationVisualizer
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.checkpoint import (
    CheckpointEvent,
    CheckpointRestoreEvent,
    FileChangeRecord,
    checkpoints_in,
    find_checkpoint,
    undo_target_in,
)
from ohtui.sdk.event.conversation_error import ConversationErrorEvent
from ohtui.sdk.event.conversation_state import FULL_STATE_KEY, ConversationStateUpdateEvent
from ohtui.sdk.event.types import EventID
from ohtui.sdk.llm.message import Message, TextContent
from ohtui.sdk.wire.agent_out import agent_to_wire, llm_to_wire
from ohtui.sdk.wire.events_in import event_from_wire, is_streaming_delta, stream_chunk
from ohtui.sdk.wire.extensions import EVENT_FIELDS_PARAM, POLICY_FIELD

if TYPE_CHECKING:
    from ohtui.sdk.agent.base import AgentBase
    from ohtui.sdk.hooks.config import HookConfig
    from ohtui.sdk.llm.llm import LLM
    from ohtui.sdk.plugins.types import PluginSource
    from ohtui.sdk.security.analyzer import SecurityAnalyzerBase
    from ohtui.sdk.security.confirmation_policy import ConfirmationPolicyBase
    from ohtui.sdk.tool.client_tool import ClientToolSpec
    from ohtui.sdk.tool.schema import Action, Observation
    from ohtui.sdk.workspace.remote import RemoteWorkspace

__all__ = ["RemoteConversation", "WebSocketConnectionError"]

logger = logging.getLogger(__name__)

Status = ConversationExecutionStatus
READY_TIMEOUT_ENV = "OPENHANDS_REMOTE_WS_READY_TIMEOUT"
READY_REQUIRED_ENV = "OPENHANDS_REMOTE_WS_READY_REQUIRED"
DEFAULT_READY_TIMEOUT = 30.0
REST_FINISHED_FALLBACK = 30.0
ERROR_EVENT_GRACE = 2.0
"""Seconds a failed run waits for the server's ConversationErrorEvent (it follows the
status) to say what went wrong."""
"""Seconds without a socket snapshot after which the REST status alone may end a run."""
PARTIAL_REJECTION = "per_action_confirmation"
"""The server capability (ours has it) of deciding on each waiting action apart."""
CHECKPOINTS = "checkpoints"
"""The server capability (ours has it) of keeping checkpoints of the workspace."""
CHECKPOINT_REFUSALS = (404, 405, 409, 422)
"""Statuses of a checkpoint route told to the user as a CheckpointError, in the server's
words (other failures stay RemoteServerErrors)."""
ConnectionCallbackType = Callable[[SocketStatus, str], None]
ACCEPTED_RUN_CONFLICT = 409


class RemoteConversation(BaseConversation):
    """A conversation on an agent server (OpenHands' or `ohtui serve`)."""

    workspace: RemoteWorkspace
    """The workspace on the server (its URL, key and HTTP client)."""

    def __init__(
        self,
        agent: AgentBase,
        workspace: RemoteWorkspace,
        plugins: list[PluginSource] | None = None,
        conversation_id: ConversationID | None = None,
        callbacks: list[ConversationCallbackType] | None = None,
        max_iteration_per_run: int = 500,
        stuck_detection: bool = True,
        stuck_detection_thresholds: StuckDetectionThresholds | Mapping[str, int] | None = None,
        hook_config: HookConfig | None = None,
        visualizer: type[ConversationVisualizerBase]
        | ConversationVisualizerBase
        | None = DefaultConversationVisualizer,
        secrets: Mapping[str, SecretValue] | None = None,
        delete_on_close: bool = False,
        token_callbacks: list[ConversationTokenCallbackType] | None = None,
        autotitle: bool = True,
        connection_callbacks: list[ConnectionCallbackType] | None = None,
        reconnect_backoff: float = DEFAULT_BACKOFF_BASE,
        tags: Mapping[str, str] | None = None,
        user_id: str | None = None,
        observability_span_name: str | None = None,
        confirmation_policy: ConfirmationPolicyBase | None = None,
        security_analyzer: SecurityAnalyzerBase | None = None,
        client_tools: Sequence[ClientToolSpec] | None = None,
    ) -> None:
        """Create the conversation on the server, or attach to `conversation_id` there
        (created with that id when the server has none), and subscribe to its events.

        Blocks until the event socket delivered its first state snapshot (see
        WebSocketConnectionError). Raises RemoteAuthenticationError when the server refuses
        the key, RemoteConnectionError when it cannot be reached, RemoteServerError for
        other refusals, and ValueError when the conversation there has another agent kind.
        `connection_callbacks` hear the socket's status (connected, reconnecting...);
        `reconnect_backoff` is the first retry delay (doubling to 30 s). `tags`, `user_id`,
        `observability_span_name`, `confirmation_policy` and `security_analyzer` go to the
        server with a new conversation (the OpenHands server keeps the policy and analyzer
        it was created with through its restarts, not those set later). `client_tools`
        (tools this client carries out, see `ohtui.sdk.tool.client_tool`) go with a new
        conversation too: the server adds them to the agent, and their ActionEvents come to
        the callbacks.
        """
        self.agent = agent
        self.workspace = workspace
        self._remote = workspace
        self.max_iteration_per_run = max_iteration_per_run
        self.delete_on_close = delete_on_close
        self._closed = False
        self._token_callbacks = list(token_callbacks or [])
        self._connection_callbacks = list(connection_callbacks or [])
        self._deliver_lock = threading.RLock()
        self._run_signal = threading.Condition()
        self._armed = False
        self._run_started = False
        self._run_end: Status | None = None
        self._last_snapshot = time.monotonic()
        self._run_start_index = 0

        self._capabilities: set[str] | None = None  # read when first needed
        extra: dict[str, Any] = {"tags": dict(tags) if tags else None, "user_id": user_id}
        extra["observability_span_name"] = observability_span_name
        if client_tools:
            extra["client_tools"] = [spec.model_dump(mode="json") for spec in client_tools]
        if confirmation_policy is not None:
            extra["confirmation_policy"] = confirmation_policy.model_dump(
                mode="json", exclude_none=True
            )
        if security_analyzer is not None:
            extra["security_analyzer"] = security_analyzer.model_dump(
                mode="json", exclude_none=True
            )
        info = self._attach_or_create(
            conversation_id,
            plugins,
            max_iteration_per_run,
            stuck_detection,
            stuck_detection_thresholds,
            hook_config,
            secrets,
            autotitle,
            {key: value for key, value in extra.items() if value is not None},
        )
        self._server_id = str(info["id"])
        self._id = uuid.UUID(self._server_id)
        events = RemoteEventsList(workspace, self._server_id)
        self._state = RemoteState(self._id, info, events, agent, workspace)
        if secrets:
            self._state.secret_registry.update_secrets(secrets)

        if isinstance(visualizer, type):
            visualizer = visualizer()
        self._visualizer = visualizer
        listeners: list[ConversationCallbackType] = []
        if visualizer is not None:
            visualizer.initialize(self._state)
            listeners.append(visualizer.on_event)
        listeners.extend(callbacks or [])
        self._callbacks = listeners
        """The event callbacks, read at each event: one appended later hears what follows
        (the SDK's examples append to it)."""
        self._notify = self._notify_callbacks

        self._socket = WebSocketCallbackClient(
            # ohtui's own event fields (a risk's reason) where the server has them.
            f"{workspace.websocket_base}/sockets/events/{self._server_id}"
            f"?{EVENT_FIELDS_PARAM}=true",
            self._on_frame,
            api_key=workspace.api_key,
            on_reconnect=self._on_reconnect,
            on_status=self._on_socket_status,
            backoff_base=reconnect_backoff,
            connect_check=workspace.connection_problem,
        )
        self._socket.start()
        self._wait_until_subscribed()
        self._deliver(events.reconcile())  # what happened between the listing and the socket

    # --- set-up --------------------------------------------------------------------------

    def _read_capabilities(self) -> set[str]:
        """What the server says it can do beyond OpenHands' protocol (none if it cannot
        be asked now: the plain protocol is always safe)."""
        try:
            response = request(self._remote, "GET", "/server_info", allow=(404,))
        except RemoteServerError:  # RemoteConnectionError too
            return set()
        if response.status_code != 200:
            return set()
        try:
            body = response.json()
        except ValueError:
            return set()
        capabilities = body.get("capabilities") if isinstance(body, dict) else None
        return {str(c) for c in capabilities} if isinstance(capabilities, list) else set()

    def _attach_or_create(
        self,
        conversation_id: ConversationID | None,
        plugins: list[PluginSource] | None,
        max_iterations: int,
        stuck_detection: bool,
        thresholds: StuckDetectionThresholds | Mapping[str, int] | None,
        hook_config: HookConfig | None,
        secrets: Mapping[str, SecretValue] | None,
        autotitle: bool,
        extra: dict[str, Any],
    ) -> dict[str, Any]:
        if conversation_id is not None:
            path = f"/api/conversations/{conversation_id}"
            response = request(self._remote, "GET", path, allow=(404,))
            if response.status_code == 200:
                info: dict[str, Any] = response.json()
                self._check_agent_kind(info)
                if not info.get("id"):  # the id asked for is the one attached to
                    info["id"] = str(conversation_id)
                return info
        payload: dict[str, Any] = {
            "agent": agent_to_wire(self.agent),
            "workspace": {"working_dir": self.workspace.working_dir},
            "max_iterations": max_iterations,
            "stuck_detection": stuck_detection,
            "autotitle": autotitle,
            **extra,
        }
        if conversation_id is not None:
            payload["conversation_id"] = str(conversation_id)
        if thresholds is not None:
            payload["stuck_detection_thresholds"] = (
                dict(thresholds)
                if isinstance(thresholds, Mapping)
                else thresholds.model_dump(mode="json")
            )
        if hook_config is not None:
            payload["hook_config"] = hook_config.model_dump(mode="json", exclude_none=True)
        if plugins:
            payload["plugins"] = [p.model_dump(mode="json", exclude_none=True) for p in plugins]
        if secrets:
            payload["secrets"] = _secrets_to_wire(secrets)
        body = request(self._remote, "POST", "/api/conversations", json=payload).json()
        if not isinstance(body, dict) or not body.get("id"):
            raise RuntimeError(
                f"The agent server at {self._remote.display_host} created a conversation "
                "but did not say its id."
            )
        return body

    def _check_agent_kind(self, info: dict[str, Any]) -> None:
        remote = info.get("agent")
        kind = remote.get("kind") if isinstance(remote, dict) else None
        if kind is not None and kind != self.agent.kind:
            raise ValueError(
                f"Conversation {info.get('id')} on {self._remote.display_host} runs a "
                f"{kind}, not a {self.agent.kind}: attach with the same kind of agent."
            )

    def _wait_until_subscribed(self) -> None:
        timeout = float(os.environ.get(READY_TIMEOUT_ENV, DEFAULT_READY_TIMEOUT))
        if self._socket.wait_until_ready(timeout):
            return
        if self._socket.status is SocketStatus.FAILED:
            self._socket.stop()
            raise self._fatal_socket_error()
        required = os.environ.get(READY_REQUIRED_ENV, "true").lower()
        if required in ("false", "0", "no"):  # go on: the socket keeps trying
            warnings.warn(str(WebSocketConnectionError(self._id, timeout)), RuntimeWarning, 2)
            return
        self._socket.stop()
        raise WebSocketConnectionError(self._id, timeout)

    def _fatal_socket_error(self) -> RemoteServerError:
        host = self._remote.display_host
        if self._socket.close_code == 4001:
            return RemoteAuthenticationError(
                f"The agent server at {host} refused the session API key on the event socket "
                "(close code 4001). Set the right key and try again.",
                host,
                401,
            )
        return RemoteServerError(
            f"The agent server at {host} has no conversation {self._id} (close code 4004).",
            host,
            404,
        )

    # --- the event socket (reader thread) ------------------------------------------------

    def _on_frame(self, data: dict[str, Any]) -> None:
        if is_streaming_delta(data):
            chunk = stream_chunk(data)
            for callback in self._token_callbacks:
                try:
                    callback(chunk)
                except Exception:  # a broken listener must not stop the stream
                    logger.exception("token callback %r failed", callback)
            return
        event = event_from_wire(data)
        if isinstance(event, ConversationStateUpdateEvent):
            self._on_state_update(event)
            return
        with self._deliver_lock:
            if self._state.events.add_event(event):
                self._notify(event)

    def _on_state_update(self, update: ConversationStateUpdateEvent) -> None:
        with self._deliver_lock:
            if update.key == FULL_STATE_KEY:
                changes = self._changes_in(update.value)
                self._state.apply_update(update)
                for change in changes:  # the snapshot itself is sync, not history
                    self._notify(change)
            else:
                self._state.apply_update(update)
                if self._state.events.add_event(update):
                    self._notify(update)
        with self._run_signal:
            if update.key == FULL_STATE_KEY:
                self._last_snapshot = time.monotonic()
                status = (
                    _status(update.value.get("execution_status"))
                    if isinstance(update.value, dict)
                    else None
                )
                if self._armed and self._run_started and status not in (None, Status.RUNNING):
                    self._run_end = status
            elif update.key == "execution_status" and self._armed:
                # Only RUNNING says this run began: frames the server sent before it took
                # the run (a rejection's event, its idle status) may still be on their way.
                status = _status(update.value)
                if status is Status.RUNNING:
                    self._run_started = True
                elif status in (Status.ERROR, Status.STUCK) and self._run_started:
                    self._run_end = status
            self._run_signal.notify_all()

    def _changes_in(self, snapshot: Any) -> list[ConversationStateUpdateEvent]:
        """Per-field updates for what a snapshot changes that listeners follow (after a
        reconnect the snapshot may be the only word of a new status, title or policy)."""
        if not isinstance(snapshot, dict):
            return []
        info = self._state.info
        return [
            ConversationStateUpdateEvent(key=key, value=snapshot[key])
            for key in ("execution_status", "title", "confirmation_policy", POLICY_FIELD)
            if key in snapshot and snapshot[key] != info.get(key)
        ]

    def _saw_run_activity(self) -> None:
        with self._run_signal:
            if self._armed:
                self._run_started = True
                self._run_signal.notify_all()

    def _on_reconnect(self) -> None:
        """Back on the socket: fetch what was missed, in order, before reading on."""
        missed = self._state.events.reconcile()
        self._deliver(missed)
        if missed:
            self._saw_run_activity()  # the run's RUNNING may have gone by while cut off
        try:
            info = request(self._remote, "GET", self._path()).json()
        except RemoteServerError as exc:
            logger.info("refreshing conversation %s after reconnecting failed: %s", self.id, exc)
            return
        if isinstance(info, dict):
            # Taken as a snapshot: listeners hear what changed meanwhile (a status, a title),
            # and a run that ended meanwhile ends here too. The server's own snapshot that
            # follows then finds nothing new.
            self._on_state_update(ConversationStateUpdateEvent(key=FULL_STATE_KEY, value=info))

    def _deliver(self, events: Iterable[Event]) -> None:
        with self._deliver_lock:
            for event in events:
                if isinstance(event, ConversationStateUpdateEvent):
                    self._state.apply_update(event)
                self._notify(event)

    def _on_socket_status(self, status: SocketStatus, reason: str) -> None:
        for callback in self._connection_callbacks:
            try:
                callback(status, reason)
            except Exception:  # a listener's bug must not stop the socket
                logger.exception("connection callback %r failed", callback)

    # --- properties ----------------------------------------------------------------------

    @property
    def id(self) -> ConversationID:
        """The conversation id."""
        return self._id

    @property
    def state(self) -> RemoteState:
        """The conversation's state, as the server last reported it."""
        return self._state

    @property
    def connection_status(self) -> SocketStatus:
        """Whether the event socket is connected, reconnecting or gone."""
        return self._socket.status

    def add_connection_callback(self, callback: ConnectionCallbackType) -> None:
        """Hear each change of the event socket's status (from its thread)."""
        self._connection_callbacks.append(callback)

    @property
    def supports_partial_rejection(self) -> bool:
        """Whether the server decides on each waiting action apart (ours does; OpenHands'
        rejects all of them at once)."""
        if self._capabilities is None:
            self._capabilities = self._read_capabilities()
        return PARTIAL_REJECTION in self._capabilities

    @property
    def supports_checkpoints(self) -> bool:
        """Whether the server keeps checkpoints of the workspace (ours does; OpenHands'
        does not)."""
        if self._capabilities is None:
            self._capabilities = self._read_capabilities()
        return CHECKPOINTS in self._capabilities

    @property
    def confirmation_policy_active(self) -> bool:
        """Whether the policy may ask the user to confirm actions."""
        return self._state.confirmation_policy.is_active

    @property
    def is_confirmation_mode_active(self) -> bool:
        """True only with a security analyzer set and an active policy."""
        return self._state.security_analyzer is not None and self.confirmation_policy_active

    @property
    def stuck_detector(self) -> Any:
        """Not available: stuck detection runs on the server."""
        raise NotImplementedError("stuck detection runs on the agent server, not in this client")

    # --- the conversation API ------------------------------------------------------------

    def _path(self, tail: str = "") -> str:
        return f"/api/conversations/{self._server_id}{tail}"

    def send_message(self, message: str | Message, sender: str | None = None) -> None:
        """Add a user message (it does not start a run)."""
        if isinstance(message, str):
            message = Message(role="user", content=[TextContent(text=message)])
        if message.role != "user":
            raise ValueError(f"send_message takes user messages, not '{message.role}' ones")
        self._open("take a message")
        content = [c.model_dump(mode="json", exclude_none=True) for c in message.content]
        body = {"role": "user", "content": content, "run": False}
        request(self._remote, "POST", self._path("/events"), json=body)

    def run(
        self, blocking: bool = True, poll_interval: float = 1.0, timeout: float = 3600.0
    ) -> None:
        """Start a run on the server; with `blocking`, wait until it ends (finished,
        paused, waiting for confirmation) and every event of it is here.

        Raises ConversationRunError when the run fails (with the server's
        `code: detail`), gets stuck, the conversation disappears, or `timeout` passes.
        """
        self._open("run")
        self._run_start_index = len(self._state.events)
        with self._run_signal:
            self._armed = blocking
            self._run_started = False
            self._run_end = None
        try:
            response = request(
                self._remote, "POST", self._path("/run"), allow=(ACCEPTED_RUN_CONFLICT,)
            )
            if not blocking:
                return
            if response.status_code == ACCEPTED_RUN_CONFLICT:
                with self._run_signal:
                    self._run_started = True  # one was going: its end is ours to wait for
            self._wait_for_run_end(poll_interval, timeout)
        finally:
            with self._run_signal:
                self._armed = False
        self._deliver(self._state.events.reconcile())

    def _wait_for_run_end(self, poll_interval: float, timeout: float) -> None:
        start = time.monotonic()
        next_poll = start + poll_interval
        with self._run_signal:
            self._last_snapshot = start
        while True:
            now = time.monotonic()
            if now - start > timeout:
                raise ConversationRunError(
                    self._id,
                    TimeoutError(f"the run did not end within {timeout:g} seconds"),
                    self._state.persistence_dir,
                )
            with self._run_signal:
                self._run_signal.wait(max(0.0, min(next_poll - now, 0.25)))
                end = self._run_end
                last_snapshot = self._last_snapshot
            if end is not None:
                self._raise_for(end)
                return
            if time.monotonic() >= next_poll:
                next_poll = time.monotonic() + poll_interval
                if self._poll(time.monotonic() - last_snapshot):
                    return

    def _poll(self, since_snapshot: float) -> bool:
        """GET the status; True when the run is over by the server's word alone."""
        try:
            response = request(self._remote, "GET", self._path(), allow=(404, 429))
        except RemoteConnectionError as exc:
            logger.info("polling conversation %s: %s; retrying", self.id, exc)
            return False
        except RemoteServerError as exc:
            if exc.status_code is not None and exc.status_code >= 500:
                return False
            raise ConversationRunError(self._id, exc, self._state.persistence_dir) from exc
        if response.status_code == 429:
            return False
        if response.status_code == 404:
            raise ConversationRunError(
                self._id,
                error_for(self._remote, "GET", self._path(), response),
                self._state.persistence_dir,
            )
        status = _status(response.json().get("execution_status"))
        if status in (Status.ERROR, Status.STUCK):
            self._raise_for(status)
        if status not in (None, Status.RUNNING) and since_snapshot >= REST_FINISHED_FALLBACK:
            logger.warning(
                "conversation %s: no run-end snapshot on the socket for %.0f s; the server says %s",
                self.id,
                since_snapshot,
                status.value if status else "?",
            )
            return True
        return False

    def _raise_for(self, status: Status) -> None:
        if status is Status.ERROR:
            error = self._error_of_this_run()
            what = f"{error.code}: {error.detail}" if error else "the run failed on the server"
            raise ConversationRunError(
                self._id, RuntimeError(what), self._state.persistence_dir, error
            )
        if status is Status.STUCK:
            raise ConversationRunError(
                self._id,
                RuntimeError("Remote conversation got stuck"),
                self._state.persistence_dir,
            )

    def _error_of_this_run(self) -> ConversationErrorEvent | None:
        """The ConversationErrorEvent the server records after an ERROR status, once here."""
        deadline = time.monotonic() + ERROR_EVENT_GRACE
        while True:
            self._deliver(self._state.events.reconcile())
            error = _latest_error(self._state.events[self._run_start_index :])
            if error is not None or time.monotonic() >= deadline:
                return error
            time.sleep(0.1)

    def pause(self) -> None:
        """Ask the server to pause between steps (the step in flight completes)."""
        self._open("be paused")
        request(self._remote, "POST", self._path("/pause"))

    def interrupt(self) -> None:
        """Stop the run on the server now; the conversation pauses."""
        self._open("be interrupted")
        request(self._remote, "POST", self._path("/interrupt"))

    def set_confirmation_policy(self, policy: ConfirmationPolicyBase) -> None:
        """Set which actions wait for the user, on the server."""
        self._open("change its confirmation policy")
        body = {"policy": policy.model_dump(mode="json", exclude_none=True)}
        request(self._remote, "POST", self._path("/confirmation_policy"), json=body)
        # As the server now has it (its own report follows on the socket): where it keeps
        # ohtui's whole policy, there too, or the stale one there would still be read.
        keys = ["confirmation_policy"]
        if POLICY_FIELD in self._state.info:
            keys.append(POLICY_FIELD)
        for key in keys:
            self._state.apply_update(ConversationStateUpdateEvent(key=key, value=body["policy"]))

    def switch_llm(self, llm: LLM) -> None:
        """Have the server think with `llm` from its next LLM call on (its key is sent: the
        server calls the model). RemoteServerError when the server refuses: 409 while it
        runs the conversation (`ohtui serve`), 404 or 405 when it cannot switch at all."""
        self._open("switch its LLM")
        request(self._remote, "POST", self._path("/switch_llm"), json={"llm": llm_to_wire(llm)})
        self.agent = self.agent.model_copy(update={"llm": llm})
        self._state.use_agent(self.agent)

    def set_security_analyzer(self, analyzer: SecurityAnalyzerBase | None) -> None:
        """Set the analyzer rating actions on the server (None: none)."""
        self._open("change its security analyzer")
        value = analyzer.model_dump(mode="json", exclude_none=True) if analyzer else None
        body = {"security_analyzer": value}
        request(self._remote, "POST", self._path("/security_analyzer"), json=body)
        self._state.apply_update(ConversationStateUpdateEvent(key="security_analyzer", value=value))

    def reject_pending_actions(
        self, reason: str = "User rejected the action.", action_ids: Iterable[str] | None = None
    ) -> None:
        """Reject waiting actions. Against a server without per-action decisions (OpenHands'),
        only all of them at once: other `action_ids` are a ValueError, and nothing is sent."""
        self._open("decide on waiting actions")
        body: dict[str, Any] = {"accept": False, "reason": reason}
        if action_ids is not None:
            wanted = list(dict.fromkeys(action_ids))
            pending = [a.id for a in self._state.get_unmatched_actions(self._state.events)]
            unknown = set(wanted) - set(pending)
            if unknown:
                raise ValueError(
                    f"not pending: {', '.join(sorted(unknown))}; pending are "
                    f"{', '.join(pending) or 'none'}"
                )
            if set(wanted) != set(pending):
                if not self.supports_partial_rejection:
                    raise ValueError(
                        f"The agent server at {self._remote.display_host} can only reject "
                        "all waiting actions at once; reject all of them, or none."
                    )
                body["action_ids"] = wanted
        request(self._remote, "POST", self._path("/events/respond_to_confirmation"), json=body)

    def update_secrets(self, secrets: Mapping[str, SecretValue]) -> None:
        """Give the server secrets (a function is called here, and its value sent)."""
        self._open("take secrets")
        body = {"secrets": _secrets_to_wire(secrets)}
        request(self._remote, "POST", self._path("/secrets"), json=body)
        self._state.secret_registry.update_secrets(secrets)

    def ask_agent(self, question: str) -> str:
        """Answer a side question on the server (nothing is recorded)."""
        self._open("ask its model")
        body = request(
            self._remote, "POST", self._path("/ask_agent"), json={"question": question}
        ).json()
        answer = body.get("response") if isinstance(body, dict) else None
        if not isinstance(answer, str):
            raise RemoteServerError(
                f"The agent server at {self._remote.display_host} gave no answer.",
                self._remote.display_host,
            )
        return self._state.secret_registry.mask_secrets_in_output(answer)

    def condense(self, focus: str | None = None) -> None:
        """Condense the history on the server; RemoteServerError (409) without a condenser.

        `focus` is not sent: the OpenHands endpoint has no such field."""
        self._open("be condensed")
        request(self._remote, "POST", self._path("/condense"))

    def fork(
        self,
        *,
        conversation_id: ConversationID | None = None,
        agent: AgentBase | None = None,
        title: str | None = None,
        tags: dict[str, str] | None = None,
        reset_metrics: bool = True,
        from_event_id: EventID | None = None,
    ) -> RemoteConversation:
        """Fork the conversation on the server (`POST .../fork`) and attach to the fork.

        The server copies the events (all, or the branch up to `from_event_id`) and state.
        A remote fork keeps the server's agent: `agent` is NotImplementedError. ValueError
        for an unknown `from_event_id` or a taken `conversation_id`."""
        if agent is not None:
            raise NotImplementedError(
                "Forking with another agent is not supported for a remote conversation: its "
                "fork keeps the agent the server runs. Fork a LocalConversation to change it."
            )
        self._open("be forked")
        body: dict[str, Any] = {"reset_metrics": reset_metrics}
        if conversation_id is not None:
            body["id"] = str(conversation_id)
        if title is not None:
            body["title"] = title
        if tags is not None:
            body["tags"] = dict(tags)
        if from_event_id is not None:
            body["from_event_id"] = from_event_id
        response = request(
            self._remote, "POST", self._path("/fork"), json=body, allow=(400, 404, 409)
        )
        if response.status_code == 409:
            raise ValueError(f"conversation {conversation_id} already exists on the server")
        if response.status_code in (400, 404):
            if from_event_id is not None and "conversation not found" not in response.text.lower():
                raise ValueError(f"Unknown from_event_id: {from_event_id}")
            raise RemoteServerError(
                f"The agent server at {self._remote.display_host} has no conversation "
                f"{self._server_id} to fork.",
                self._remote.display_host,
                response.status_code,
            )
        info = response.json()
        fork = RemoteConversation(
            agent=self.agent,
            workspace=self.workspace,
            conversation_id=uuid.UUID(str(info["id"])),
            max_iteration_per_run=self.max_iteration_per_run,
            visualizer=type(self._visualizer) if self._visualizer is not None else None,
            delete_on_close=self.delete_on_close,
            tags=info.get("tags") or None,
        )
        if self.agent.llm.api_key is not None:
            self._give_key(fork)
        return fork

    def _give_key(self, fork: RemoteConversation) -> None:
        """Give a fork the model's key again: the OpenHands server (1.58) saves a fork's
        agent without it, so the fork's first LLM call fails for missing credentials.
        `ohtui serve` keeps it: there the same LLM again changes nothing."""
        try:
            fork.switch_llm(self.agent.llm)
        except RemoteServerError as exc:  # the fork stands; its first call will say why
            logger.warning("could not give the fork %s its model's key: %s", fork.id, exc)

    def navigate_to(self, event_id: EventID | None) -> None:
        """Move HEAD on the server (`POST .../navigate`); the cached state then says where
        it is. ValueError for an event the server does not have."""
        self._open("move its HEAD")
        response = request(
            self._remote,
            "POST",
            self._path("/navigate"),
            json={"event_id": event_id},
            allow=(400, 404),
        )
        if response.status_code in (400, 404):
            if event_id is not None and "conversation not found" not in response.text.lower():
                raise ValueError(f"Unknown event_id: {event_id}")
            raise RemoteServerError(
                f"The agent server at {self._remote.display_host} has no conversation "
                f"{self._server_id}.",
                self._remote.display_host,
                response.status_code,
            )
        self._deliver(self._state.events.reconcile())
        # Read again after the move (as OpenHands' client does): the reply's info may be
        # trimmed, and the OpenHands server tells no one when HEAD moves.
        self._state.refresh_from_server()

    def set_title(self, title: str) -> None:
        """Rename the conversation on the server; ValueError for an empty title."""
        title = title.strip()
        if not title:
            raise ValueError("a title cannot be empty")
        self._open("be renamed")
        request(self._remote, "PATCH", self._path(), json={"title": title})
        update = ConversationStateUpdateEvent(key="title", value=title)
        with self._deliver_lock:
            changed = self._state.title != title
            self._state.apply_update(update)
            if changed:
                self._notify(update)

    def generate_title(self, llm: LLM | None = None, max_length: int = 50) -> str:
        """A title from the first user message, written here by `llm` (default: the
        agent's), and stored on the server when it takes titles."""
        self._deliver(self._state.events.reconcile())
        title = generate_conversation_title(
            self._state.events,
            llm or self.agent.llm,
            max_length,
            skip=self._state.blocked_messages,
        )
        title = self._state.secret_registry.mask_secrets_in_output(title)
        try:
            self.set_title(title)
        except RemoteServerError as exc:
            if exc.status_code not in (404, 405, 422):
                raise
        return title

    # --- checkpoints of the workspace (kept by the server, listed from its events) -------

    def list_checkpoints(self) -> list[CheckpointEvent]:
        """The workspace's checkpoints, newest first, as the server's events record them."""
        return checkpoints_in(list(self._state.events))

    def undo_checkpoint(self) -> CheckpointEvent | None:
        """The checkpoint an undo restores: from before the newest action not undone yet."""
        return undo_target_in(list(self._state.events))

    def checkpoint_changes(self, checkpoint_id: str) -> list[FileChangeRecord]:
        """The files restoring the checkpoint would change now, as the server sees them."""
        return self._checkpoint_changes(checkpoint_id)[0]

    def checkpoint_diff(self, checkpoint_id: str) -> str:
        """What restoring the checkpoint would change now, as a unified diff."""
        return self._checkpoint_changes(checkpoint_id)[1]

    def restore_checkpoint(self, checkpoint_id: str | None = None) -> CheckpointRestoreEvent:
        """Restore the server's workspace to a checkpoint (None: undo the newest action not
        undone yet). CheckpointError, in the server's words, when it cannot."""
        self._open("restore a checkpoint")
        if checkpoint_id is None:
            target = self.undo_checkpoint()
            if target is None or target.checkpoint_id is None:
                self._check_keeps_checkpoints()
                raise CheckpointError("nothing to undo: no action has changed the workspace")
            checkpoint_id = target.checkpoint_id
        else:
            checkpoint_id = self._known_checkpoint(checkpoint_id)
        body = self._checkpoint_call(
            "POST", "/checkpoints/restore", json={"checkpoint_id": checkpoint_id}
        )
        event = event_from_wire(body) if isinstance(body, dict) else None
        if not isinstance(event, CheckpointRestoreEvent):
            raise CheckpointError(
                f"The agent server at {self._remote.display_host} restored the checkpoint "
                "but did not say what changed: list the workspace's files to see."
            )
        with self._deliver_lock:  # the socket brings it too: whichever comes first counts
            if self._state.events.add_event(event):
                self._notify(event)
        return event

    def _checkpoint_changes(self, checkpoint_id: str) -> tuple[list[FileChangeRecord], str]:
        self._open("show a checkpoint")
        full = self._known_checkpoint(checkpoint_id)
        body = self._checkpoint_call("GET", f"/checkpoints/{full}/changes")
        if not isinstance(body, dict) or not isinstance(body.get("changes"), list):
            raise CheckpointError(
                f"The agent server at {self._remote.display_host} did not list the changes."
            )
        changes = [FileChangeRecord.model_validate(c) for c in body["changes"]]
        return changes, str(body.get("diff") or "")

    def _known_checkpoint(self, checkpoint_id: str) -> str:
        """The full id of the checkpoint the events record (a 4+ character prefix is enough)."""
        found = find_checkpoint(list(self._state.events), checkpoint_id)
        if found is None or found.checkpoint_id is None:
            self._check_keeps_checkpoints()
            raise CheckpointError(
                f"this conversation has no checkpoint {checkpoint_id!r}: /checkpoints lists them"
            )
        return found.checkpoint_id

    def _checkpoint_call(self, method: str, tail: str, json: Any = None) -> Any:
        """A checkpoint route's JSON answer; its refusal as a CheckpointError."""
        path = self._path(tail)
        response = request(self._remote, method, path, json=json, allow=CHECKPOINT_REFUSALS)
        if response.status_code in CHECKPOINT_REFUSALS:
            if response.status_code in (404, 405):
                self._check_keeps_checkpoints()
            raise CheckpointError(detail_of(response))
        try:
            return response.json()
        except ValueError as exc:
            raise CheckpointError(
                f"The agent server at {self._remote.display_host} answered {method} {path} "
                "with something that is not JSON."
            ) from exc

    def _check_keeps_checkpoints(self) -> None:
        if not self.supports_checkpoints:
            raise CheckpointError(
                f"this server keeps no checkpoints (the agent server at "
                f"{self._remote.display_host} is not `ohtui serve`, or an older one): "
                "its workspace cannot be restored from here"
            )

    def execute_tool(self, tool_name: str, action: Action) -> Observation:
        """Not available: tools run on the server, in the agent loop."""
        raise NotImplementedError(
            "execute_tool is not supported for a RemoteConversation: its tools run on the server"
        )

    def _notify_callbacks(self, event: Event) -> None:
        """Hand `event` to each callback of the list as it is now, on the socket's thread,
        as in the SDK: a failing listener is logged there."""
        self.compose_callbacks(logging_failures(c) for c in self._callbacks)(event)

    def close(self) -> None:
        """Stop the event socket; delete the conversation on the server if `delete_on_close`.
        Idempotent; the workspace's HTTP client stays open."""
        if self._closed:
            return
        self._closed = True
        self._socket.stop()
        if self.delete_on_close:
            try:
                request(self._remote, "DELETE", self._path(), allow=(404,))
            except RemoteServerError as exc:
                logger.warning("deleting conversation %s on close failed: %s", self.id, exc)

    def _open(self, what: str) -> None:
        if self._closed:
            raise RuntimeError(f"conversation {self.id} is closed, so it cannot {what}")

    def __enter__(self) -> RemoteConversation:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _status(value: Any) -> Status | None:
    try:
        return Status(value)
    except ValueError:
        return None


def _latest_error(events: Iterable[Event]) -> ConversationErrorEvent | None:
    latest = None
    for event in events:
        if isinstance(event, ConversationErrorEvent):
            latest = event
    return latest


def _secrets_to_wire(secrets: Mapping[str, SecretValue]) -> dict[str, Any]:
    """Values as strings (a function called now), sources as their JSON."""
    out: dict[str, Any] = {}
    for name, value in secrets.items():
        if isinstance(value, str):
            out[name] = value
        elif callable(value):
            out[name] = str(value())
        else:
            out[name] = value.model_dump(mode="json", context={"expose_secrets": True})
    return out
