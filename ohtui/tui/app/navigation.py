"""The app's side of the screens: it owns the session and goes from one screen (or one
conversation) to another; the chat screen shows the conversation (see `Navigator`)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App
from textual.timer import Timer

from ohtui.long_lived import holding
from ohtui.settings.choices import ConfirmationPolicy
from ohtui.tui.app.ready_picker import ReadyPicker
from ohtui.tui.display import plural
from ohtui.tui.status import RunStatus

if TYPE_CHECKING:
    # Imported when the session starts, after the first frame: start-up is measured.
    from ohtui.sdk import BaseConversation
    from ohtui.sdk.conversation.catalog import ConversationCatalog
    from ohtui.settings.profile import Profile
    from ohtui.tui.checkpoint_types import CheckpointRow, RestorePreview
    from ohtui.tui.options import AppOptions
    from ohtui.tui.rewind_types import RewindChoice, TurnRow
    from ohtui.tui.screens.chat import ChatScreen
    from ohtui.tui.screens.picker import PickerScreen
    from ohtui.tui.screens.picker_family import OpenBranch
    from ohtui.tui.screens.settings import SettingsSaved
    from ohtui.tui.session import Session

OPENING_HOLD_LIMIT = 1.0
"""Seconds at most that garbage collection waits for the picker's opening frame."""
PICKER_READY_AFTER = 2.0
"""Seconds after a picker closed (or a conversation opened) before the next is made."""


