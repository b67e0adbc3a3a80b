"""Session: owns one conversation, runs it off the UI thread, and posts what happens.

Everything that can block (opening the database, LLM calls, commands, waiting for the
engine's lock) runs on daemon threads: Textual's thread workers run on an executor that
Python joins at exit, and quitting must never wait for an LLM call or a command. The
engine's callbacks post messages (thread-safe) to the chat screen and return at once.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.message import Message
from textual.message_pump import MessagePump

from ohtui.opening import Callbacks, NoModelError, Target, start
from ohtui.opening.local import find_target
from ohtui.opening.safety import (
    ConversationSafety,
    RuleRow,
    install_safety,
    policy_for,
    policy_of,
)
from ohtui.settings.approval_rules import ApprovalRuleStore
from ohtui.settings.choices import ConfirmationPolicy
from ohtui.settings.mcp_trust import (
    TrustStore,
    confinement,
    read_project_servers,
    trust_project,
    trusted_servers,
    what_changed,
)
from ohtui.settings.plugin_trust import review_plugin, trust_plugin
from ohtui.tui import messages as msg
from ohtui.tui.approval_types import ApprovalDecision, PendingActionView
from ohtui.tui.checkpoint_types import CheckpointRow, FileChange, RestorePreview
from ohtui.tui.options import AppOptions
from ohtui.tui.preload import load_engine
from ohtui.tui.status import RunStatus

if TYPE_CHECKING:
    from pathlib import Path

    from ohtui.sdk import BaseConversation, CheckpointEvent, Event
    from ohtui.sdk.conversation import LeaseHolder
    from ohtui.sdk.llm import LLMStreamChunk
    from ohtui.sdk.mcp import MCPClientManager, ServerInfo
    from ohtui.sdk.plugins import Plugin
    from ohtui.settings.profile import Profile

logger = logging.getLogger(__name__)

POLICY_KEYS = ("confirmation_policy", "ohtui_confirmation_policy")
"""State updates that change the confirmation policy (the second: ohtui's whole policy on a
server, ohtui.sdk.wire.extensions.POLICY_FIELD; not imported: this module loads before the
engine)."""
HISTORY_TAIL = 40
"""Events read when a conversation opens; older ones are read as the user scrolls up."""
TITLE_TIMEOUT = 30.0
"""Seconds a title may take; without one the first message, cut short, is the title."""
CLOSE_TIMEOUT = 0.7
"""Seconds `close` waits for the engine to stop before giving up on it."""
HANDOVER_TIMEOUT = 5.0
"""Seconds a new session waits for the one before it to let go of its conversation (which may
be the one it opens): longer than the engine's own wait for a run to stop."""


