"""ChatScreen: the conversation, the composer, the status bar, and every key that drives them."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Static, TextArea

from ohtui.settings.choices import ConfirmationPolicy
from ohtui.tui.display import plural, waiting_text
from ohtui.tui.history import PromptHistory
from ohtui.tui.options import AppOptions
from ohtui.tui.screen_reader import reading_aloud
from ohtui.tui.screens import commands
from ohtui.tui.status import RunStatus
from ohtui.tui.widgets.composer import Composer
from ohtui.tui.widgets.conversation_view import ConversationView
from ohtui.tui.widgets.footer import CoveredFooter
from ohtui.tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    # Imported when the session starts, after the first frame: start-up is measured.
    from ohtui.image_file import ImageFile
    from ohtui.settings.profile import Profile
    from ohtui.tui import messages as msg
    from ohtui.tui.approval_types import ApprovalDecision, PendingActionView
    from ohtui.tui.screens.chat_find import TranscriptFind
    from ohtui.tui.screens.custom_slash import CustomCommands
    from ohtui.tui.screens.navigator import Navigator
    from ohtui.tui.session import Session
    from ohtui.tui.widgets.cells import BranchCell, Cell
    from ohtui.tui.widgets.find_bar import FindBar

DOUBLE_PRESS_SECONDS = 2.0
IDLE_AFTER_SECONDS = 30.0
"""With no key pressed for this long, the user is probably elsewhere: ring the bell."""
READ_ONLY = (
    "Read-only: another ohtui runs this conversation ({holder}). /new starts another one; "
    "/resume it once that ohtui has closed it."
)
READ_ONLY_HINT = "Read-only: ohtui pid {pid} has it open · /new · /resume"
"""The composer's placeholder, short enough for a narrow terminal."""
READ_ONLY_FOLDER_HINT = "Read-only: the conversations folder cannot be written · /help"


