"""LocalConversation: runs an agent in this process, saving every event as it happens.

Its sandbox and checkpoints are `LocalBoundary`'s (local_boundary.py); its collaborators
live apart too (Checkpointing, RunGuards, TokenMasker, extend_agent, the agent hook's
runner). What stays here, over 600 lines, is one job: the conversation's life (setting up,
the run loop and its statuses, messages, policies, secrets, the model's side services,
closing), whose methods are the SDK's `BaseConversation` API and share its locks.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ohtui.sdk.agent.base import AgentBase
from ohtui.sdk.agent.condensation import no_condenser_message
from ohtui.sdk.conversation.exceptions import ConversationRunError
from ohtui.sdk.conversation.impl.agent_extensions import extend_agent
from ohtui.sdk.conversation.impl.checkpointing import Checkpointing
from ohtui.sdk.conversation.impl.forking import fork_local
from ohtui.sdk.conversation.impl.local_boundary import LocalBoundary
from ohtui.sdk.conversation.impl.run_guards import RunGuards
from ohtui.sdk.conversation.impl.token_masker import TokenMasker
from ohtui.sdk.conversation.secret_registry import SecretValue
from ohtui.sdk.conversation.state import (
    ConversationExecutionStatus,
    ConversationState,
    unanswered_tool_calls,
)
from ohtui.sdk.conversation.stuck_detector import StuckDetectionThresholds, StuckDetector
from ohtui.sdk.conversation.title_utils import generate_conversation_title
from ohtui.sdk.conversation.types import (
    ConversationCallbackType,
    ConversationID,
    ConversationTokenCallbackType,
)
from ohtui.sdk.conversation.visualizer.base import ConversationVisualizerBase
from ohtui.sdk.conversation.visualizer.default import DefaultConversationVisualizer
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.conversation_error import ConversationErrorEvent
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.llm_convertible.observation import AgentErrorEvent, UserRejectObservation
from ohtui.sdk.event.types import EventID
from ohtui.sdk.event.user_action import InterruptEvent, PauseEvent
from ohtui.sdk.llm.exceptions import LLMCancelledError
from ohtui.sdk.llm.llm import LLM, LLMCallContext, same_llm
from ohtui.sdk.llm.message import Message, TextContent
from ohtui.sdk.llm.registry import LLMRegistry, RegistryEvent
from ohtui.sdk.llm.streaming import LLMStreamChunk
from ohtui.sdk.plugins.types import PluginSource, ResolvedPluginSource
from ohtui.sdk.sandbox import SandboxConfig
from ohtui.sdk.secret.secrets import StaticSecret
from ohtui.sdk.security.analyzer import SecurityAnalyzerBase
from ohtui.sdk.security.confirmation_policy import ConfirmationPolicyBase
from ohtui.sdk.tool.client_tool import ClientToolSpec, client_tool_specs, with_client_tools
from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.utils.cipher import Cipher
from ohtui.sdk.workspace.local import LocalWorkspace

if TYPE_CHECKING:
    from ohtui.sdk.hooks.config import HookConfig
    from ohtui.sdk.hooks.runner import HookManager
    from ohtui.sdk.plugins.loader import PluginCheck

logger = logging.getLogger(__name__)

Status = ConversationExecutionStatus
_RESTARTABLE = {
    Status.IDLE,
    Status.PAUSED,
    Status.ERROR,
    Status.STUCK,
    Status.WAITING_FOR_CONFIRMATION,
}
"""Statuses `run()` starts from; FINISHED waits for a new message (which makes it IDLE)."""
_PAUSABLE = {Status.IDLE, Status.RUNNING}
"""Statuses `pause()` changes: the others already stop the run, and must stay visible."""
DEFAULT_WORKSPACE = "workspace/project"
_STOPS_RUN = {
    Status.PAUSED,
    Status.WAITING_FOR_CONFIRMATION,
    Status.FINISHED,
    Status.ERROR,
    Status.STUCK,
}
CLOSE_WAIT_SECONDS = 2.0
ASK_AGENT_LLM_USAGE_ID = "ask-agent-llm"
"""Usage id of the LLM answering `ask_agent`: side questions are counted apart from the
agent's own calls (whose last prompt size is the context in use)."""
INTERRUPTED_ACTION = (
    "This action was interrupted before it finished: ohtui stopped while it ran. It may "
    "have partly run; check its effects before retrying."
)