class Session:
    """The UI's handle on one conversation. Its public methods are called on the UI thread."""

    def __init__(
        self,
        options: AppOptions,
        profile: Profile,
        target: MessagePump,
        after: Session | None = None,
        frame_idle: bool = False,
    ) -> None:
        """`after`: the session this one replaces, whose conversation it waits to be let go;
        `frame_idle`: the app's first frame has been idle already (see `frame_idle()`)."""
        self.options = options
        self.profile = profile
        self._target = target
        self._after = after
        self._closer: threading.Thread | None = None
        self._conversation: BaseConversation | None = None
        self._rejects_all_only = False
        self.held_by: LeaseHolder | None = None
        """Who runs the conversation when another ohtui does: it is open read-only here."""
        self.read_only_reason: str | None = None
        """Why the conversation is open read-only when no other ohtui has it."""
        self._lock = threading.Lock()
        self._running = False
        self._rerun = False
        self._condensing = False
        self._restoring = False
        self._queue: list[str] = []
        self._delivering = False
        self._closed = False
        self._tokens: list[tuple[str, str, str]] = []
        self._tokens_lock = threading.Lock()
        self._tokens_announced = False
        self._heap_settled = False
        """The heap was settled at this session's first streamed token (litellm is in)."""
        self.conversation_id: str | None = None
        self.model: str | None = options.model
        self._rule_store = (
            ApprovalRuleStore(options.rules_file, profile if profile.config_path else None)
            if options.rules_file
            else None
        )
        self._safety: ConversationSafety | None = None
        self._titled = False
        self._mcp_trust = TrustStore(options.mcp_trust_file)
        self._plugin_trust = TrustStore(options.plugin_trust_file)
        self._trust_answer: bool | None = None
        self._trust_answered = threading.Event()
        self._mcp_reported: set[tuple[str, str]] = set()
        self._calling = False
        """An LLM call of the run is connecting (no answer from it yet)."""
        self._frame_idle = frame_idle
        """The app's first frame has been idle: the MCP servers may start."""

    # --- plumbing -------------------------------------------------------------------------

    def _post(self, message: Message) -> None:
        if not self._closed:
            self._target.post_message(message)

    @staticmethod
    def _spawn(work: Callable[[], None], name: str) -> None:
        threading.Thread(target=work, name=name, daemon=True).start()

    @property
    def conversation(self) -> BaseConversation | None:
        """The open conversation (None until it has opened)."""
        return self._conversation

    @property
    def running(self) -> bool:
        """Whether a run is going on."""
        return self._running

    # --- opening --------------------------------------------------------------------------

    def open(self) -> None:
        """Open the conversation (new, or resumed) in the background."""
        self._spawn(self._open, "ohtui-open")

    def _open(self) -> None:
        load_engine()
        replacing = self._after is not None
        if self._after is not None:
            self._after.wait_closed(HANDOVER_TIMEOUT)
            self._after = None
        try:
            self._show_saved_history()
        except Exception:  # the history is shown when the conversation opens, or why not
            logger.exception("showing the saved history early failed")
        try:
            conversation, resumed = self._create_conversation()
        except NoModelError as exc:
            self._post(msg.SetupNeeded(str(exc)))
            return
        except Exception as exc:  # every failure becomes a message on screen
            logger.exception("opening the conversation failed")
            self._post(msg.SessionFailed(_describe(exc)))
            return
        self._rejects_all_only = _rejects_all_only(
            conversation
        )  # asks the server: not on the UI thread
        with self._lock:
            closed = self._closed
            if not closed:
                self._conversation = conversation
        if closed:  # the app quit (or moved on) while this opened: let it go again
            if len(conversation.state.events) == 0:
                conversation.delete_on_close = True  # as close() does: nothing to resume
            conversation.close()
            return
        self._watch_mcp()
        self._start_mcp()
        self.conversation_id = conversation.id.hex
        state = conversation.state
        events = state.events
        total = len(events)
        history = events[max(0, total - HISTORY_TAIL) : total]
        self._post(
            msg.SessionReady(
                conversation_id=conversation.id.hex,
                title=state.title,
                model=conversation.agent.llm.model,
                workspace=conversation.workspace.working_dir,
                status=run_status(conversation),
                policy=self.policy,
                history=list(history),
                has_older=total > HISTORY_TAIL,
                total_events=total,
                resumed=resumed,
                sandbox=self.sandbox,
                held_by=self.held_by,
                read_only=self.read_only_reason,
                server=self.server,
            )
        )
        self._post_stats()
        settle_heap(reclaim=replacing)
        if self.held_by is not None or self.read_only_reason is not None:
            return  # nothing here may run, approve or send: the chat screen says so
        if run_status(conversation) is RunStatus.WAITING_FOR_CONFIRMATION:
            self._post(msg.ApprovalNeeded(self.pending_views()))
        with self._lock:
            queued = bool(self._queue)
        if queued:
            self._deliver_queue()

    def _show_saved_history(self) -> None:
        """Resuming: show the saved history at once, before the keyring and the agent are
        ready (the conversation opens a moment later; a failure here is reported then)."""
        options = self.options
        if not (options.resume_id or options.continue_latest) or self.profile.settings.server.url:
            return  # a conversation on a server: its history comes from there
        from ohtui.sdk.conversation import history_tail

        directory = options.persistence_dir or self.profile.conversations_dir
        target = Target(options.resume_id, options.continue_latest)
        summary = find_target(directory, options.workspace, target)
        if summary is None:
            return
        events, total = history_tail(directory, summary.id, HISTORY_TAIL)
        status = RunStatus(summary.status) if summary.status else None
        self._post(msg.SavedHistory(events, total, total > len(events), status))

    def _create_conversation(self) -> tuple[BaseConversation, bool]:
        """Open the conversation: the options' factory's, or the local one the settings
        describe (read-only when another ohtui has it open or its folder cannot be written)."""
        options, profile = self.options, self.profile.load()
        callbacks = Callbacks(
            self._on_event, self._on_token, self._on_retry, self._on_attempt, self._on_connection
        )
        if options.conversation_factory is not None:
            conversation = options.conversation_factory(callbacks)
            self.model = conversation.agent.llm.model
            resumed = len(conversation.state.events) > 0
            self._install_safety(conversation, profile, resumed)
            return conversation, resumed
        started = start(
            profile,
            options.workspace,
            options.persistence_dir or profile.conversations_dir,
            Target(options.resume_id, options.continue_latest, options.conversation_id),
            callbacks,
            rules=self._rule_store,
            api_key=options.api_key,
            stream=options.stream,
            read_only_fallback=True,
            project_mcp=self._project_mcp,
            defer_mcp=True,  # started once the first frame is idle (see frame_idle)
            plugin_check=self._trusted_plugins,
        )
        conversation = started.conversation
        self.model = started.opened.model
        self.held_by = started.held_by
        self.read_only_reason = started.read_only_reason
        if self.held_by is None and self.read_only_reason is None:
            self._safety = ConversationSafety(conversation, self._rule_store)
        for notice in started.notices:
            self._post(msg.Notice(notice, "warning"))
        return conversation, started.opened.resumed

    # --- MCP servers ---------------------------------------------------------------------

    def _project_mcp(self, workspace: Path) -> dict[str, Any]:
        """The .mcp.json servers of the folder the conversation opens in (a resumed one's
        own), once the user trusts this content of it (asked here, on the opening thread,
        while the UI shows the question)."""
        project = read_project_servers(workspace)
        servers, notice = trusted_servers(project, workspace, self._mcp_trust)
        if project is None or notice is None or project.error is not None:
            if notice:
                self._post(msg.Notice(notice, "warning"))
            return servers
        profile = self.profile
        secrets = profile.user_secrets().keys()
        where = confinement(profile.settings.sandbox.config())
        while True:
            changed = what_changed(project, workspace, self._mcp_trust)
            note = (
                "They start now and whenever ohtui opens this workspace, until what they run "
                "changes. Cancel starts none of them."
            )
            question = f"Trust the MCP servers of this workspace's {project.path.name}?"
            if not self._ask(question, project.review(secrets, where), changed, note):
                self._post(
                    msg.Notice(f"{project.path} is not trusted: its servers are off.", "warning")
                )
                return {}
            now = read_project_servers(workspace)
            if now is None or now.error is not None:
                return {}
            if now.digest == project.digest:  # nothing changed while the user read it
                trust_project(project, workspace, self._mcp_trust)
                return project.confined_servers()
            project = now

    def _trusted_plugins(self, plugins: list[Plugin]) -> list[Plugin]:
        """The plugins to use: those the user trusted as they are, or trusts now (asked
        here, on the opening thread, before anything of them is used)."""
        profile = self.profile
        secrets = profile.user_secrets().keys()
        where = confinement(profile.settings.sandbox.config())
        kept = []
        for plugin in plugins:
            reviewed = review_plugin(plugin, self._plugin_trust, secrets, where)
            if self._plugin_trust.is_trusted(reviewed.key, reviewed.digest):
                kept.append(plugin)
                continue
            note = (
                "Its hooks and servers run in every conversation from now on, until the plugin "
                "changes. Cancel leaves it out of this conversation."
            )
            question = f"Trust the plugin {reviewed.title}?"
            if self._ask(question, reviewed.text, reviewed.changed, note):
                trust_plugin(reviewed, self._plugin_trust)
                kept.append(plugin)
            else:
                self._post(
                    msg.Notice(
                        f"Plugin {reviewed.title} is not trusted: it is left out.", "warning"
                    )
                )
        return kept

    def _ask(self, question: str, review: str, changed: list[str], note: str) -> bool:
        """Ask the user to trust what would run, and wait for the answer (opening thread)."""
        self._trust_answered.clear()
        self._post(msg.TrustNeeded(question, review, changed, note))
        self._trust_answered.wait()
        return bool(self._trust_answer)

    def answer_trust(self, trusted: bool | None) -> None:
        """The user's answer to TrustNeeded (the opening goes on)."""
        self._trust_answer = bool(trusted)
        self._trust_answered.set()

    def frame_idle(self) -> None:
        """The app's first frame has been idle: start the MCP servers (now, or as soon as
        the conversation is open), so their start-up never slows that frame."""
        self._frame_idle = True
        self._start_mcp()

    def _start_mcp(self) -> None:
        """(Either thread; starting is idempotent.) Start the servers once both the frame
        has been idle and the conversation is open."""
        from ohtui.sdk import LocalConversation

        conversation = self._conversation
        if self._frame_idle and isinstance(conversation, LocalConversation):
            conversation.start_mcp()

    def _mcp_manager(self) -> MCPClientManager | None:
        from ohtui.sdk import LocalConversation

        conversation = self._conversation
        if isinstance(conversation, LocalConversation):
            return conversation.agent.mcp
        return None

    def mcp_servers(self) -> list[ServerInfo]:
        """The MCP servers of the conversation, with their status and tools."""
        manager = self._mcp_manager()
        return manager.servers() if manager is not None else []

    def set_mcp_enabled(self, name: str, enabled: bool) -> None:
        """Turn an MCP server on or off for this session; the agent's next step sees it."""
        manager = self._mcp_manager()
        if manager is not None:
            manager.set_enabled(name, enabled)

    def _watch_mcp(self) -> None:
        manager = self._mcp_manager()
        if manager is not None:
            manager.add_listener(self._mcp_changed)
            self._mcp_changed()

    def _mcp_changed(self) -> None:
        """(The MCP loop thread.) Tell the screen; warn once about each new failure."""
        self._post(msg.McpChanged())
        for server in self.mcp_servers():
            if server.error is None or (server.name, server.error) in self._mcp_reported:
                continue
            self._mcp_reported.add((server.name, server.error))
            lines = server.error.splitlines()
            why = "\n".join([lines[0], *lines[1:][-2:]])  # the reason, and stderr's last lines
            self._post(msg.Notice(f"MCP server '{server.name}' failed: {why}", "warning"))

    def _install_safety(
        self, conversation: BaseConversation, profile: Profile, resumed: bool
    ) -> None:
        """Rate actions and apply the policy: a resumed conversation keeps its own unless
        this run chose one."""
        self._safety = ConversationSafety(conversation, self._rule_store)
        policy = policy_for(profile, resumed, conversation.state.confirmation_policy)
        problem = install_safety(conversation, policy, self._rule_store)
        if problem:
            self._post(msg.Notice(problem, "warning"))

    # --- engine callbacks (worker threads) ------------------------------------------------

    def _on_event(self, event: Event) -> None:
        from ohtui.sdk import ConversationExecutionStatus, ConversationStateUpdateEvent

        if not isinstance(event, ConversationStateUpdateEvent):
            self._answered()
        if isinstance(event, ConversationStateUpdateEvent):
            if event.key == "execution_status":
                engine_status = ConversationExecutionStatus(event.value)
                self._post(msg.StatusChanged(RunStatus(engine_status.value)))
            elif event.key == "stats":
                self._post_stats()
            elif event.key == "title" and event.value:
                self._post(msg.TitleChanged(str(event.value)))
            elif event.key in POLICY_KEYS and self._safety is not None:
                self._post(msg.PolicyChanged(self._safety.policy))  # whoever changed it
            return
        self._post(msg.EngineEvent(event, self._index_of(event)))

    def _index_of(self, event: Event) -> int | None:
        """Where `event` is in the conversation (the screen shows each index once)."""
        from ohtui.sdk.conversation.event_store import EventLog

        conversation = self._conversation
        events = conversation.state.events if conversation is not None else None
        if not isinstance(events, EventLog):  # a remote one's: in the order they come
            return None
        try:
            return events.get_index(event.id)
        except KeyError:
            return None

    def _on_connection(self, state: str, reason: str) -> None:
        self._post(msg.ConnectionChanged(state, reason))

    @property
    def server(self) -> str:
        """host:port of the agent server the conversation runs on ("": here)."""
        from ohtui.sdk import RemoteConversation

        conversation = self._conversation
        if isinstance(conversation, RemoteConversation):
            return conversation.workspace.display_host
        return ""

    @property
    def server_url(self) -> str | None:
        """The URL of the agent server the conversation runs on (None: here)."""
        from ohtui.sdk import RemoteConversation

        conversation = self._conversation
        if isinstance(conversation, RemoteConversation):
            return conversation.workspace.host
        return None

    @property
    def rejects_all_only(self) -> bool:
        """Whether the agent server can only reject all waiting actions at once."""
        return self._rejects_all_only

    def _on_attempt(self, attempt: int) -> None:
        if not self._running:
            return  # a title or a side question: not the run the status bar follows
        self._calling = True
        total = self._attempts()
        self._post(
            msg.CallActivity("connecting…" if attempt == 1 else f"connecting… ({attempt}/{total})")
        )

    def _on_retry(self, attempt: int, wait: float, error: Exception) -> None:
        if not self._running:
            return
        self._post(
            msg.CallActivity(
                f"retrying {attempt + 1}/{self._attempts()}",
                until=time.monotonic() + wait,
                reason=in_words(error),
            )
        )

    def _attempts(self) -> int:
        conversation = self._conversation
        return conversation.agent.llm.num_retries + 1 if conversation is not None else 1

    def _answered(self) -> None:
        """The model answered (a token or an event): the call is no longer connecting."""
        if self._calling:
            self._calling = False
            self._post(msg.CallActivity(""))

    def _on_token(self, chunk: LLMStreamChunk) -> None:
        # Chunks are buffered and announced once until the UI takes them: however fast they
        # come, the UI's queue holds one message, and each redraw shows all that arrived.
        if not (chunk.content or chunk.reasoning_content):
            return
        self._answered()
        if not self._heap_settled:
            self._heap_settled = True
            settle_heap()  # the model's client is loaded now: long-lived from here on
        with self._tokens_lock:
            self._tokens.append((chunk.response_id, chunk.content, chunk.reasoning_content))
            if self._tokens_announced:
                return
            self._tokens_announced = True
        self._post(msg.TokensReady())

    def take_tokens(self) -> list[tuple[str, str, str]]:
        """The streamed (response id, text, reasoning) pieces since the last call, merged."""
        with self._tokens_lock:
            pieces, self._tokens = self._tokens, []
            self._tokens_announced = False
        merged: list[tuple[str, str, str]] = []
        for response_id, content, reasoning in pieces:
            if merged and merged[-1][0] == response_id:
                _, text, thought = merged[-1]
                merged[-1] = (response_id, text + content, thought + reasoning)
            else:
                merged.append((response_id, content, reasoning))
        return merged

    def _post_stats(self) -> None:
        conversation = self._conversation
        if conversation is None:
            return
        stats = conversation.conversation_stats
        context = stats.context  # tokens in context after the latest call, and the window
        self._post(
            msg.StatsChanged(
                cost=stats.get_combined_metrics().accumulated_cost,
                context_used=context.tokens if context is not None else 0,
                context_window=context.window if context is not None else None,
                context_trigger=self.profile.settings.context.trigger,
            )
        )

    # --- sending and running --------------------------------------------------------------

    def submit(self, text: str) -> None:
        """Send a message; while a run goes on (or before opening) it is queued."""
        with self._lock:
            busy = self._running or self._conversation is None
            if busy:
                self._queue.append(text)
                queued = list(self._queue)
        if busy:
            self._post(msg.QueueChanged(queued))
            if self._conversation is not None:
                self._deliver_queue()
            return
        self._spawn(lambda: self._send_then_run(text), "ohtui-send")

    def _send_then_run(self, text: str) -> None:
        conversation = self._conversation
        if conversation is None:
            return
        try:
            if run_status(conversation) is RunStatus.WAITING_FOR_CONFIRMATION:
                # run() would take the waiting actions as approved: a reply is not a yes.
                conversation.reject_pending_actions(NOT_APPROVED)
                self._post(msg.Notice("The waiting actions were not run: you replied instead."))
            conversation.send_message(text)
        except Exception as exc:  # shown to the user; the conversation stays usable
            logger.exception("sending a message failed")
            self._post(msg.SessionFailed(_describe(exc)))
            return
        self.start_run()

    def _deliver_queue(self) -> None:
        """Hand queued messages to the engine, in order, each at the next step boundary."""
        with self._lock:
            if self._delivering:
                return
            self._delivering = True
        self._spawn(self._deliver_loop, "ohtui-deliver")

    def _deliver_loop(self) -> None:
        from ohtui.sdk import ConversationExecutionStatus

        conversation = self._conversation
        assert conversation is not None
        while True:
            with self._lock:
                if not self._queue or self._closed:
                    self._delivering = False
                    return
                text = self._queue[0]
            try:
                conversation.send_message(text)  # waits for the current step to end
            except Exception as exc:  # shown to the user; the rest stays queued
                logger.exception("delivering a queued message failed")
                self._post(msg.SessionFailed(_describe(exc)))
                with self._lock:
                    self._delivering = False
                return
            with self._lock:
                self._queue.pop(0)
                queued = list(self._queue)
            self._post(msg.QueueChanged(queued))
            if conversation.state.execution_status is not ConversationExecutionStatus.RUNNING:
                self.start_run()  # the run had ended: start one for this message

    def start_run(self) -> None:
        """Run the conversation (again); a run already going picks the new input up."""
        with self._lock:
            if self._running:
                self._rerun = True
                return
            self._running = True
        self._spawn(self._run_loop, "ohtui-run")

    def _run_loop(self) -> None:
        from ohtui.sdk import ConversationRunError, get_agent_final_response

        conversation = self._conversation
        assert conversation is not None
        while True:
            try:
                conversation.run()
            except ConversationRunError as exc:
                logger.warning("run failed: %s", exc)  # its ConversationErrorEvent is on screen
                self._calling = False
                self._post(msg.CallActivity(in_words(exc.original_exception)))
            except Exception as exc:  # never let the worker die silently
                logger.exception("run crashed")
                self._post(msg.SessionFailed(_describe(exc)))
            with self._lock:
                if self._rerun and not self._closed:
                    self._rerun = False
                    continue
                self._running = False
            break
        status = run_status(conversation)
        final = ""
        if status is RunStatus.FINISHED:
            final = get_agent_final_response(conversation.state.events[-20:])
        self._post(msg.RunFinished(status, final))
        if status is RunStatus.WAITING_FOR_CONFIRMATION:
            self._post(msg.ApprovalNeeded(self.pending_views()))
        self._title_once(conversation)

    def _title_once(self, conversation: BaseConversation) -> None:
        """After the first exchange, have the model title an untitled conversation."""
        if self._titled or conversation.state.title or not self.profile.settings.ui.auto_title:
            return
        self._titled = True
        llm = conversation.agent.llm.model_copy(
            update={"num_retries": 0, "stream": False, "timeout": TITLE_TIMEOUT}
        )
        try:
            title = conversation.generate_title(llm=llm)
        except ValueError:  # no user message (a blocked prompt): nothing to title yet
            self._titled = False
            return
        if not self._closed and not conversation.state.title:
            conversation.set_title(title)

    # --- control --------------------------------------------------------------------------

    def pause(self) -> None:
        """Pause between steps (Esc)."""
        if self._conversation is not None:
            self._conversation.pause()

    def interrupt(self) -> None:
        """Stop now: abandon the LLM call, kill the running command."""
        if self._conversation is not None:
            self._conversation.interrupt()

    def decide(self, decision: ApprovalDecision) -> None:
        """Apply the user's approval decision, then run on."""
        self._spawn(lambda: self._decide(decision), "ohtui-decide")

    def _decide(self, decision: ApprovalDecision) -> None:
        conversation = self._conversation
        if conversation is None:
            return
        try:
            assert self._safety is not None
            if decision.policy:
                self._safety.set_policy(decision.policy)
                self._post(msg.PolicyChanged(self._safety.policy))
            for rule in decision.rules:
                self._safety.add_rule(rule)
            if decision.rejected:
                reason = decision.reason or "The user rejected this action."
                conversation.reject_pending_actions(reason, action_ids=decision.rejected)
            if decision.outside_sandbox:
                conversation.approve_outside_sandbox(decision.outside_sandbox)
        except Exception as exc:  # shown to the user; nothing ran
            logger.exception("applying the approval decision failed")
            self._post(msg.SessionFailed(_describe(exc)))
            return
        self.start_run()

    def set_policy(self, policy: ConfirmationPolicy) -> None:
        """Switch the confirmation policy, keeping the rules."""
        safety = self._safety
        if safety is None:
            return

        def switch() -> None:
            try:
                safety.set_policy(policy)
            except Exception as exc:  # told; the policy in force stays as it was
                logger.exception("changing the confirmation policy failed")
                self._post(msg.Notice(f"The policy was not changed: {_describe(exc)}", "error"))
            self._post(msg.PolicyChanged(safety.policy))  # the one in force, whatever happened

        self._spawn(switch, "ohtui-policy")

    @property
    def sandbox(self) -> str:
        """How commands are confined: e.g. "workspace-write, no network", or "off"; on an
        agent server, as it reports it ("unknown" when it does not say)."""
        from ohtui.sdk import RemoteConversation

        conversation = self._conversation
        if isinstance(conversation, RemoteConversation):
            reported = conversation.state.reported_sandbox
            return reported.describe() if reported is not None else "unknown"
        config = conversation.sandbox if conversation is not None else None
        return config.describe() if config is not None else "off"

    def set_sandbox(self, mode: str) -> None:
        """Confine commands as `mode` says for the rest of this session (not saved)."""
        conversation = self._conversation
        if conversation is None:
            return

        def switch() -> None:
            from ohtui.opening.sandbox import install_sandbox
            from ohtui.sdk.sandbox import SandboxMode

            config = self.profile.settings.sandbox.config()
            try:
                problem = install_sandbox(
                    conversation,
                    config.model_copy(update={"mode": SandboxMode(mode)}),
                    self.profile.config_path,
                )
            except NotImplementedError as exc:  # its tools run elsewhere
                self._post(msg.Notice(str(exc), "warning"))
                return
            if problem:
                self._post(msg.Notice(problem, "warning"))
            self._post(msg.SandboxChanged(self.sandbox))

        self._spawn(switch, "ohtui-sandbox")

    def rules(self) -> list[RuleRow]:
        """The approval rules in force."""
        return self._safety.rows() if self._safety is not None else []

    def remove_rules(self, rule_ids: list[str]) -> None:
        """Remove approval rules by id."""
        if self._safety is not None:
            self._safety.remove_rules(rule_ids)

    @property
    def policy(self) -> ConfirmationPolicy:
        """The current confirmation policy."""
        if self._safety is not None:
            return self._safety.policy
        if self._conversation is not None:  # read-only: the one it was saved with
            return policy_of(self._conversation)
        return self.options.policy or ConfirmationPolicy.RISKY

    def pending_views(self) -> list[PendingActionView]:
        """The actions waiting for approval, as the modal shows them."""
        from ohtui.tui.pending import pending_views

        conversation = self._conversation
        if conversation is None:
            return []
        return pending_views(conversation)

    # --- side requests --------------------------------------------------------------------

    def ask(self, question: str) -> None:
        """Answer a side question without recording it (/ask)."""

        def work() -> None:
            conversation = self._conversation
            if conversation is None:
                self._post(msg.SideAnswer(question, "The conversation is still opening.", True))
                return
            try:
                answer = conversation.ask_agent(question)
            except Exception as exc:  # noqa: BLE001 - shown next to the question
                self._post(msg.SideAnswer(question, _describe(exc), True))
                return
            self._post(msg.SideAnswer(question, answer))

        self._spawn(work, "ohtui-ask")

    def condense(self, focus: str | None) -> None:
        """Condense the history now (/condense), `focus` telling the summary what to keep.

        The summary is written on a thread (after a running step ends); the chat shows
        progress from Condensing messages, and the result as the Condensation event."""
        from ohtui.opening.context import HOW_TO_CONDENSE

        conversation = self._conversation
        if conversation is None:
            self._post(msg.Notice("The conversation is still opening: /condense in a moment."))
            return
        condenser = conversation.agent.condenser
        if condenser is None or not condenser.handles_condensation_requests():
            strategy = self.profile.settings.context.strategy
            self._post(
                msg.Notice(
                    f"/condense needs a summarizing condenser; this conversation uses "
                    f"{strategy.label}. To use one, {HOW_TO_CONDENSE}.",
                    "warning",
                )
            )
            return
        with self._lock:
            if self._condensing:
                self._post(msg.Notice("A condensation is already being written."))
                return
            self._condensing = True
        self._post(msg.Condensing(True))
        self._spawn(lambda: self._condense(conversation, focus), "ohtui-condense")

    def _condense(self, conversation: BaseConversation, focus: str | None) -> None:
        from ohtui.sdk.context.condenser import NoCondensationAvailableException

        try:
            conversation.condense(focus or None)
        except NoCondensationAvailableException:
            self._post(
                msg.Notice("Nothing to condense yet: the conversation is still short.", "warning")
            )
        except Exception as exc:
            logger.warning("condensing failed: %s", exc, exc_info=True)
            self._post(msg.Notice(f"The history was not condensed: {_describe(exc)}", "error"))
        finally:
            with self._lock:
                self._condensing = False
            self._post(msg.Condensing(False))

    @property
    def condensing(self) -> bool:
        """Whether a condensation the user asked for is being written."""
        return self._condensing

    def take_queue(self) -> list[str]:
        """Take back the messages queued for the conversation (it will not get them)."""
        with self._lock:
            queued, self._queue = self._queue, []
        return queued

    def set_title(self, title: str | None) -> None:
        """Set the title, or (None) have the model write one."""

        def work() -> None:
            conversation = self._conversation
            if conversation is None:
                return
            try:
                new = title or conversation.generate_title()
            except ValueError:
                self._post(msg.Notice("Nothing to title yet: send a message first.", "warning"))
                return
            try:
                conversation.set_title(new)
            except Exception as exc:  # noqa: BLE001 - e.g. read-only, or the disk is full
                self._post(msg.Notice(f"The title was not changed: {_describe(exc)}", "error"))

        self._spawn(work, "ohtui-title")

    # --- checkpoints ----------------------------------------------------------------------

    def _checkpoint_work(self, what: str, work: Callable[[BaseConversation], None]) -> None:
        """Run `work` on a thread unless nothing can be restored now; its CheckpointError
        (nothing to undo, unknown id, agent running) and any other failure become notices."""
        conversation = self._conversation
        if conversation is None:
            self._post(msg.Notice(f"The conversation is still opening: {what} in a moment."))
            return
        if self._running:
            self._post(
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
                self._post(msg.Notice(_sentence(str(exc)), "warning"))
            except Exception as exc:
                logger.warning("%s failed", what, exc_info=True)
                failed = f"{what[:1].upper()}{what[1:]} failed"
                self._post(msg.Notice(f"{failed}: {_describe(exc)}", "error"))

        self._spawn(guarded, "ohtui-checkpoint")

    def list_checkpoints(self) -> None:
        """Read the checkpoints (/checkpoints) and post them, newest first."""

        def work(conversation: BaseConversation) -> None:
            target = conversation.undo_checkpoint()
            undo_id = target.checkpoint_id if target is not None else None
            rows = [_row(event, undo_id) for event in conversation.list_checkpoints()]
            self._post(msg.CheckpointsListed(rows))

        self._checkpoint_work("/checkpoints", work)

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
            self._post(msg.RestorePreviewReady(preview))

        self._checkpoint_work(what, work)

    def restore(self, checkpoint: CheckpointRow) -> None:
        """Restore the workspace to `checkpoint`; the restore shows as its event's cell."""

        def work(conversation: BaseConversation) -> None:
            with self._lock:
                if self._restoring:
                    return
                self._restoring = True
            try:
                event = conversation.restore_checkpoint(checkpoint.checkpoint_id)
            finally:
                with self._lock:
                    self._restoring = False
            self._post(msg.Restored(checkpoint.before, len(event.changes)))

        self._checkpoint_work("the restore", work)

    def load_older(self, before: int) -> None:
        """Read the page of events before index `before` and post it."""

        def work() -> None:
            conversation = self._conversation
            if conversation is None or before <= 0:
                return
            start = max(0, before - HISTORY_TAIL)
            events = conversation.state.events[start:before]
            self._post(msg.OlderEvents(list(events), has_older=start > 0))

        self._spawn(work, "ohtui-older")

    def load_newer(self, after: int) -> None:
        """Read the page of events from index `after` and post it."""

        def work() -> None:
            conversation = self._conversation
            if conversation is None:
                return
            events = conversation.state.events
            stop = min(after + HISTORY_TAIL, len(events))
            page = events[after:stop] if stop > after else []
            self._post(msg.NewerEvents(list(page), after))

        self._spawn(work, "ohtui-newer")

    def load_page(self, newest: bool) -> None:
        """Read the first page of events, or (`newest`) the last, and post it."""

        def work() -> None:
            conversation = self._conversation
            if conversation is None:
                return
            events = conversation.state.events
            total = len(events)
            start = max(0, total - HISTORY_TAIL) if newest else 0
            stop = total if newest else min(total, HISTORY_TAIL)
            page = events[start:stop] if stop > start else []
            self._post(msg.EventPage(list(page), start, has_older=start > 0, newest=newest))

        self._spawn(work, "ohtui-page")

    # --- closing --------------------------------------------------------------------------

    @property
    def empty(self) -> bool:
        """Whether nothing has been said in the conversation (or it never opened)."""
        conversation = self._conversation
        return conversation is None or len(conversation.state.events) == 0

    def close(self) -> None:
        """Stop the agent and release the conversation, waiting at most CLOSE_TIMEOUT.

        A conversation nothing was said in is deleted: there is nothing to resume. Closing
        again does nothing.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._trust_answered.set()  # an opening waiting for the trust answer gives up
        conversation = self._conversation
        if conversation is None:
            return
        if self.empty and not self._running and not self._queue:
            conversation.delete_on_close = True
        closer = threading.Thread(target=conversation.close, name="ohtui-close", daemon=True)
        self._closer = closer
        closer.start()
        closer.join(CLOSE_TIMEOUT)

    def wait_closed(self, timeout: float) -> None:
        """Wait (at most `timeout` seconds) until `close()` has let go of the conversation."""
        if self._closer is not None:
            self._closer.join(timeout)


def run_status(conversation: BaseConversation) -> RunStatus:
    """The conversation's execution status, in the UI's terms."""
    return RunStatus(conversation.state.execution_status.value)


NOT_APPROVED = "Not approved: the user answered with a new message instead (read it)."


def settle_heap(reclaim: bool = False) -> None:
    """Move every object alive now out of the garbage collector's view.

    The app keeps hundreds of thousands of long-lived objects (modules, litellm's tables,
    the opened history, the UI). Each full collection walks all of them, and streaming
    creates enough new objects to trigger one every few seconds: ~200 ms pauses, a visible
    stutter. Frozen objects are skipped. But a frozen object in a reference cycle (every
    widget is in several) is never collected: freezing again at every model call kept every
    cell ever trimmed from the view, ~30 KB per event. So it is done twice a session: when
    the conversation opens and at its first streamed token; `reclaim` (a conversation was
    left for another) first collects what the sessions before froze and no longer use.
    """
    if reclaim:
        gc.unfreeze()
        gc.collect()
    gc.freeze()


def in_words(error: BaseException, limit: int = 80) -> str:
    """What went wrong, short enough for the status bar (the whole message is in the
    conversation): an LLM error's summary, else the message's first sentence."""
    from ohtui.sdk.llm import LLMError

    if isinstance(error, LLMError):
        return error.summary
    text = str(error).strip()
    line = text.splitlines()[0] if text else type(error).__name__
    end = line.find(". ")
    sentence = line[: end + 1] if end >= 0 else line
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def _describe(exc: BaseException) -> str:
    """A message for the user: our errors say what to do; others get their type named."""
    text = str(exc) or type(exc).__name__
    from_engine = type(exc).__module__.startswith(("ohtui.", "ohtui"))
    return text if from_engine else f"{type(exc).__name__}: {text}"


def _sentence(text: str) -> str:
    """An engine message as a sentence: capitalised, with a full stop."""
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else f"{text}."


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


def _rejects_all_only(conversation: BaseConversation) -> bool:
    """Whether `conversation` runs on an agent server that can only reject all waiting
    actions at once (OpenHands'); blocks while the server is asked."""
    from ohtui.sdk import RemoteConversation

    return (
        isinstance(conversation, RemoteConversation) and not conversation.supports_partial_rejection
    )