class ChatScreen(Screen[None]):
    """Talk to the agent; watch it work; approve what it wants to do. The app holds the
    session and opens every other screen (see `Navigator`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # Esc pauses a run (twice: stops it); with the agent idle, Esc Esc on an empty
        # composer rewinds, as in Claude Code. The footer shows the one that applies now.
        Binding("escape", "pause", "Pause", show=True),
        Binding("escape", "rewind_key", "Rewind", key_display="esc esc", show=True),
        Binding("ctrl+c", "stop", "Stop", show=True, priority=True),
        Binding("shift+tab", "cycle_policy", "Policy", show=True, priority=True),
        Binding("ctrl+o", "review", "Review", show=True),
        # The conversation scrolls while the composer keeps focus: Page keys need priority over
        # the input's own. They are in /help, not the footer: at 100 columns the footer has
        # room for Find and Quit only without them (a screen reader hears the footer whole).
        Binding("pageup", "scroll('up')", "Scroll up", show=False, priority=True),
        Binding("pagedown", "scroll('down')", "Scroll down", show=False, priority=True),
        Binding("ctrl+home", "scroll('first')", "Oldest", show=False),
        Binding("ctrl+end", "scroll('newest')", "Scroll", key_display="PgUp/PgDn", show=False),
        # Priority: in the composer (a TextArea) Ctrl+F would delete the word on the right.
        Binding("ctrl+f", "find", "Find", priority=True),
    ]

    def __init__(self, options: AppOptions, profile: Profile, navigator: Navigator) -> None:
        super().__init__()
        self.options = options
        self.profile = profile
        self.navigator = navigator
        """The app, for what goes beyond this screen: other screens, other conversations."""
        self.history = PromptHistory(options.history_file)
        self._pending: list[PendingActionView] = []
        self._last_escape = 0.0
        self._last_idle_escape = 0.0
        """When Esc was last pressed with the agent idle (a pause's Esc does not count)."""
        self._last_ctrl_c = 0.0
        self._last_key = time.monotonic()
        self._approval_open = False
        self._status = RunStatus.OPENING
        self._shown_total: int | None = None
        """Events shown from the saved history before the conversation opened."""
        self._find: TranscriptFind | None = None
        """Transcript search (Ctrl+F), made on first use."""
        self._custom_commands: CustomCommands | None = None

    def compose(self) -> ComposeResult:
        yield StatusBar(self.options.clock, id="status")
        yield ConversationView(id="conversation")
        with Vertical(id="bottom"):
            yield Static("", id="banner")
            yield Static("", id="side-answer")
            yield Composer(
                workspace=self.options.workspace,
                history=self.history,
                commands=commands.SLASH_COMMANDS,
                id="composer",
            )
        yield CoveredFooter()

    def on_mount(self) -> None:
        status = self.query_one(StatusBar)
        status.policy = self.options.policy or ConfirmationPolicy.RISKY
        status.workspace = str(self.options.workspace)
        status.model = self.options.model or ""
        self.query_one(Composer).focus_input()
        # After the first frame: the engine's import and the database stay off the way.
        self.call_after_refresh(self._start)

    @property
    def custom_commands(self) -> CustomCommands:
        """The slash commands read from `.ohtui/commands/` and the user's config folder
        (made on first use: after the first frame)."""
        if self._custom_commands is None:
            from ohtui.tui.screens.custom_slash import CustomCommands

            self._custom_commands = CustomCommands(
                self,
                lambda: commands.SLASH_COMMANDS,
                commands.builtin_names,
                self.options.workspace,
                self.options.commands_dir,
                lambda offered: self.query_one(Composer).set_commands(offered),
            )
        return self._custom_commands

    @property
    def session(self) -> Session:
        """The conversation's session (the app's; created on first use)."""
        return self.navigator.session

    @property
    def status(self) -> RunStatus:
        """What the conversation is doing, as the status bar shows it."""
        return self._status

    def _start(self) -> None:
        self.custom_commands.refresh()
        if self.options.pick:
            self.navigator.open_picker()
        else:
            # The session's code is imported off the UI thread: keys typed now show at once.
            from ohtui.tui.screens.session_import import start_session

            start_session(self.app, self._open_session, self.navigator.give_way)

    def _open_session(self) -> None:
        self.session.open()

    @property
    def view(self) -> ConversationView:
        """The conversation view."""
        return self.query_one(ConversationView)

    @property
    def status_bar(self) -> StatusBar:
        """The status bar."""
        return self.query_one(StatusBar)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Notify; plain text by default: titles, errors and commands may contain brackets."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def on_key(self) -> None:
        self._last_key = time.monotonic()

    @on(TextArea.Changed)
    def _typed(self) -> None:
        self._last_key = time.monotonic()

    def action_scroll(self, where: str) -> None:
        """Scroll the conversation ("up", "down", "top", "bottom"), or jump to its "first" or
        "newest" events; focus stays where it is."""
        self.view.scroll_by_keys(where)

    def on_cell_left(self, event: Cell.Left) -> None:
        """Esc, or text typed, on a cell: back to the composer (the handler is found by its
        name, so the cells module stays off the first frame's imports)."""
        event.stop()
        self.query_one(Composer).focus_input(event.character)

    @on(Composer.SlashMenuOpened)
    def _slash_menu_opened(self) -> None:
        self.custom_commands.refresh()  # edited since? (a listing and a stat, on a thread)

    @on(Composer.TabbedOut)
    def _tabbed_out(self) -> None:
        if not self.view.focus_newest():
            self.focus_next()

    # --- sending ---------------------------------------------------------------------------

    @on(Composer.Submitted)
    def _submitted(self, event: Composer.Submitted) -> None:
        text = event.text
        if text.startswith("/"):
            name, _, argument = text[1:].partition(" ")
            self.run_slash(name.strip(), argument.strip())
            return
        self.send(text, event.images)

    def send(self, text: str, images: Sequence[ImageFile] = ()) -> None:
        """Send `text` (with `images` attached) to the agent as the user's message (queued
        while a run goes on)."""
        if self.refuse_read_only():
            self.prefill(text)  # kept for another conversation, or for later
            return
        if self.session.conversation is None and self._status in (RunStatus.ERROR, RunStatus.SETUP):
            self.prefill(text)  # nothing could take it: keep it for when something can
            fix = (
                "/settings to choose a model"
                if self._status is RunStatus.SETUP
                else "/new or /resume"
            )
            self.notify(f"No conversation is open: {fix}.", severity="warning")
            return
        if images:
            from ohtui.tui.screens.image_sending import may_send

            if not may_send(self, images):
                self.query_one(Composer).put_back(text, images)  # not sent: the draft stays
                return
        self.view.jump(newest=True)  # what is sent shows at the bottom: follow it there
        self.session.submit(text, [image.path for image in images])
        if not self.session.running and self.session.conversation is not None:
            self._set_status(RunStatus.RUNNING)

    def run_slash(self, name: str, argument: str = "") -> None:
        """Run a slash command (from the composer or the command palette)."""
        custom = None if commands.find_command(name) else self.custom_commands.find(name)
        if custom is not None:
            if self.refuse_read_only():
                return
            self.send(custom.expand(argument))
            return
        commands.run_slash_command(self, name, argument)

    # --- session messages ------------------------------------------------------------------

    def on_saved_history(self, message: msg.SavedHistory) -> None:
        waiting = message.status is RunStatus.WAITING_FOR_CONFIRMATION
        self.view.load_history(message.history, message.total_events, message.has_older, waiting)
        self._shown_total = message.total_events

    def settings_loaded(self, then: Callable[[], None] | None = None) -> None:
        """Apply the loaded settings; `then` runs once a problem with them has been shown."""
        self.view.set_expand_outputs(self.profile.settings.ui.expand_outputs)
        self.navigator.profile_loaded(then)

    def on_session_ready(self, message: msg.SessionReady) -> None:
        self.settings_loaded()
        status = self.status_bar
        status.model = message.model
        status.workspace = message.workspace
        status.policy = message.policy
        status.sandbox = message.sandbox
        status.server = message.server
        holder = message.held_by
        read_only = holder is not None or message.read_only is not None
        self._set_status(RunStatus.READ_ONLY if read_only else message.status)
        hint = READ_ONLY_HINT.format(pid=holder.pid or "?") if holder is not None else None
        self.query_one(Composer).say_why_blocked(
            READ_ONLY_FOLDER_HINT if message.read_only is not None else hint
        )
        if holder is not None:
            self.notify(READ_ONLY.format(holder=holder.describe()), severity="warning", timeout=8)
        elif message.read_only is not None:
            self.notify(message.read_only, severity="warning", timeout=12)
        if read_only:
            unsent = self.session.take_queue()  # typed while it opened: give it back
            if unsent:
                self.view.show_queued([])
                self.status_bar.queued = 0
                self.prefill("\n\n".join(unsent))
        # Shown early from the log's tail: opening added events (a crashed run), or the
        # conversation has branches (the tail is not the active branch, or lacks its markers).
        if self._shown_total != message.total_events or message.branches:
            if self._shown_total is not None:
                self.view.remove_children()
                self.view.reset()
            waiting = message.status is RunStatus.WAITING_FOR_CONFIRMATION
            self.view.load_history(
                message.history, message.total_events, message.has_older, waiting, message.branches
            )
        self._shown_total = None
        self._forget_found()  # opened meanwhile: read what it opened to
        self._show_title(message.title)
        if not message.server:  # a local conversation may work in another folder
            from pathlib import Path

            self.custom_commands.set_workspace(Path(message.workspace))

    def on_instructions_loaded(self, message: msg.InstructionsLoaded) -> None:
        """Say which instruction files and skills the agent got, as this session's first
        cell (after the history of a resumed conversation)."""
        from ohtui.tui.widgets.instructions_cell import InstructionsCell

        self.view.mount(InstructionsCell(message.loaded))

    def on_session_failed(self, message: msg.SessionFailed) -> None:
        if self.profile.is_loaded:
            self.settings_loaded()
        self.view.show_error("ohtui could not go on", message.error)
        self.notify(message.error, severity="error", timeout=10)
        if self.session.conversation is None:
            self._set_status(RunStatus.ERROR)

    def on_engine_event(self, message: msg.EngineEvent) -> None:
        self.view.add_event(message.event, message.index)
        if self._find is not None:
            index = message.index if message.index is not None else self.view.next_index - 1
            self._find.event_added(message.event, index)

    def on_tokens_ready(self, message: msg.TokensReady) -> None:
        for response_id, content, reasoning in self.session.take_tokens():
            self.view.add_tokens(response_id, content, reasoning)

    def on_status_changed(self, message: msg.StatusChanged) -> None:
        self._set_status(message.status)

    def on_stats_changed(self, message: msg.StatsChanged) -> None:
        status = self.status_bar
        status.cost = message.cost
        status.context_used = message.context_used
        status.context_window = message.context_window
        status.context_trigger = message.context_trigger

    def on_model_changed(self, message: msg.ModelChanged) -> None:
        self.status_bar.model = message.model
        if message.restored:
            self.notify(
                f"This conversation goes on with {message.model}, chosen for it with /model.",
                timeout=6,
            )
        else:
            self.notify(f"Model: {message.model} from the next turn.", timeout=4)

    def on_queue_changed(self, message: msg.QueueChanged) -> None:
        self.view.show_queued(message.queued)
        self.status_bar.queued = len(message.queued)

    def on_run_finished(self, message: msg.RunFinished) -> None:
        self._set_status(message.status)
        if message.status.is_terminal() and self._user_away():
            self.app.bell()
            self.notify(f"The agent has {message.status.label}.", title="ohtui")

    def on_approval_needed(self, message: msg.ApprovalNeeded) -> None:
        self._pending = message.pending
        if not message.pending:
            return
        self.view.mark_waiting({p.action_id for p in message.pending})
        self.app.bell()
        if self._user_away():
            self.notify(
                f"{waiting_text(len(message.pending))} for your approval.",
                title="Approval needed",
                severity="warning",
            )
        self.action_review()

    def on_side_answer(self, message: msg.SideAnswer) -> None:
        prefix = "✗ " if message.failed else ""
        self.show_side_answer(message.question, f"{prefix}{message.answer}")

    def show_side_answer(self, question: str, answer: str) -> None:
        """Show a side question and its answer above the composer, apart from the history."""
        from rich.console import Group
        from rich.markdown import Markdown
        from rich.text import Text

        panel = self.query_one("#side-answer", Static)
        panel.update(
            Group(
                Text(f"/ask {question}", style="bold"),
                Markdown(answer),
                Text("Esc to close · not part of the conversation", style="dim"),
            )
        )
        panel.add_class("-visible")

    def on_title_changed(self, message: msg.TitleChanged) -> None:
        self._show_title(message.title)
        self.notify(f"Title: {message.title}", timeout=3)

    def _show_title(self, title: str | None) -> None:
        """Show the conversation's title (the terminal's title and the status bar)."""
        self.sub_title = title or ""
        self.status_bar.title = title or ""

    def on_call_activity(self, message: msg.CallActivity) -> None:
        self.status_bar.show_activity(message.text, message.until, message.reason)

    def on_condensing(self, message: msg.Condensing) -> None:
        self.status_bar.condensing = message.active

    def on_notice(self, message: msg.Notice) -> None:
        self.notify(message.text, severity=message.severity)  # type: ignore[arg-type]

    def on_trust_needed(self, message: msg.TrustNeeded) -> None:
        """Ask whether to trust what would run, showing all of it."""
        from ohtui.tui.screens.trust import TrustScreen

        screen = TrustScreen(
            message.question, message.review, changed=message.changed, note=message.note
        )
        self.app.push_screen(screen, self.session.answer_trust)

    def on_mcp_changed(self, message: msg.McpChanged) -> None:
        """Keep an open /mcp screen current."""
        self.navigator.mcp_changed()

    # --- checkpoints -----------------------------------------------------------------------

    def on_checkpoints_listed(self, message: msg.CheckpointsListed) -> None:
        """Show the checkpoints; the one chosen is previewed before it is restored."""
        self.navigator.show_checkpoints(message.checkpoints)

    def on_restore_preview_ready(self, message: msg.RestorePreviewReady) -> None:
        """Show what the restore changes; restore on the user's word."""
        self.navigator.confirm_restore(message.preview)

    def on_restored(self, message: msg.Restored) -> None:
        """Say the restore is done (its cell in the conversation says what changed)."""
        self.notify(
            f"Restored the workspace to {message.before}: {plural(message.changed, 'file')} "
            "changed. /checkpoints can take it back.",
            timeout=6,
        )

    # --- rewinding and forking -------------------------------------------------------------

    def on_rewind_turns(self, message: msg.RewindTurns) -> None:
        """Show the messages to go back to."""
        self.navigator.show_rewind(message.turns)

    def on_rewind_previews(self, message: msg.RewindPreviews) -> None:
        from ohtui.tui.screens.rewind import RewindScreen

        if isinstance(self.app.screen, RewindScreen):
            self.app.screen.show_previews(message.previews)

    def on_rewind_planned(self, message: msg.RewindPlanned) -> None:
        from ohtui.tui.screens.rewind import RewindScreen

        if isinstance(self.app.screen, RewindScreen):
            self.app.screen.show_plan(message.preview)

    def on_branch_shown(self, message: msg.BranchShown) -> None:
        """The conversation is on another branch now: show it, and give the message back."""
        self._pending = []
        self._show_banner(False)
        self.view.remove_children()
        self.view.reset()
        self.view.load_history(
            message.events, message.total, message.has_older, branches=message.branches
        )
        self.view.scroll_end(animate=False)
        self._forget_found()
        if message.prefill:
            self.prefill(message.prefill)
        if message.notice:
            self.notify(message.notice, timeout=6)

    def on_branch_cell_switch(self, message: BranchCell.Switch) -> None:
        """Enter on a branch marker: show the next branch leaving there."""
        if self.refuse_read_only():
            return
        self.session.rewinding.switch_branch(message.cell.event_index)

    def on_forked(self, message: msg.Forked) -> None:
        """Open the fork just made."""
        self.navigator.open_fork(message.conversation_id, message.title, message.restored)

    @on(ConversationView.NeedOlder)
    def _need_older(self, message: ConversationView.NeedOlder) -> None:
        self.session.load_older(message.before)

    async def on_older_events(self, message: msg.OlderEvents) -> None:
        await self.view.prepend_older(message.events, message.has_older, message.branches)

    @on(ConversationView.NeedNewer)
    def _need_newer(self, message: ConversationView.NeedNewer) -> None:
        self.session.load_newer(message.after)

    async def on_newer_events(self, message: msg.NewerEvents) -> None:
        await self.view.append_newer(message.events, message.after, message.branches)

    @on(ConversationView.NeedPage)
    def _need_page(self, message: ConversationView.NeedPage) -> None:
        self.session.load_page(message.newest)

    def on_event_page(self, message: msg.EventPage) -> None:
        self.view.show_page(
            message.events, message.start, message.has_older, message.newest, message.branches
        )

    # --- approval --------------------------------------------------------------------------

    def action_review(self) -> None:
        """Open the approval dialog for the waiting actions."""
        if not self._pending or self._approval_open:
            if not self._pending:
                self.notify("No action is waiting for approval.", timeout=3)
            return
        from ohtui.tui.screens.approval import ApprovalScreen

        self._approval_open = True
        self._show_banner(False)
        screen = ApprovalScreen(
            self._pending, self.session.policy, all_or_nothing=self.session.rejects_all_only
        )
        self.app.push_screen(screen, self._decided)

    def _decided(self, decision: ApprovalDecision | None) -> None:
        self._approval_open = False
        if decision is None or decision.later:
            if decision is not None and decision.policy:
                self.set_policy(decision.policy)
            self._show_banner(True)
            return
        self._pending = []
        self.view.mark_waiting(set())
        if decision.policy:
            self.status_bar.policy = decision.policy
        self._set_status(RunStatus.RUNNING)
        self.session.decide(decision)

    def _show_banner(self, visible: bool) -> None:
        banner = self.query_one("#banner", Static)
        count = len(self._pending)
        text = f"{waiting_text(count)} for your approval. Press Ctrl+O to review them."
        # In screen-reader mode the line says what it is, as the cells do.
        banner.update(f"needs approval: {text}" if reading_aloud(self) else f"⏸ {text}")
        banner.set_class(visible, "-visible")

    # --- keys ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc is Pause while the agent runs, Rewind (pressed twice) while it is idle."""
        if action in ("pause", "rewind_key"):
            session = self.navigator.current_session
            running = session is not None and session.running
            return running if action == "pause" else not running
        return True

    def _close_side_answer(self) -> bool:
        """Hide the side answer if it shows; True then."""
        panel = self.query_one("#side-answer", Static)
        if panel.has_class("-visible"):
            panel.remove_class("-visible")
            return True
        return False

    def action_rewind_key(self) -> None:
        """Esc with the agent idle: twice on an empty composer, open the rewind list."""
        if self._close_side_answer():
            return
        if self.session.running:
            self.action_pause()
            return
        if self.query_one(Composer).text.strip():
            return  # Esc in a message being written is no rewind
        now = time.monotonic()
        if now - self._last_idle_escape < DOUBLE_PRESS_SECONDS:
            self._last_idle_escape = 0.0
            self.run_slash("rewind")
            return
        self._last_idle_escape = now

    def action_pause(self) -> None:
        """Esc: pause after this step; a second Esc while it runs stops it now."""
        if self._close_side_answer():
            return
        if not self.session.running:
            return
        now = time.monotonic()
        if now - self._last_escape < DOUBLE_PRESS_SECONDS:
            self._interrupt()
            return
        self._last_escape = now
        self.session.pause()
        self.notify("Pausing after this step. Esc again to stop now.", timeout=3)

    def action_stop(self) -> None:
        """Ctrl+C: stop the agent now; twice (or when nothing runs), quit."""
        now = time.monotonic()
        if self.session.running and now - self._last_ctrl_c >= DOUBLE_PRESS_SECONDS:
            self._last_ctrl_c = now
            self._interrupt()
            return
        if now - self._last_ctrl_c < DOUBLE_PRESS_SECONDS:
            self.navigator.quit_now()
            return
        self._last_ctrl_c = now
        self.notify("Press Ctrl+C again to quit.", timeout=DOUBLE_PRESS_SECONDS)

    def _interrupt(self) -> None:
        self.session.interrupt()
        self.notify("Stopping now: the model call is dropped, a running command is killed.")

    def action_cycle_policy(self) -> None:
        """Shift+Tab: always → risky → never → always."""
        self.set_policy(self.status_bar.policy.next())

    def set_policy(self, policy: ConfirmationPolicy) -> None:
        """Switch the confirmation policy."""
        if self.refuse_read_only():
            return
        self.status_bar.policy = policy
        self.session.set_policy(policy)
        self.notify(f"Confirmation: {policy.label}", timeout=2)

    def set_sandbox(self, mode: str) -> None:
        """Confine commands as `mode` says for the rest of this session."""
        if self.refuse_read_only():
            return
        self.session.set_sandbox(mode)

    def on_connection_changed(self, message: msg.ConnectionChanged) -> None:
        self.status_bar.link = "" if message.state == "connected" else message.state

    def on_policy_changed(self, message: msg.PolicyChanged) -> None:
        self.status_bar.policy = message.policy

    def on_sandbox_changed(self, message: msg.SandboxChanged) -> None:
        self.status_bar.sandbox = message.sandbox
        described = (
            "No sandbox: commands run unconfined"
            if message.sandbox == "off"
            else f"Sandbox: {message.sandbox}"
        )
        self.notify(f"{described}. The shell restarts with the next command.", timeout=4)

    def restart(self) -> None:
        """Empty the chat for the app's new session (another conversation, or a new one)."""
        self._pending = []
        self._shown_total = None
        self.view.remove_children()
        self.view.reset()
        self.query_one(Composer).say_why_blocked(None)
        self._set_status(RunStatus.OPENING)
        self.status_bar.cost = 0.0
        self.status_bar.context_used = 0
        self.status_bar.context_window = None
        self.status_bar.condensing = False
        self._show_title(None)
        self._forget_found()

    def on_setup_needed(self, message: msg.SetupNeeded) -> None:
        self._set_status(RunStatus.SETUP)
        self.settings_loaded(then=lambda: self.navigator.open_settings(first_run=True))

    def prefill(self, text: str) -> None:
        """Put text in the composer and focus it (e.g. `/ask ` from the palette)."""
        composer = self.query_one(Composer)
        composer.text = text
        composer.focus_input()

    # --- helpers ---------------------------------------------------------------------------

    def refuse_read_only(self) -> bool:
        """Say why nothing can change when the conversation is open read-only; True then."""
        session = self.navigator.current_session
        holder = session.held_by if session is not None else None
        reason = session.read_only_reason if session is not None else None
        if reason is None and holder is None:
            return False
        why = reason if holder is None else READ_ONLY.format(holder=holder.describe())
        self.notify(why or "", severity="warning", timeout=6)
        return True

    def _set_status(self, status: RunStatus) -> None:
        self._status = status
        self.status_bar.status = status
        self.refresh_bindings()  # Esc: Pause while it runs, Rewind while idle
        waiting = status is RunStatus.WAITING_FOR_CONFIRMATION
        if waiting and not self._approval_open and self._pending:
            self._show_banner(True)
        elif not waiting:
            self._show_banner(False)

    def _user_away(self) -> bool:
        focused = self.app.app_focus
        return not focused or time.monotonic() - self._last_key > IDLE_AFTER_SECONDS

    # --- transcript search (Ctrl+F) --------------------------------------------------------

    @property
    def finder(self) -> TranscriptFind:
        """Transcript search (made, with its bar, on first use: off the first frame)."""
        if self._find is None:
            from ohtui.tui.screens.chat_find import TranscriptFind

            self._find = TranscriptFind(self)
        return self._find

    def action_find(self) -> None:
        """Ctrl+F: open the find bar (again: its term selected, to type another)."""
        self.finder.open()

    def open_find(self, term: str = "") -> None:
        """Open the find bar, searching for `term` if one is given (/find text)."""
        self.finder.open(term or None)

    def on_find_bar_changed(self, message: FindBar.Changed) -> None:
        self.finder.typed(message.term)

    def on_find_bar_step(self, message: FindBar.Step) -> None:
        self.finder.step(message.direction)

    def on_find_bar_closed(self, message: FindBar.Closed) -> None:
        self.finder.close()
        self.query_one(Composer).focus_input()

    def on_find_texts(self, message: msg.FindTexts) -> None:
        if self._find is not None:
            self._find.texts_read(message)

    def on_find_page(self, message: msg.FindPage) -> None:
        self.view.show_page(
            message.events, message.start, message.has_older, False, message.branches, home=False
        )
        if self._find is not None:
            self._find.page_shown(message.target)

    def _forget_found(self) -> None:
        """The conversation shown changed: transcript search reads it again."""
        if self._find is not None:
            self._find.forget()