class Navigation(App[None]):
    """Owns the conversation's session; opens the other screens and other conversations."""

    options: AppOptions
    profile: Profile
    chat: ChatScreen | None
    _session: Session | None = None
    _frame_was_idle: bool = False
    _profile_seen: bool = False
    _picker_timer: Timer | None = None

    # --- the session -----------------------------------------------------------------------

    @property
    def session(self) -> Session:
        """The conversation's session (created, with the engine's bridge, on first use)."""
        if self._session is None:
            from ohtui.tui.screens.session_import import session_class

            self._session = session_class()(
                self.options, self.profile, self._chat(), frame_idle=self._frame_was_idle
            )
        return self._session

    @property
    def current_session(self) -> Session | None:
        """The session if one has been created (None: none yet)."""
        return self._session

    def _chat(self) -> ChatScreen:
        assert self.chat is not None, "the chat screen is the app's first screen"
        return self.chat

    def frame_idle(self) -> None:
        """The app's first frame has been idle (its MCP servers may start from now on)."""
        self._frame_was_idle = True
        if self._session is not None:
            self._session.frame_idle()

    def with_profile(self, then: Callable[[], None]) -> None:
        """Run `then` on the UI thread once the settings are loaded (loading off it)."""
        if self.profile.is_loaded:
            then()
            return

        def loaded() -> None:
            self._chat().settings_loaded()
            then()

        def load() -> None:
            from ohtui.tui.widgets.engine_import import load_engine

            load_engine()
            self.profile.load()
            self.call_from_thread(loaded)

        threading.Thread(target=load, name="ohtui-profile-wait", daemon=True).start()

    def shutdown(self) -> str | None:
        """Stop the agent quickly and return the hint that tells how to resume."""
        if self._session is None:
            return None
        empty = self.session.empty
        self.session.close()
        conversation_id = self.session.conversation_id
        if conversation_id is None or empty or self.session.held_by is not None:
            return None
        from ohtui.opening.remote import resume_command

        command = resume_command(conversation_id, self.session.server_url)
        return f"Conversation {conversation_id} saved. Resume it with: {command}"

    # --- other conversations ---------------------------------------------------------------

    def new_conversation(self) -> None:
        """Leave this conversation (it stays saved) and start a new one here."""
        self.switch_to(None)

    def switch_to(self, resume_id: str | None, leaf_event_id: str | None = None) -> None:
        """Leave this conversation (it stays saved) for a saved one, or a new one (None);
        `leaf_event_id`: with HEAD moved to that event as it opens (one of its branches)."""
        from ohtui.tui.session import Session

        chat = self._chat()
        old = self._session
        kept = None if old is None or old.empty else old.conversation_id
        if old is not None:
            old.close()  # an empty conversation is deleted: reopening it means a new one
            if resume_id is not None and resume_id == old.conversation_id and kept is None:
                resume_id = None
        self.options = replace(
            self.options,
            resume_id=resume_id,
            conversation_id=None,
            continue_latest=False,
            pick=False,
            leaf_event_id=leaf_event_id if resume_id is not None else None,
        )
        self._session = Session(
            self.options, self.profile, chat, after=old, frame_idle=self._frame_was_idle
        )
        chat.restart()
        self._session.open()
        if kept and resume_id is None:
            chat.notify(f"Started a new conversation. The last one is saved ({kept[:8]}).")

    def resume_by_id(self, id_prefix: str) -> None:
        """Go to the saved conversation whose id starts with `id_prefix`; if there is no
        such one (or several), say so and stay in this one."""
        directory = self.options.persistence_dir or self.profile.conversations_dir
        chat = self._chat()

        def find() -> None:
            from ohtui.sdk.conversation import ConversationNotFoundError, LocalCatalog
            from ohtui.tui.widgets.engine_import import load_engine

            load_engine()
            try:
                found = LocalCatalog(directory).find(id_prefix)
            except (ConversationNotFoundError, OSError) as exc:
                self.call_from_thread(chat.notify, str(exc), severity="warning")
                return
            self.call_from_thread(self._picked, found.id)

        threading.Thread(target=find, name="ohtui-find", daemon=True).start()

    def open_picker(self) -> None:
        """Choose a saved conversation to resume (a new one if none is chosen at start).

        It opens at once: where conversations live is known before the settings load; the
        one made while the app was idle is used when it was made for this conversation."""
        catalog = self._server_catalog()
        if catalog is None:
            picker = self._ready_picker.take(self._picker_key()) or self._make_picker()
        else:
            self._ready_picker.discard()  # made for the local folder
            picker = self._make_picker(catalog)
        # No garbage collection until its opening frame is drawn (see long_lived.holding).
        release = holding()
        self.set_timer(OPENING_HOLD_LIMIT, release)

        def show() -> None:
            self.push_screen(picker, self._picked)
            self.call_after_refresh(release)

        picker.read_ahead(self, show)

    def get_picker_ready(self) -> None:
        """Make the next picker while the app is idle (see ready_picker), once the picker and
        the engine are imported (the preload calls this when it has imported them) and a
        conversation is open (`on_session_ready` calls it, a while after it opened)."""
        if not {"ohtui.tui.screens.picker", "ohtui.sdk.conversation.catalog"} <= sys.modules.keys():
            return
        if self._session is None or self._session.conversation_id is None:
            return
        if self._server_catalog() is not None:
            self._ready_picker.discard()  # an agent server's: made when it opens
            return
        self._ready_picker.prepare(self._picker_key(), self._make_picker)

    def on_session_ready(self) -> None:
        """A conversation has opened (the message bubbles up from the chat screen): the next
        picker is made for it."""
        self._picker_ready_later()

    def _picker_ready_later(self) -> None:
        """Make the next picker once the app has been idle a while (after the last one closed,
        or a conversation opened)."""
        if self._picker_timer is not None:
            self._picker_timer.stop()
        self._picker_timer = self.set_timer(PICKER_READY_AFTER, self.get_picker_ready)

    @cached_property
    def _ready_picker(self) -> ReadyPicker:
        return ReadyPicker(self)

    def _picker_key(self) -> tuple[Path, Path, str | None]:
        """What a picker is made for: the folder it lists, the workspace it filters by and the
        conversation open (marked, never deleted)."""
        session = self._session
        return (
            self.options.persistence_dir or self.profile.conversations_dir,
            self.options.workspace,
            session.conversation_id if session is not None else None,
        )

    def _make_picker(self, catalog: ConversationCatalog | None = None) -> PickerScreen:
        from ohtui.tui.screens.picker import PickerScreen

        directory, workspace, current_id = self._picker_key()
        return PickerScreen(
            directory,
            workspace,
            current_id=current_id,
            open_conversation=self._open_conversation,
            catalog=catalog,
        )

    def _server_catalog(self) -> ConversationCatalog | None:
        """The agent server's conversations, when the agent runs on one (None: local)."""
        from ohtui.sdk import RemoteConversation
        from ohtui.sdk.conversation.impl.remote_catalog import RemoteCatalog

        conversation = self._open_conversation()
        if isinstance(conversation, RemoteConversation):
            return RemoteCatalog(conversation.workspace)
        if self.profile.settings.server.url:
            from ohtui.opening.remote import server_workspace

            profile, folder = self.profile, self.options.workspace
            return RemoteCatalog(lambda: server_workspace(profile, folder))  # keyring: later
        return None

    def _open_conversation(self) -> BaseConversation | None:
        """The conversation open now (None: none is)."""
        return self._session.conversation if self._session is not None else None

    def _picked(self, picked: str | OpenBranch | None) -> None:
        from ohtui.tui.screens.picker_family import OpenBranch

        self._picker_ready_later()

        current = self._session.conversation_id if self._session is not None else None
        if isinstance(picked, OpenBranch):
            self._open_branch(picked, current)
            return
        conversation_id = picked
        if conversation_id is None:
            if self._session is None:  # `ohtui --resume` and nothing chosen: a new one
                self.session.open()
            return
        if conversation_id != current or self.session.held_by is not None:
            self.switch_to(conversation_id)  # read-only: it may be free to take now

    def _open_branch(self, branch: OpenBranch, current: str | None) -> None:
        """Open a conversation on the branch chosen in the picker: reopened through the
        opening every conversation goes through, HEAD moved there before it shows."""
        session = self._session
        if branch.conversation_id == current and session is not None and session.running:
            self._chat().notify(
                "The agent is running in this conversation: stop it (ctrl+c) or wait, then "
                "choose the branch again.",
                severity="warning",
            )
            return
        self.switch_to(branch.conversation_id, branch.leaf_event_id)

    # --- settings --------------------------------------------------------------------------

    def profile_loaded(self, then: Callable[[], None] | None = None) -> None:
        """The settings are loaded: apply them; tell what is wrong with them (once), before
        anything else. `then` runs after that (the first-run form): once the problem dialog
        is closed, however it is closed."""
        if self._profile_seen:
            if then is not None:
                then()
            return
        self._profile_seen = True
        self.apply_ui_settings()
        warnings = self.profile.loaded.warnings
        if not self.profile.problem:
            for warning in warnings:
                self.notify(warning, severity="warning", timeout=8, markup=False)
            if then is not None:
                then()
            return
        from ohtui.tui.screens.config_problem import ConfigProblemScreen

        def seen(open_settings: bool | None) -> None:
            if then is not None:
                then()  # the first-run form is the settings: one screen, not two
            elif open_settings and self.chat is not None:
                self.open_settings()

        # The warnings join the problem in its dialog: as toasts they would sit on it.
        problem = "\n\n".join([self.profile.problem, *warnings])
        self.push_screen(ConfigProblemScreen(problem), seen)

    def apply_ui_settings(self) -> None:
        """Switch to the theme the settings name (an unknown one is reported, not applied)."""
        theme = self.profile.settings.ui.theme
        if theme == self.theme:
            return
        if theme in self.available_themes:
            self.theme = theme
        else:
            known = ", ".join(sorted(self.available_themes))
            self.notify(
                f"Unknown theme '{theme}' in [ui] theme; the themes are: {known}.",
                severity="warning",
                markup=False,
            )

    def open_settings(self, *, first_run: bool = False) -> None:
        """Open the settings screen (at first run: a model must be chosen to go on)."""

        def show() -> None:
            from ohtui.tui.screens.settings import SettingsScreen

            self.push_screen(SettingsScreen(self.profile, first_run=first_run), self._saved)

        self.with_profile(show)

    def _saved(self, saved: SettingsSaved | None) -> None:
        chat = self._chat()
        conversation = self.session.conversation
        if saved is None:
            if conversation is None and chat.status is RunStatus.SETUP:
                chat.notify("No model is set: ohtui cannot start a conversation.", timeout=6)
            return
        self.apply_ui_settings()
        chat.view.set_expand_outputs(self.profile.settings.ui.expand_outputs)
        if conversation is None:
            self.switch_to(self.options.resume_id)
            return
        if saved.policy:
            # Kept by the conversation, so it survives a reopen.
            chat.set_policy(ConfirmationPolicy(saved.policy))
        if not saved.engine_changed:
            chat.notify("Settings saved.", timeout=3)
        elif self.session.running:
            chat.notify("Settings saved. The new model settings apply when you /resume.")
        else:
            self.switch_to(self.session.conversation_id)  # reopened with the new settings
            chat.notify("Settings saved and applied.", timeout=3)

    # --- the conversation's dialogs --------------------------------------------------------

    def open_help(self) -> None:
        """Show the keys and commands (/help)."""
        from ohtui.tui.screens import commands
        from ohtui.tui.screens.help import HelpScreen

        custom = self.chat.custom_commands.commands if self.chat is not None else []
        self.push_screen(HelpScreen(commands.SLASH_COMMANDS, custom))

    def open_rules(self) -> None:
        """List the approval rules; remove the ones the user marks (/rules)."""
        from ohtui.tui.screens.rules import RulesScreen

        chat = self._chat()

        def closed(removed: list[str] | None) -> None:
            if removed:
                self.session.approvals.remove_rules(removed)
                chat.notify(f"Removed {plural(len(removed), 'rule')}.", timeout=3)

        self.push_screen(RulesScreen(self.session.approvals.rules()), closed)

    def open_mcp(self) -> None:
        """Show the MCP servers (/mcp)."""
        from ohtui.tui.screens.mcp import MCPScreen

        self.push_screen(MCPScreen(self.session.mcp_servers(), self.session.set_mcp_enabled))

    def mcp_changed(self) -> None:
        """Keep an open /mcp screen current."""
        from ohtui.tui.screens.mcp import MCPScreen

        screen = self.screen
        if isinstance(screen, MCPScreen):
            screen.show(self.session.mcp_servers())

    def choose_policy(self) -> None:
        """Let the user pick which actions wait for approval (/confirm)."""
        from ohtui.tui.screens.policy_picker import PolicyPickerScreen

        chat = self._chat()

        def chosen(name: str | None) -> None:
            if name:
                chat.set_policy(ConfirmationPolicy(name))

        self.push_screen(PolicyPickerScreen(self.session.policy), chosen)

    def choose_sandbox(self, mode: str = "") -> None:
        """Confine commands as `mode` says, or let the user pick how ("") (/sandbox)."""
        from ohtui.tui.screens.sandbox_picker import SANDBOX_CHOICES, SandboxPickerScreen

        chat = self._chat()
        modes = [choice.id for choice in SANDBOX_CHOICES]
        if mode:
            if mode not in modes:
                chat.notify(
                    f"There is no sandbox mode {mode!r}: use {', '.join(modes)}.",
                    severity="warning",
                )
                return
            chat.set_sandbox(mode)
            return

        def chosen(picked: str | None) -> None:
            if picked:
                chat.set_sandbox(picked)

        current = chat.status_bar.sandbox.partition(",")[0] or "off"
        self.push_screen(SandboxPickerScreen(current), chosen)

    def show_checkpoints(self, checkpoints: list[CheckpointRow]) -> None:
        """Show the checkpoints; the one chosen is previewed before it is restored."""
        from ohtui.tui.screens.checkpoints import CheckpointsScreen

        def chosen(checkpoint_id: str | None) -> None:
            if checkpoint_id is not None:
                self.session.preview_restore(checkpoint_id)

        self.push_screen(CheckpointsScreen(checkpoints), chosen)

    def confirm_restore(self, preview: RestorePreview) -> None:
        """Show what the restore changes; restore on the user's word."""
        from ohtui.tui.screens.restore import RestoreScreen

        checkpoint = preview.checkpoint

        def confirmed(restore: bool | None) -> None:
            if restore:
                self.session.restore(checkpoint)

        self.push_screen(RestoreScreen(preview), confirmed)

    # --- rewinding and forking -------------------------------------------------------------

    def show_rewind(self, turns: list[TurnRow]) -> None:
        """List the user's messages to go back to (/rewind, Esc Esc); rewind or fork at the
        one chosen."""
        from ohtui.tui.rewind_types import RewindAction
        from ohtui.tui.screens.rewind import RewindScreen

        rewinding = self.session.rewinding
        rows = {row.event_id: row for row in turns}

        def chosen(choice: RewindChoice | None) -> None:
            if choice is None:
                return
            row = rows[choice.event_id]
            if choice.action.forks:
                with_code = choice.action is RewindAction.FORK_WITH_CODE
                rewinding.fork(at=row, with_code=with_code)
            else:
                rewinding.rewind(row, choice.action)

        self.push_screen(RewindScreen(turns, rewinding.plan, rewinding.previews), chosen)

    def open_fork(self, conversation_id: str, title: str, restored: int = 0) -> None:
        """Leave this conversation (it stays saved) for its fork just made, opened as any
        saved conversation is (its sandbox, policy and callbacks set up by the opening)."""
        self.switch_to(conversation_id)
        code = f" The workspace was restored ({plural(restored, 'file')})." if restored else ""
        self._chat().notify(
            f"Opened the fork “{title}”; the conversation it came from is saved.{code}",
            timeout=6,
        )

    # --- the model and what it costs -------------------------------------------------------

    def choose_model(self) -> None:
        """Let the user pick the model the conversation thinks with from its next turn
        (/model with no name): a name typed (completed from litellm's list), or a recent one."""
        from ohtui.tui.screens.model_picker import ModelPickerScreen

        session = self.session
        chat = self._chat()
        if session.conversation is None:
            chat.notify("The conversation is still opening: /model in a moment.")
            return

        def chosen(model: str | None) -> None:
            if model:
                session.models.switch(model)

        screen = ModelPickerScreen(
            session.models.current(), session.models.recent, self.profile.settings.llm.model
        )
        self.push_screen(screen, chosen)

    def show_cost(self) -> None:
        """Show the conversation's tokens, cache use and cost per model, and its context
        (/cost, /usage)."""
        from ohtui.tui.screens.cost import CostScreen
        from ohtui.tui.screens.usage_report import usage_report

        conversation = self.session.conversation
        if conversation is None:
            self._chat().notify("The conversation is still opening: /cost in a moment.")
            return
        report = usage_report(conversation.conversation_stats, conversation.agent.llm.model)
        self.push_screen(CostScreen(report))

    # --- the workspace's changes -----------------------------------------------------------

    def open_diff(self, argument: str = "") -> None:
        """Show what changed in the workspace (/diff): since the conversation began, since
        message N (`/diff N`), or since a message chosen first (`/diff pick`)."""
        from ohtui.tui.screens.diff import DiffScreen

        argument = argument.strip()
        if argument and argument != "pick" and not argument.isdecimal():
            self._chat().notify(
                f"/diff {argument}: give nothing (the whole conversation), a message's "
                "number (/diff 3) or `pick` to choose one.",
                severity="warning",
            )
            return
        if self.session.conversation is None:
            self._chat().notify("The conversation is still opening: /diff in a moment.")
            return
        number = int(argument) if argument.isdecimal() else 0
        self.push_screen(DiffScreen(self.session.diffs, pick=argument == "pick", number=number))