class LocalConversation(LocalBoundary):
    """A conversation whose agent runs here, on the calling thread of `run()`."""

    def __init__(
        self,
        agent: AgentBase,
        workspace: str | Path | LocalWorkspace = DEFAULT_WORKSPACE,
        plugins: list[PluginSource] | None = None,
        persistence_dir: str | Path | None = None,
        conversation_id: ConversationID | None = None,
        callbacks: list[ConversationCallbackType] | None = None,
        token_callbacks: list[ConversationTokenCallbackType] | None = None,
        max_iteration_per_run: int = 500,
        stuck_detection: bool = True,
        visualizer: type[ConversationVisualizerBase]
        | ConversationVisualizerBase
        | None = DefaultConversationVisualizer,
        delete_on_close: bool = False,
        hook_config: HookConfig | None = None,
        stuck_detection_thresholds: StuckDetectionThresholds | Mapping[str, int] | None = None,
        secrets: Mapping[str, SecretValue] | None = None,
        cipher: Cipher | None = None,
        read_only: bool = False,
        sandbox: SandboxConfig | None = None,
        max_budget_per_run: float | None = None,
        plugin_cache_dir: str | Path | None = None,
        defer_mcp: bool = False,
        plugin_check: PluginCheck | None = None,
        mcp_check: Callable[[str], str | None] | None = None,
        checkpoints: bool = False,
        client_tools: Sequence[ClientToolSpec] | None = None,
    ) -> None:
        """Create a conversation, or resume the one saved under `persistence_dir` with this id.

        A persisted conversation is this object's alone until `close()`: opening it again
        (here or in another process) raises ConversationLockedError naming the holder. It
        takes the conversation over from a ConversationState opened on its own in this
        process, if that is idle (see ConversationState.create).
        `read_only` opens a saved conversation whoever holds it, to read its history and
        state; everything that would change it raises ConversationReadOnlyError.

        Secrets are saved encrypted with `cipher`, redacted without one. `sandbox` confines
        the tools (see `set_sandbox`); without it they run unconfined. A run stops in ERROR
        once the conversation's LLM cost reaches `max_budget_per_run` dollars.

        `plugins` load in order (git sources cloned into `plugin_cache_dir`, by default the
        user cache dir): skills by name and MCP settings by key, the last winning; hooks
        added to `hook_config`'s. Each is pinned to its commit in `resolved_plugins`, which a
        resume loads again (with `plugins` None: the saved ones); `plugin_check` sees them
        first and says which to use (the front end's trust). The agent context's skills
        on disk (project, user) load here too; files that cannot be read are skipped, each
        with a warning in `skill_warnings`. Raises PluginFetchError or PluginLoadError when
        a plugin cannot be used. The agent's MCP servers start in the background now, or
        with `defer_mcp` on `start_mcp()` (or when the first step needs their tools);
        `mcp_check` says, before each start of one, why it may not start. With `checkpoints`,
        the workspace is checkpointed before every action that may change it (recorded as
        CheckpointEvents; see `restore_checkpoint`), which also makes those actions undoable
        for the security analyzer. Raises
        WorkspaceError or PersistenceError (with what to do) when the workspace or the
        persistence directory cannot be used, and ValueError when a resumed conversation
        needs a tool the agent no longer has. `client_tools` are tools the caller carries out
        (see `ohtui.sdk.tool.client_tool`): added to the agent's, they answer each call with
        an acknowledgment while the callbacks see the ActionEvent.
        """
        if read_only and persistence_dir is None:
            raise ValueError("a read-only conversation is a saved one: give its persistence_dir")
        if not isinstance(workspace, LocalWorkspace):
            workspace = LocalWorkspace(working_dir=str(workspace))
        agent = _with_client_tools(agent, client_tools or ())
        # Taken before the state: a conversation the caller dropped still holding this agent
        # gives it up (and with its tools, the saved conversation it may be reopening here).
        self.agent = agent if read_only else agent.serving(self)
        self.workspace = workspace.prepare()
        self.max_iteration_per_run = max_iteration_per_run
        self.max_budget_per_run = max_budget_per_run
        self.delete_on_close = delete_on_close
        self._id = conversation_id or uuid.uuid4()
        self._fork_options: dict[str, Any] = {
            "max_iteration_per_run": max_iteration_per_run,
            "stuck_detection": stuck_detection,
            "visualizer": type(visualizer)
            if isinstance(visualizer, ConversationVisualizerBase)
            else visualizer,
            "delete_on_close": delete_on_close,
            "hook_config": hook_config,
            "stuck_detection_thresholds": stuck_detection_thresholds,
            "cipher": cipher,
            "sandbox": sandbox,
            "max_budget_per_run": max_budget_per_run,
            "plugin_cache_dir": plugin_cache_dir,
            "defer_mcp": True,  # its servers start when its first step needs them
            "plugin_check": plugin_check,
            "mcp_check": mcp_check,
            "checkpoints": checkpoints,
        }
        """How this conversation was made: a fork of it is made the same way."""
        conversation_dir = (
            self.get_persistence_dir(persistence_dir, self._id) if persistence_dir else None
        )
        try:
            self._state = ConversationState.create(
                id=self._id,
                agent=agent,
                workspace=self.workspace,
                persistence_dir=conversation_dir,
                max_iterations=max_iteration_per_run,
                stuck_detection=stuck_detection,
                cipher=cipher,
                read_only=read_only,
                exclusive=True,  # its tools act on the workspace: never taken over under them
            )
        except BaseException:
            if not read_only:
                self.agent.close()  # lets go of the agent it took
            raise
        try:
            self.skill_warnings: list[str] = []
            if not read_only:  # a read-only conversation runs nothing: no plugins to fetch
                hook_config = self._extend_agent(
                    plugins, hook_config, plugin_cache_dir, plugin_check
                )
            self._set_up(
                visualizer, callbacks, token_callbacks, hook_config, stuck_detection_thresholds
            )
            self.checkpointing: Checkpointing | None = (
                self._new_checkpointing() if checkpoints and not read_only else None
            )
            if not read_only:  # a read-only conversation runs nothing
                self._take_secrets(secrets)
            if sandbox is not None:
                self.set_sandbox(sandbox)
            if self._state.execution_status is Status.RUNNING and not read_only:
                self._settle_crashed_run()
            if not read_only:  # its MCP servers start now, in the background, or are set up
                # The agent holds what it is given: never this conversation itself, which a
                # caller dropping it must leave collectable (see AgentBase.serving).
                state = self._state
                self.agent.start_mcp(
                    self.workspace.working_dir,
                    state.secret_registry.get_secret_value,
                    launch=not defer_mcp,
                    sandbox=lambda: state.sandbox,
                    check=mcp_check,
                )
        except BaseException:
            self._state.close()  # lets go of the conversation
            if not read_only:
                self.agent.close()  # never ran: its servers may have started
            raise

    def start_mcp(self) -> None:
        """Start the agent's MCP servers in the background, if `defer_mcp` held them back
        (idempotent; returns at once)."""
        if self.agent.mcp is not None:
            self.agent.mcp.start()

    def _extend_agent(
        self,
        plugins: list[PluginSource] | None,
        hook_config: HookConfig | None,
        cache_dir: str | Path | None,
        check: PluginCheck | None = None,
    ) -> HookConfig | None:
        """Merge plugins and skills on disk into the agent; return the hooks to run."""
        extension = extend_agent(
            self.agent,
            self.workspace.working_dir,
            hook_config,
            plugins,
            self._state.resolved_plugins,
            Path(cache_dir) if cache_dir is not None else None,
            check,
        )
        self.skill_warnings = extension.warnings
        if extension.agent is not self.agent:
            self.agent.close()  # the caller's agent, taken above: free for another conversation
            self.agent = extension.agent.serving(self)
            with self._state:
                self._state.agent = extension.agent
                if extension.resolved_plugins != self._state.resolved_plugins:
                    self._state.resolved_plugins = extension.resolved_plugins
        return extension.hook_config

    @property
    def resolved_plugins(self) -> list[ResolvedPluginSource] | None:
        """The plugins loaded, each pinned to the commit used (None: no plugins)."""
        return self._state.resolved_plugins

    def _take_secrets(self, secrets: Mapping[str, SecretValue] | None) -> None:
        """The agent context's secrets the registry lacks (a resumed conversation keeps
        what it has), then `secrets`, which win."""
        registry = self._state.secret_registry
        context = self.agent.agent_context
        seeded = {
            name: source
            for name, source in ((context.secrets or {}) if context is not None else {}).items()
            if name not in registry.secret_sources
            # a value saved redacted (no cipher) came back empty: nothing to seed
            and not (isinstance(source, StaticSecret) and source.value is None)
        }
        if not seeded and not secrets:
            return
        registry.update_secrets({**seeded, **(secrets or {})})
        self._state.save_secrets()

    def _hook_manager(self, hook_config: HookConfig | None) -> HookManager | None:
        """What runs the hooks, if there are any (the hook runner loads only then)."""
        if hook_config is None or hook_config.is_empty():
            return None
        from ohtui.sdk.hooks.runner import HookManager

        return HookManager(
            hook_config,
            self.workspace.working_dir,
            self._id.hex,
            llm_getter=lambda: self.agent.llm,
            visualizer=self._visualizer,
            conversation_stats=self._state.stats,
            sandbox_getter=self._hook_sandbox,
            command_sandbox=lambda: self._state.sandbox,
            on_event=self._on_event,
        )

    def _set_up(
        self,
        visualizer: type[ConversationVisualizerBase] | ConversationVisualizerBase | None,
        callbacks: list[ConversationCallbackType] | None,
        token_callbacks: list[ConversationTokenCallbackType] | None,
        hook_config: HookConfig | None,
        stuck_detection_thresholds: StuckDetectionThresholds | Mapping[str, int] | None,
    ) -> None:
        """Everything around the state: stuck detection, listeners, hooks, run controls."""
        self._stuck_detector = StuckDetector(self._state, stuck_detection_thresholds)
        self.llm_registry = LLMRegistry()
        self.llm_registry.subscribe(self._state.stats.register_llm)
        self.llm_registry.subscribe(self._mask_llm_key)
        self.llm_registry.subscribe(self._bind_call_context)
        self.llm_registry.add(self.agent.llm)
        self._register_routed_llms(self.agent.llm)
        self._register_condenser_llm()

        if isinstance(visualizer, type):
            visualizer = visualizer()
        self._visualizer = visualizer
        if visualizer is not None:
            visualizer.initialize(self._state)
        listeners: list[ConversationCallbackType] = []
        if visualizer is not None:
            listeners.append(visualizer.on_event)
        listeners.extend(callbacks or [])  # after the visualizer: what they print comes second
        self._notify = self.compose_callbacks(listeners)
        self._state.set_on_state_change(self._notify)
        self._token_callbacks = list(token_callbacks or [])
        self._token_masker = TokenMasker(self._state.secret_registry)
        self.hooks = self._hook_manager(hook_config)

        self._agent_ready = False
        self._ready_lock = threading.Lock()
        self._ask_llm_lock = threading.Lock()
        self._running = False
        self._asynchronous = False
        self._idle = threading.Event()
        self._idle.set()
        self._pause_requested = threading.Event()
        self._cancel = threading.Event()
        self._closed = False
        self._guards = RunGuards(self._state, self.hooks, self._stuck_detector, self._on_event)

    def _register_routed_llms(self, llm: LLM) -> None:
        """Count the calls of a router's LLMs in this conversation's stats: they answer
        for it, each under its own usage_id."""
        from ohtui.sdk.llm.router.base import RouterLLM  # small; not needed before a conversation

        if not isinstance(llm, RouterLLM):
            return
        for routed in llm.llms_for_routing.values():
            try:
                self._registered(routed)
            except ValueError as exc:
                logger.warning("a routed LLM is not counted: %s", exc)

    def _register_condenser_llm(self) -> None:
        """Count the summarizing condenser's calls in this conversation's stats (under its
        usage_id; an LLM sharing the agent's usage_id is counted with the agent's)."""
        llm = getattr(self.agent.condenser, "llm", None)
        if not isinstance(llm, LLM):
            return
        try:
            self._registered(llm)
        except ValueError as exc:
            logger.warning("the condenser's LLM is not counted: %s", exc)

    # --- properties ----------------------------------------------------------------------

    @property
    def id(self) -> ConversationID:
        """The conversation id."""
        return self._id

    @property
    def state(self) -> ConversationState:
        """The conversation state (events, status, stats...)."""
        return self._state

    @property
    def read_only(self) -> bool:
        """Whether this conversation was opened read-only (it can be read, not changed)."""
        return self._state.read_only

    @property
    def cancel_requested(self) -> threading.Event:
        """Set by `interrupt()` until the next run: the step in progress should stop now."""
        return self._cancel

    @property
    def stuck_detector(self) -> StuckDetector | None:
        """The stuck detector, while `state.stuck_detection` is on (None when it is off)."""
        return self._stuck_detector if self._state.stuck_detection else None

    @property
    def confirmation_policy_active(self) -> bool:
        """Whether the policy may ask the user to confirm actions."""
        return self._state.confirmation_policy.is_active

    @property
    def is_confirmation_mode_active(self) -> bool:
        """True only with a security analyzer set and an active policy (as the reference)."""
        return self._state.security_analyzer is not None and self.confirmation_policy_active

    def _mask_llm_key(self, event: RegistryEvent) -> None:
        """Mask an LLM's own key like a secret, without handing it to any command."""
        key = event.llm.maskable_key
        if key is not None:
            self._state.secret_registry.add_masked_value(key)

    def _bind_call_context(self, event: RegistryEvent) -> None:
        """Key the provider's prompt cache by this conversation (its requests share a
        prefix), and hide its secrets in what is logged of a call."""
        event.llm.set_call_context(
            LLMCallContext(
                prompt_cache_key=str(self._id), mask=self._state.secret_registry.mask_data
            )
        )

    # --- events --------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        """Mask secrets, record the event durably, then tell the listeners (what was
        recorded: its text made valid)."""
        registry = self._state.secret_registry
        if registry.has_values:
            data = event.model_dump(mode="json")
            masked = registry.mask_data(data)
            if masked != data:
                event = Event.model_validate(masked)
        event = self._state.append_event(event, durable=self._on_disk_first(event))
        self._notify(event)

    def _on_disk_first(self, event: Event) -> bool:
        """Whether `event` must be on disk before anything else happens: what the user said,
        and an action that may change something (before it runs). The rest is written
        behind, grouped with what follows."""
        if isinstance(event, MessageEvent):
            return event.source == "user"
        if not isinstance(event, ActionEvent) or event.action is None:
            return False
        try:
            tool = self.agent.tool_for(event)
        except RuntimeError:  # its tools are not resolved: assume the worst
            return True
        return tool is None or not tool.is_read_only

    def _on_token(self, chunk: LLMStreamChunk) -> None:
        chunk = self._token_masker.mask(chunk)
        for callback in self._token_callbacks:
            try:
                callback(chunk)
            except Exception:  # a broken listener must not stop the stream
                logger.exception("token callback %r failed", callback)

    def _writable(self, what: str) -> None:
        """Refuse `what` ("send a message") before it starts when opened read-only."""
        if self._state.read_only:
            raise self._state.read_only_error(what)

    def _ensure_agent_ready(self) -> None:
        """Resolve the tools and record the system prompt (once)."""
        if self._agent_ready:
            return
        with self._ready_lock, self._state:
            if self._agent_ready:
                return
            self.agent.init_state(self._state, on_event=self._on_event)
            self._agent_ready = True
        if self.hooks is not None:
            self.hooks.run_session_start()

    def _settle_crashed_run(self) -> None:
        """A saved RUNNING status means the process died mid-run: nothing is running now.

        Actions that were in flight never reported back; each gets an error saying so (the
        model must not assume they ran), and the conversation is paused.
        """
        with self._state:
            for action in unanswered_tool_calls(self._state.active_branch()):
                self._on_event(
                    AgentErrorEvent(
                        error=INTERRUPTED_ACTION,
                        tool_name=action.tool_name,
                        tool_call_id=action.tool_call_id,
                    )
                )
            self._state.execution_status = Status.PAUSED

    # --- the conversation API ------------------------------------------------------------

    def send_message(self, message: str | Message, sender: str | None = None) -> None:
        """Add a user message; a finished conversation becomes idle, ready to run again."""
        self._writable("take a message")
        if isinstance(message, str):
            message = Message(role="user", content=[TextContent(text=message)])
        if message.role != "user":
            raise ValueError(f"send_message takes user messages, not '{message.role}' ones")
        self._ensure_agent_ready()
        event_id = str(uuid.uuid4())  # named in the records of the hooks run for it
        may_send, context, results = (
            self.hooks.run_user_prompt_submit(message.text, message_id=event_id)
            if self.hooks is not None
            else (True, None, [])
        )
        with self._state:
            if self._state.execution_status in (Status.FINISHED, Status.ERROR, Status.STUCK):
                self._state.execution_status = Status.IDLE
            extended, activated = self._message_extension(message)
            if context:  # what a UserPromptSubmit hook adds
                extended.append(TextContent(text=context))
            event = MessageEvent(
                id=event_id,
                source="user",
                llm_message=message,
                sender=sender,
                activated_skills=activated,
                extended_content=extended,
            )
            self._on_event(event)
            if not may_send and self.hooks is not None:
                # Kept in the history for the user, never shown to the model; run() ends at once.
                self._state.block_message(event.id, self.hooks.blocked_by(results))

    def _message_extension(self, message: Message) -> tuple[list[TextContent], list[str]]:
        """What the agent context adds to a user message for the model, and the knowledge
        skills it recalls (each once per conversation, recorded in the state)."""
        agent_context = self.agent.agent_context
        if agent_context is None:
            return [], []
        recalled = self._state.activated_knowledge_skills
        extended, activated = agent_context.user_message_extension(message.text, recalled)
        if activated:
            self._state.activated_knowledge_skills = [*recalled, *activated]
        return extended, activated

    def run(self) -> None:
        """Run until the agent finishes, is paused, waits for confirmation, or fails.

        Raises ConversationRunError (status ERROR, a ConversationErrorEvent recorded) when
        something goes wrong; hitting max_iteration_per_run also ends in ERROR, with a
        ConversationErrorEvent, but does not raise.
        """
        self._run(requests_cleared=False)

    async def arun(self) -> None:
        """`run()` for asyncio code: the run goes on a thread of its own, the loop stays free.

        `interrupt()`, from the loop (a timer, a signal handler) or any thread, stops it at
        once, the LLM call abandoned and a running command killed: the conversation ends
        PAUSED with an InterruptEvent and `arun` returns normally. Cancelling the awaiting
        task does the same, as in the SDK: the run is interrupted and waited for, and the
        CancelledError is not raised. Callbacks are called on the run's thread (wrap a
        coroutine in `AsyncCallbackWrapper`). Raises ConversationRunError as `run()` does.
        """
        from ohtui.sdk.conversation.impl.async_run import run_on_thread  # asyncio: on use

        if self._closed:
            raise RuntimeError(f"conversation {self.id} is closed")
        self._writable("run")
        # Cleared here, not on the run's thread: an interrupt made once arun is called holds.
        self._pause_requested.clear()
        self._cancel.clear()
        await run_on_thread(
            lambda: self._run(requests_cleared=True, asynchronous=True),
            self.interrupt,
            f"ohtui-arun-{self.id.hex[:8]}",
        )

    def _run(self, requests_cleared: bool, asynchronous: bool = False) -> None:
        """The run (see `run`); `requests_cleared`: `arun` cleared stale pause and interrupt
        requests already; `asynchronous`: an interrupt is recorded as an InterruptEvent."""
        if self._closed:
            raise RuntimeError(f"conversation {self.id} is closed")
        self._writable("run")
        self._ensure_agent_ready()
        if self._guards.latest_message_blocked():
            return
        if self.checkpointing is not None:
            self.checkpointing.warm_up()  # while the model thinks
        run_start = len(self._state.events)
        with self._state:
            confirmed = self._state.execution_status is Status.WAITING_FOR_CONFIRMATION
            if not requests_cleared:
                # Clear stale requests first: a pause or interrupt made once RUNNING shows
                # must hold.
                self._pause_requested.clear()
                self._cancel.clear()
            self._running = True
            self._asynchronous = asynchronous
            self._idle.clear()
            self._guards.begin_run()
            if self._state.execution_status in _RESTARTABLE:
                self._state.execution_status = Status.RUNNING
        try:
            self._run_loop(confirmed)
        except LLMCancelledError:
            self._record_pause()
        except Exception as exc:
            logger.exception("conversation %s failed", self.id)
            with self._state:
                self._state.execution_status = Status.ERROR
                events = self._state.events
                if not _agent_already_surfaced_error(events, run_start):  # its own says more
                    self._record_run_error(exc)
                error = _latest_error(events, run_start)
            raise ConversationRunError(
                self.id, exc, self._state.persistence_dir, conversation_error=error
            ) from exc
        finally:
            self._end_agent_run()
            self._running = False
            self._asynchronous = False
            self._pause_requested.clear()
            self._idle.set()

    def _record_run_error(self, exc: Exception) -> None:
        """Record why the run failed. The listeners hear of it, but one failing again (a
        broken callback may be why the run failed) must not hide the run's error."""
        try:
            self._on_event(ConversationErrorEvent(code=type(exc).__name__, detail=str(exc)))
        except Exception:
            logger.exception("conversation %s: a callback failed on the run's error", self.id)

    def _end_agent_run(self) -> None:
        """Let the agent wrap up the run (its conversation manager trims the history)."""
        try:
            with self._state:
                self.agent.end_run(self)
        except Exception:  # the run's own outcome stands; this is logged for the user's report
            logger.exception("conversation %s: ending the agent's run failed", self.id)

    def _run_loop(self, confirmed: bool) -> None:
        """Step until the run stops; `confirmed`: the user confirmed the waiting actions."""
        with self._state:
            if not confirmed and self._guards.unconfirmed_actions_wait():
                return
        iterations = 0
        while True:
            with self._state:
                if self._pause_requested.is_set():
                    self._record_pause()
                    return
                if self._state.execution_status in _STOPS_RUN:
                    return
                self.agent.step(self, on_event=self._on_event, on_token=self._on_token)
                iterations += 1
                if self._state.execution_status is Status.FINISHED and self._guards.stop_denied():
                    self._state.execution_status = Status.RUNNING
                elif self._state.execution_status not in _STOPS_RUN and self._guards.stuck():
                    return
                if self._state.execution_status in _STOPS_RUN:
                    return
                spent = self._over_budget()
                if spent is not None:
                    self._end_run_in_error(
                        "MaxBudgetReached",
                        f"The agent reached the maximum budget limit "
                        f"(${self.max_budget_per_run:.4f}): this conversation has cost "
                        f"${spent:.4f}. Raise max_budget_per_run to go on.",
                    )
                    return
                if iterations >= self.max_iteration_per_run:
                    self._end_run_in_error(
                        "MaxIterationsReached",
                        f"The agent reached the maximum iterations limit ({iterations}) "
                        f"without finishing (max_iteration_per_run={iterations}). Send a "
                        "message to continue, or raise the limit.",
                    )
                    return

    def _over_budget(self) -> float | None:
        """The conversation's whole LLM cost once it has reached the budget, else None."""
        if self.max_budget_per_run is None:
            return None
        spent = self._state.stats.get_combined_metrics().accumulated_cost
        return spent if spent >= self.max_budget_per_run else None

    def _end_run_in_error(self, code: str, detail: str) -> None:
        self._state.execution_status = Status.ERROR
        self._on_event(ConversationErrorEvent(code=code, detail=detail))

    def _record_pause(self) -> None:
        """PAUSED, with a PauseEvent; an InterruptEvent for an `arun` interrupted (as the
        SDK records them)."""
        with self._state:
            self._pause_requested.clear()
            if self._state.execution_status in _PAUSABLE:
                self._state.execution_status = Status.PAUSED
                interrupted = self._asynchronous and self._cancel.is_set()
                self._on_event(InterruptEvent() if interrupted else PauseEvent())

    def pause(self) -> None:
        """Pause between steps; callable from any thread. Records one PauseEvent.

        Only an idle or running conversation pauses: one that finished, failed, got stuck
        or waits for confirmation has stopped already and keeps saying why.
        """
        self._writable("be paused")
        if self._running:
            self._pause_requested.set()
            self._pause_tools()  # a sub-agent at work pauses with its parent
            return
        if self._state.execution_status in _PAUSABLE:
            self._ensure_agent_ready()
            self._record_pause()

    def _pause_tools(self) -> None:
        try:
            tools = self.agent.tools_map
        except RuntimeError:
            return
        for tool in list(tools.values()):
            if tool.executor is not None:
                tool.executor.pause()

    def interrupt(self) -> None:
        """Stop now, from any thread: abandon the LLM call and kill the running command.

        The conversation pauses and records what happened; `run()` continues it later.
        """
        self._pause_requested.set()
        self._cancel.set()
        try:
            tools = self.agent.tools_map
        except RuntimeError:
            return
        for tool in list(tools.values()):
            if tool.executor is not None:
                tool.executor.interrupt()

    def fork(
        self,
        *,
        conversation_id: ConversationID | None = None,
        agent: AgentBase | None = None,
        title: str | None = None,
        tags: dict[str, str] | None = None,
        reset_metrics: bool = True,
        from_event_id: EventID | None = None,
    ) -> LocalConversation:
        """A new conversation, saved beside this one, holding a copy of its events under a
        new id (`conversation_id`, or a fresh one): the whole tree with this HEAD, or with
        `from_event_id` only the branch up to that event, which becomes the fork's HEAD.

        The fork starts idle with the source's memory, its own agent (a copy of `agent` or of
        this one), `tags` and `title`, and fresh cost and token counts unless
        `reset_metrics` is False; it records this conversation (and the event) as its
        parent. The source is not changed. ValueError for an unknown `from_event_id`;
        ConversationIdTakenError (a ValueError) when `conversation_id` is taken.
        """
        return fork_local(
            self,
            conversation_id=conversation_id,
            agent=agent,
            title=title,
            tags=tags,
            reset_metrics=reset_metrics,
            from_event_id=from_event_id,
        )

    def navigate_to(self, event_id: EventID | None) -> None:
        """Move HEAD to `event_id` (None: an empty HEAD): the agent's next context, and what
        the conversation shows, become the branch ending there. Nothing is deleted: the
        next event appended starts a sibling branch, and every branch stays in the log.

        Waits for a running step to end (a run goes on from the new HEAD). Actions left
        unanswered on the new branch wait for the user (WAITING_FOR_CONFIRMATION: `run()`
        confirms them), never run on their own; a conversation that waited on actions of
        the branch left behind is idle again. ValueError for an id not in this conversation.
        """
        self._writable("move its HEAD")
        with self._state:
            if event_id is not None and event_id not in self._state.events:
                raise ValueError(f"Unknown event_id: {event_id}")
            self._state.move_head(event_id)
            settled = self._state.execution_status in (
                Status.WAITING_FOR_CONFIRMATION,
                Status.FINISHED,  # the finish is the branch left behind's
            )
            if not self._guards.unconfirmed_actions_wait() and settled:
                self._state.execution_status = Status.IDLE

    def set_title(self, title: str) -> None:
        """Rename the conversation (saved, and told to the callbacks); ValueError if empty."""
        title = title.strip()
        if not title:
            raise ValueError("a title cannot be empty")
        self._writable("be renamed")
        self._state.title = title

    def set_confirmation_policy(self, policy: ConfirmationPolicyBase) -> None:
        """Set which actions wait for the user (saved with the conversation)."""
        self._writable("change its confirmation policy")
        self._state.confirmation_policy = policy

    def set_security_analyzer(self, analyzer: SecurityAnalyzerBase | None) -> None:
        """Set the analyzer that rates actions (None: no ratings, all UNKNOWN)."""
        self._writable("change its security analyzer")
        self._state.security_analyzer = (
            analyzer.with_workspace(self.workspace.working_dir) if analyzer is not None else None
        )

    def reject_pending_actions(
        self, reason: str = "User rejected the action.", action_ids: Iterable[str] | None = None
    ) -> None:
        """Reject pending actions (all, or those in `action_ids`) without running them.

        Each gets a UserRejectObservation carrying `reason`, which the agent reads. Actions
        not rejected stay pending and run on the next `run()`. ValueError for an id that is
        not pending.
        """
        self._writable("decide on waiting actions")
        with self._state:
            pending = self._state.get_unmatched_actions(self._state.active_branch())
            chosen = pending
            if action_ids is not None:
                wanted = set(action_ids)
                unknown = wanted - {a.id for a in pending}
                if unknown:
                    raise ValueError(
                        f"not pending: {', '.join(sorted(unknown))}; pending are "
                        f"{', '.join(a.id for a in pending) or 'none'}"
                    )
                chosen = [a for a in pending if a.id in wanted]
            for action in chosen:
                self._on_event(
                    UserRejectObservation(
                        action_id=action.id,
                        tool_name=action.tool_name,
                        tool_call_id=action.tool_call_id,
                        rejection_reason=reason,
                    )
                )
            if len(chosen) == len(pending) and (
                self._state.execution_status is Status.WAITING_FOR_CONFIRMATION
            ):
                self._state.execution_status = Status.IDLE

    def update_secrets(self, secrets: Mapping[str, SecretValue]) -> None:
        """Add secrets: values, or sources and functions looked up when a command names them."""
        self._writable("take secrets")
        self._state.secret_registry.update_secrets(secrets)
        self._state.save_secrets()

    def execute_tool(self, tool_name: str, action: Action) -> Observation:
        """Run one tool directly (no confirmation, no events); KeyError if it is unknown."""
        self._writable("run tools")
        self._ensure_agent_ready()
        tool = self.agent.tools_map.get(tool_name)
        if tool is None:
            known = ", ".join(sorted(self.agent.tools_map))
            raise KeyError(f"tool '{tool_name}' not found: this agent's tools are {known}")
        return tool(action, self)

    def ask_agent(self, question: str) -> str:
        """Answer a side question from the history; records nothing, changes no status."""
        self._writable("ask its model")
        self._ensure_agent_ready()
        answer = str(self.agent.ask(question, self._state, llm=self._ask_agent_llm()))
        return self._state.secret_registry.mask_secrets_in_output(answer)

    def switch_llm(self, llm: LLM) -> None:
        """Think with `llm` from the next LLM call on (a running step finishes first).

        `llm` is registered under its usage_id, so its cost and tokens are counted apart;
        an LLM already registered under that id is reused if configured the same, and a
        different one is a ValueError (give the new LLM its own usage_id). The switch is
        saved with the conversation, and side questions (`ask_agent`) follow it.
        """
        self._writable("switch its LLM")
        if not isinstance(llm, LLM):
            raise TypeError(f"switch_llm takes an LLM, not {type(llm).__name__}")
        new_llm = self._registered(llm)
        self._register_routed_llms(new_llm)
        with self._state:
            self.agent = self.agent.model_copy(update={"llm": new_llm})
            self._state.agent = self.agent
            with self._ask_llm_lock:
                self.llm_registry.remove(ASK_AGENT_LLM_USAGE_ID)  # re-copied from the new LLM

    def switch_profile(self, profile_name: str) -> None:
        """Think with the LLM saved as `profile_name` (in the default `LLMProfileStore`)
        from the next LLM call on, counted under the usage id "profile:<name>".

        The profile is read once per conversation; its key is restored with this
        conversation's cipher if it was saved encrypted. FileNotFoundError names the saved
        profiles; ValueError says what is wrong with a damaged one.
        """
        usage_id = f"profile:{profile_name}"
        try:
            llm = self.llm_registry.get(usage_id)
        except KeyError:
            from ohtui.sdk.llm.llm_profile_store import LLMProfileStore

            cipher = self._fork_options["cipher"]
            loaded = LLMProfileStore().load(profile_name, cipher=cipher)
            llm = loaded.model_copy(update={"usage_id": usage_id})
        self.switch_llm(llm)

    def _registered(self, llm: LLM) -> LLM:
        """`llm`, or the same-configured LLM already registered under its usage_id."""
        try:
            existing = self.llm_registry.get(llm.usage_id)
        except KeyError:
            self.llm_registry.add(llm)
            return llm
        if existing is llm or same_llm(existing, llm):
            return existing
        raise ValueError(
            f"usage_id '{llm.usage_id}' already names another LLM in this conversation "
            f"('{existing.model}'); give the LLM to switch to its own usage_id, e.g. "
            f"LLM(model='{llm.model}', usage_id='{llm.model.rsplit('/', 1)[-1]}', ...)"
        )

    def _ask_agent_llm(self) -> LLM:
        """The agent's LLM, copied once under its own usage id and without streaming."""
        with self._ask_llm_lock:
            try:
                return self.llm_registry.get(ASK_AGENT_LLM_USAGE_ID)
            except KeyError:
                llm = self.agent.llm.model_copy(
                    update={"usage_id": ASK_AGENT_LLM_USAGE_ID, "stream": False}
                )
                self.llm_registry.add(llm)
                return llm

    def generate_title(self, llm: LLM | None = None, max_length: int = 50) -> str:
        """A title from the first user message (LLM-written, or truncated if the LLM fails)."""
        self._writable("ask its model for a title")
        title = generate_conversation_title(
            self._state.active_branch(),
            llm or self.agent.llm,
            max_length,
            skip=self._state.blocked_messages,
        )
        return self._state.secret_registry.mask_secrets_in_output(title)

    def condense(self, focus: str | None = None) -> None:
        """Condense the history now: record a CondensationRequest and let the agent's
        condenser handle it at once (after a running step ends; callable from any thread).

        `focus` tells a summarizing condenser what to keep above all. ValueError (saying
        how to configure one) when the agent has no condenser that handles requests;
        NoCondensationAvailableException when there is nothing to condense.
        """
        self._writable("be condensed")
        condenser = self.agent.condenser
        if condenser is None or not condenser.handles_condensation_requests():
            raise ValueError(no_condenser_message(condenser))
        self._ensure_agent_ready()
        with self._state:  # the run loop holds it for each step: a running step ends first
            self.agent.condense_now(self._state, self._on_event, focus=focus)
            self._state.notify_stats_changed()

    def close(self) -> None:
        """Stop any run, close the tools (the shell is killed) and the store, and let go of
        the conversation; idempotent. A read-only conversation is never deleted."""
        if self._closed:
            return
        self._closed = True
        self.interrupt()
        if self.hooks is not None and self._agent_ready:
            self.hooks.run_session_end()
        try:
            self.agent.close()
        except Exception as exc:  # a custom agent's failure must not keep the rest open
            logger.warning(
                "conversation %s: closing its agent failed: %s", self.id, exc, exc_info=True
            )
            AgentBase.close(self.agent)  # the tools hold processes: close them regardless
        self.workspace.register_cost(self._state.stats.get_combined_metrics().accumulated_cost)
        if not self._idle.wait(CLOSE_WAIT_SECONDS):
            logger.warning("conversation %s: run still going after close; abandoning it", self.id)
        if self.checkpointing is not None:
            self.checkpointing.close()
        self._release_kept_shell()
        try:
            if self.delete_on_close and not self.read_only:
                self._state.delete_persisted()
        finally:
            self._state.close()

    def __enter__(self) -> LocalConversation:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _latest_error(events: Sequence[Event], since: int = 0) -> ConversationErrorEvent | None:
    """The newest ConversationErrorEvent among `events[since:]`, read from the end."""
    for index in range(len(events) - 1, since - 1, -1):
        event = events[index]
        if isinstance(event, ConversationErrorEvent):
            return event
    return None


def _agent_already_surfaced_error(events: Sequence[Event], since: int = 0) -> bool:
    """Whether the newest error since event `since` (where this run began) is the agent's own.

    An agent that reports its failure precisely and then raises must not see that report
    buried under a generic one made from the exception.
    """
    error = _latest_error(events, since)
    return error is not None and error.source == "agent"


def _with_client_tools(agent: AgentBase, specs: Sequence[ClientToolSpec]) -> AgentBase:
    """The agent with the client tools `specs` added, and those its tools carry (a resumed
    conversation's) registered so they resolve."""
    if not specs and not client_tool_specs(agent.tools):
        return agent
    tools = with_client_tools(agent.tools, specs)
    return agent if not specs else agent.model_copy(update={"tools": tools})
