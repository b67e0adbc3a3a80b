"""Session: the UI's handle on one conversation, composed of one part per job.

It opens the conversation off the UI thread (see `ohtui.opening`) and hands it to its parts:
the bridge (engine callbacks to messages), the runner (messages, runs), approvals (policy,
rules, decisions), the sandbox, the MCP servers, the trust questions, titles, checkpoints,
paging and side requests. The engine's callbacks post messages (thread-safe) to the chat
screen and return at once; everything that can block runs on daemon threads (see `Link`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ohtui.opening import NoModelError, Target, start
from ohtui.settings.approval_rules import ApprovalRuleStore
from ohtui.tui import messages as msg
from ohtui.tui.session.approvals import Approvals, rejects_all_only
from ohtui.tui.session.branches import newest_page
from ohtui.tui.session.bridge import Bridge
from ohtui.tui.session.checkpoints import Checkpoints
from ohtui.tui.session.diffs import Diffs
from ohtui.tui.session.finding import Finding
from ohtui.tui.session.heap import settle_heap
from ohtui.tui.session.link import Link
from ohtui.tui.session.mcp import McpServers
from ohtui.tui.session.models import ModelSwitch
from ohtui.tui.session.paging import HISTORY_TAIL, Paging
from ohtui.tui.session.rewinding import Rewinding
from ohtui.tui.session.runner import Runner, run_status
from ohtui.tui.session.sandbox import SandboxSwitch
from ohtui.tui.session.side import SideRequests
from ohtui.tui.session.titles import Titles
from ohtui.tui.session.trust import TrustQuestions
from ohtui.tui.session.words import describe
from ohtui.tui.status import RunStatus
from ohtui.tui.widgets.engine_import import load_engine

if TYPE_CHECKING:
    from textual.message_pump import MessagePump

    from ohtui.opening.safety import ConversationSafety
    from ohtui.sdk import BaseConversation
    from ohtui.sdk.conversation import LeaseHolder
    from ohtui.sdk.mcp import ServerInfo
    from ohtui.settings.choices import ConfirmationPolicy
    from ohtui.settings.profile import Profile
    from ohtui.tui.approval_types import ApprovalDecision
    from ohtui.tui.checkpoint_types import CheckpointRow
    from ohtui.tui.options import AppOptions

logger = logging.getLogger(__name__)

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
        self._after = after
        self._closer: threading.Thread | None = None
        self.held_by: LeaseHolder | None = None
        """Who runs the conversation when another ohtui does: it is open read-only here."""
        self.read_only_reason: str | None = None
        """Why the conversation is open read-only when no other ohtui has it."""
        self.conversation_id: str | None = None
        self.model: str | None = options.model
        link = self._link = Link(target)
        rule_store = (
            ApprovalRuleStore(options.rules_file, profile if profile.config_path else None)
            if options.rules_file
            else None
        )
        self.titles = Titles(link, profile)
        self.bridge = Bridge(link, profile, lambda: self.runner.running, self._safety)
        self.runner = Runner(
            link, self.bridge.call_failed, self._finished, lambda: self.side.condensing
        )
        self.approvals = Approvals(link, rule_store, options.policy, self.runner.start_run)
        self.sandbox_switch = SandboxSwitch(link, profile)
        self.mcp = McpServers(link, frame_idle)
        self.trust = TrustQuestions(link, options, profile)
        self.checkpoints = Checkpoints(link, lambda: self.runner.running)
        self.paging = Paging(link)
        self.rewinding = Rewinding(link, lambda: self.runner.running)
        self.side = SideRequests(link, profile)
        self.models = ModelSwitch(
            link, profile, options, lambda: self.runner.running, self.bridge.callbacks
        )
        self.diffs = Diffs(link)
        self.finding = Finding(link)

    def _safety(self) -> ConversationSafety | None:
        return self.approvals.safety

    @property
    def conversation(self) -> BaseConversation | None:
        """The open conversation (None until it has opened)."""
        return self._link.conversation

    # --- opening --------------------------------------------------------------------------

    def open(self) -> None:
        """Open the conversation (new, or resumed) in the background."""
        self._link.spawn(self._open, "ohtui-open")

    def _open(self) -> None:
        load_engine()
        link = self._link
        replacing = self._after is not None
        if self._after is not None:
            self._after.wait_closed(HANDOVER_TIMEOUT)
            self._after = None
        try:
            self.paging.show_saved(self.options, self.profile)
        except Exception:  # the history is shown when the conversation opens, or why not
            logger.exception("showing the saved history early failed")
        try:
            conversation, resumed = self._create_conversation()
        except NoModelError as exc:
            link.post(msg.SetupNeeded(str(exc)))
            return
        except Exception as exc:  # every failure becomes a message on screen
            logger.exception("opening the conversation failed")
            link.post(msg.SessionFailed(describe(exc)))
            return
        # Asks the server: not on the UI thread.
        self.approvals.rejects_all_only = rejects_all_only(conversation)
        with link.lock:
            closed = link.closed
            if not closed:
                link.conversation = conversation
        if closed:  # the app quit (or moved on) while this opened: let it go again
            if len(conversation.state.events) == 0:
                conversation.delete_on_close = True  # as close() does: nothing to resume
            conversation.close()
            return
        self.mcp.watch()
        self.mcp.start()
        self.conversation_id = conversation.id.hex
        if self.held_by is None and self.read_only_reason is None:
            self.models.restore_choice(conversation)  # before SessionReady shows the model
        state = conversation.state
        page = newest_page(conversation, HISTORY_TAIL)
        link.post(
            msg.SessionReady(
                conversation_id=conversation.id.hex,
                title=state.title,
                model=conversation.agent.llm.model,
                workspace=conversation.workspace.working_dir,
                status=run_status(conversation),
                policy=self.policy,
                history=page.events,
                has_older=page.has_older,
                total_events=page.total,
                resumed=resumed,
                sandbox=self.sandbox,
                held_by=self.held_by,
                read_only=self.read_only_reason,
                server=self.server,
                branches=page.branches,
            )
        )
        self._post_instructions(conversation)
        self.bridge.post_stats()
        settle_heap(reclaim=replacing)
        if self.held_by is not None or self.read_only_reason is not None:
            return  # nothing here may run, approve or send: the chat screen says so
        if run_status(conversation) is RunStatus.WAITING_FOR_CONFIRMATION:
            link.post(msg.ApprovalNeeded(self.approvals.pending_views()))
        if self.runner.queued:
            self.runner.deliver_queue()

    def _post_instructions(self, conversation: BaseConversation) -> None:
        """Say which instruction files and skills the agent got: as its context has them
        here (nothing when none), as the agent server reports them (none too: AGENTS.md is
        then not read there; an OpenHands server does not say: nothing)."""
        from ohtui.sdk import RemoteConversation
        from ohtui.sdk.context.skills.loaded import loaded_skills
        from ohtui.tui.widgets.instructions import LoadedInstructions, shown_instructions

        try:
            workspace = conversation.workspace.working_dir
            if isinstance(conversation, RemoteConversation):
                reported = conversation.state.reported_skills
                # A server that says it loaded none: worth telling (AGENTS.md is not read).
                loaded = (
                    shown_instructions(reported, conversation.state.working_dir, home="")
                    or LoadedInstructions(())
                    if reported is not None
                    else None
                )
            else:
                skills = loaded_skills(conversation.agent.agent_context, workspace)
                loaded = shown_instructions(skills, workspace)
        except Exception:  # a fact to show, never a reason for the opening to fail
            logger.exception("listing the loaded instructions failed")
            return
        if loaded is not None:
            self._link.post(msg.InstructionsLoaded(loaded))

    def _create_conversation(self) -> tuple[BaseConversation, bool]:
        """Open the conversation: the options' factory's, or the one the settings describe
        (read-only when another ohtui has it open or its folder cannot be written)."""
        options, profile = self.options, self.profile.load()
        callbacks = self.bridge.callbacks()
        if options.conversation_factory is not None:
            conversation = options.conversation_factory(callbacks)
            self.model = conversation.agent.llm.model
            resumed = len(conversation.state.events) > 0
            self.approvals.install(conversation, profile, resumed)
            return conversation, resumed
        started = start(
            profile,
            options.workspace,
            options.persistence_dir or profile.conversations_dir,
            Target(options.resume_id, options.continue_latest, options.conversation_id),
            callbacks,
            rules=self.approvals.store,
            api_key=options.api_key,
            stream=options.stream,
            read_only_fallback=True,
            project_mcp=self.trust.project_mcp,
            defer_mcp=True,  # started once the first frame is idle (see frame_idle)
            plugin_check=self.trust.trusted_plugins,
        )
        conversation = started.conversation
        self.model = started.opened.model
        self.held_by = started.held_by
        self.read_only_reason = started.read_only_reason
        if options.leaf_event_id is not None:
            self._move_head(conversation, options.leaf_event_id)
        if self.held_by is None and self.read_only_reason is None:
            self.approvals.watch(conversation)
        for notice in started.notices:
            self._link.post(msg.Notice(notice, "warning"))
        return conversation, started.opened.resumed

    def _move_head(self, conversation: BaseConversation, leaf_event_id: str) -> None:
        """Open on the branch chosen (HEAD to its tip), or say why it opens as it was."""
        if self.held_by is not None or self.read_only_reason is not None:
            self._link.post(
                msg.Notice(
                    "It opened read-only, on the branch it was on: another ohtui has it, or its "
                    "folder cannot be written.",
                    "warning",
                )
            )
            return
        from ohtui.sdk import RemoteServerError

        try:
            conversation.navigate_to(leaf_event_id)
        except ValueError:  # gone meanwhile: the conversation opens as it was
            self._link.post(msg.Notice("That branch is no longer in the conversation.", "warning"))
        except RemoteServerError as exc:
            self._link.post(msg.Notice(f"It opened on the branch it was on: {exc}", "warning"))

    def _finished(self, conversation: BaseConversation, status: RunStatus) -> None:
        """(The run's thread.) A run ended: ask for what waits, title a new conversation."""
        self.models.apply_pending(conversation)  # a /model asked for during the run
        if status is RunStatus.WAITING_FOR_CONFIRMATION:
            self._link.post(msg.ApprovalNeeded(self.approvals.pending_views()))
        self.titles.title_once(conversation)

    # --- where it runs --------------------------------------------------------------------

    @property
    def server(self) -> str:
        """host:port of the agent server the conversation runs on ("": here)."""
        from ohtui.sdk import RemoteConversation

        conversation = self._link.conversation
        if isinstance(conversation, RemoteConversation):
            return conversation.workspace.display_host
        return ""

    @property
    def server_url(self) -> str | None:
        """The URL of the agent server the conversation runs on (None: here)."""
        from ohtui.sdk import RemoteConversation

        conversation = self._link.conversation
        if isinstance(conversation, RemoteConversation):
            return conversation.workspace.host
        return None

    # --- what the chat screen calls, handed to the parts ----------------------------------

    @property
    def running(self) -> bool:
        """Whether a run is going on."""
        return self.runner.running

    @property
    def policy(self) -> ConfirmationPolicy:
        """The current confirmation policy."""
        return self.approvals.policy

    @property
    def rejects_all_only(self) -> bool:
        """Whether the agent server can only reject all waiting actions at once."""
        return self.approvals.rejects_all_only

    @property
    def sandbox(self) -> str:
        """How commands are confined (see `SandboxSwitch.describe`)."""
        return self.sandbox_switch.describe()

    def submit(self, text: str, images: Sequence[Path] = ()) -> None:
        """Send a message (with image files, read as it goes); while a run goes on (or
        before opening) it is queued."""
        self.runner.submit(text, images)

    def take_queue(self) -> list[str]:
        """Take back the messages queued for the conversation (it will not get them)."""
        return self.runner.take_queue()

    def take_tokens(self) -> list[tuple[str, str, str]]:
        """The streamed (response id, text, reasoning) pieces since the last call, merged."""
        return self.bridge.take_tokens()

    def pause(self) -> None:
        """Pause between steps (Esc)."""
        self.runner.pause()

    def interrupt(self) -> None:
        """Stop now: abandon the LLM call, kill the running command."""
        self.runner.interrupt()

    def decide(self, decision: ApprovalDecision) -> None:
        """Apply the user's approval decision, then run on."""
        self.approvals.decide(decision)

    def set_policy(self, policy: ConfirmationPolicy) -> None:
        """Switch the confirmation policy, keeping the rules."""
        self.approvals.set_policy(policy)

    def set_sandbox(self, mode: str) -> None:
        """Confine commands as `mode` says for the rest of this session (not saved)."""
        self.sandbox_switch.switch(mode)

    def answer_trust(self, trusted: bool | None) -> None:
        """The user's answer to TrustNeeded (the opening goes on)."""
        self.trust.answer(trusted)

    def frame_idle(self) -> None:
        """The app's first frame has been idle: start the MCP servers (see McpServers)."""
        self.mcp.frame_idle()

    def mcp_servers(self) -> list[ServerInfo]:
        """The MCP servers of the conversation, with their status and tools."""
        return self.mcp.servers()

    def set_mcp_enabled(self, name: str, enabled: bool) -> None:
        """Turn an MCP server on or off for this session; the agent's next step sees it."""
        self.mcp.set_enabled(name, enabled)

    def preview_restore(self, checkpoint_id: str | None) -> None:
        """Post what restoring a checkpoint (None: what /undo restores) would change."""
        self.checkpoints.preview_restore(checkpoint_id)

    def restore(self, checkpoint: CheckpointRow) -> None:
        """Restore the workspace to `checkpoint`."""
        self.checkpoints.restore(checkpoint)

    def load_older(self, before: int) -> None:
        """Read the page of events before index `before` and post it."""
        self.paging.load_older(before)

    def load_newer(self, after: int) -> None:
        """Read the page of events from index `after` and post it."""
        self.paging.load_newer(after)

    def load_page(self, newest: bool) -> None:
        """Read the first page of events, or (`newest`) the last, and post it."""
        self.paging.load_page(newest)

    # --- closing --------------------------------------------------------------------------

    @property
    def empty(self) -> bool:
        """Whether nothing has been said in the conversation (or it never opened)."""
        conversation = self._link.conversation
        return conversation is None or len(conversation.state.events) == 0

    def close(self) -> None:
        """Stop the agent and release the conversation, waiting at most CLOSE_TIMEOUT.

        A conversation nothing was said in is deleted: there is nothing to resume. Closing
        again does nothing.
        """
        link = self._link
        with link.lock:
            if link.closed:
                return
            link.closed = True
        self.trust.give_up()  # an opening waiting for the trust answer gives up
        conversation = link.conversation
        if conversation is None:
            return
        if self.empty and not self.runner.running and not self.runner.queued:
            conversation.delete_on_close = True
        closer = threading.Thread(target=conversation.close, name="ohtui-close", daemon=True)
        self._closer = closer
        closer.start()
        closer.join(CLOSE_TIMEOUT)

    def wait_closed(self, timeout: float) -> None:
        """Wait (at most `timeout` seconds) until `close()` has let go of the conversation."""
        if self._closer is not None:
            self._closer.join(timeout)
