"""Slash commands: typed in the composer (`/name arg`) or picked in the command palette."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ohtui.settings.choices import ConfirmationPolicy
from ohtui.tui.display import plural
from ohtui.tui.slash import SlashCommand

if TYPE_CHECKING:
    from ohtui.tui.screens.chat import ChatScreen


def _new(screen: ChatScreen, argument: str) -> None:
    screen.new_conversation()


def _resume(screen: ChatScreen, argument: str) -> None:
    if argument:
        screen.resume_by_id(argument)
    else:
        screen.open_picker()


def _settings(screen: ChatScreen, argument: str) -> None:
    screen.open_settings()


def _confirm(screen: ChatScreen, argument: str) -> None:
    from ohtui.tui.screens.policy_picker import PolicyPickerScreen

    def chosen(name: str | None) -> None:
        if name:
            screen.set_policy(ConfirmationPolicy(name))

    screen.app.push_screen(PolicyPickerScreen(screen.session.policy), chosen)


def _rules(screen: ChatScreen, argument: str) -> None:
    from ohtui.tui.screens.rules import RulesScreen

    def closed(removed: list[str] | None) -> None:
        if removed:
            screen.session.approvals.remove_rules(removed)
            screen.notify(f"Removed {plural(len(removed), 'rule')}.", timeout=3)

    screen.app.push_screen(RulesScreen(screen.session.approvals.rules()), closed)


def _sandbox(screen: ChatScreen, argument: str) -> None:
    from ohtui.tui.screens.sandbox_picker import SANDBOX_CHOICES, SandboxPickerScreen

    modes = [choice.id for choice in SANDBOX_CHOICES]
    if argument:
        if argument not in modes:
            screen.notify(
                f"There is no sandbox mode {argument!r}: use {', '.join(modes)}.",
                severity="warning",
            )
            return
        screen.set_sandbox(argument)
        return

    def chosen(mode: str | None) -> None:
        if mode:
            screen.set_sandbox(mode)

    current = screen.status_bar.sandbox.partition(",")[0] or "off"
    screen.app.push_screen(SandboxPickerScreen(current), chosen)


def _ask(screen: ChatScreen, argument: str) -> None:
    if not argument:
        screen.notify("Usage: /ask <question>. The answer is not added to the conversation.")
        return
    screen.show_side_answer(argument, "thinking…")
    screen.session.side.ask(argument)


def _condense(screen: ChatScreen, argument: str) -> None:
    screen.session.side.condense(argument or None)


def _title(screen: ChatScreen, argument: str) -> None:
    screen.session.titles.set_title(argument or None)


def _mcp(screen: ChatScreen, argument: str) -> None:
    screen.open_mcp()


def _undo(screen: ChatScreen, argument: str) -> None:
    screen.session.checkpoints.preview_restore(None)


def _checkpoints(screen: ChatScreen, argument: str) -> None:
    screen.session.checkpoints.post_list()


def _help(screen: ChatScreen, argument: str) -> None:
    from ohtui.tui.screens.help import HelpScreen

    screen.app.push_screen(HelpScreen(SLASH_COMMANDS))


def _exit(screen: ChatScreen, argument: str) -> None:
    screen.quit_app()


@dataclass(frozen=True, kw_only=True)
class Command(SlashCommand):
    """A slash command with what it does: the one list below feeds the composer's menu,
    the command palette, /help and the dispatch."""

    run: Callable[[ChatScreen, str], None]
    """Runs `/name argument` on the chat screen."""
    changes_conversation: bool = False
    """Refused while the conversation is open read-only (/ask counts: it calls its model)."""
    aliases: tuple[str, ...] = ()
    """Other names it answers to (not offered in the menus)."""


SLASH_COMMANDS: tuple[Command, ...] = (
    Command(name="new", description="start a new conversation in this workspace", run=_new),
    Command(name="resume", description="pick a saved conversation to go back to", run=_resume),
    Command(name="settings", description="model, API key, secrets, look", run=_settings),
    Command(
        name="confirm",
        description="choose which actions wait for your approval",
        run=_confirm,
        changes_conversation=True,
    ),
    Command(
        name="rules",
        description="list and remove your approval rules",
        run=_rules,
        changes_conversation=True,
    ),
    Command(
        name="sandbox",
        description="confine commands: workspace-write, read-only or off (this session)",
        takes_argument=True,
        run=_sandbox,
        changes_conversation=True,
    ),
    Command(
        name="ask",
        description="ask a side question; the agent keeps working",
        takes_argument=True,
        run=_ask,
        changes_conversation=True,
    ),
    Command(
        name="condense",
        description="summarize the history now to free context; add what to keep",
        takes_argument=True,
        run=_condense,
        changes_conversation=True,
    ),
    Command(
        name="title",
        description="rename the conversation (no name: let the model suggest one)",
        takes_argument=True,
        run=_title,
        changes_conversation=True,
    ),
    Command(
        name="mcp",
        description="MCP servers: status, tools; turn one on or off (this session)",
        run=_mcp,
        changes_conversation=True,
    ),
    Command(
        name="undo",
        description="restore the workspace to before the last action (shows the diff first)",
        run=_undo,
        changes_conversation=True,
    ),
    Command(
        name="checkpoints",
        description="list the workspace's checkpoints and restore one",
        run=_checkpoints,
        changes_conversation=True,
    ),
    Command(name="help", description="keys and commands", run=_help),
    Command(name="exit", description="quit ohtui", run=_exit, aliases=("quit",)),
)


def find_command(name: str) -> Command | None:
    """The command called `name` (or one of its aliases); None if there is none."""
    for command in SLASH_COMMANDS:
        if name == command.name or name in command.aliases:
            return command
    return None


def run_slash_command(screen: ChatScreen, name: str, argument: str) -> None:
    """Run `/name argument` on the chat screen."""
    command = find_command(name)
    if command is None:
        screen.notify(
            f"There is no command /{name}. Type / to see the commands.", severity="warning"
        )
        return
    if command.changes_conversation and screen.refuse_read_only():
        return
    command.run(screen, argument)


class SlashCommandProvider(Provider):
    """The slash commands, in the command palette (Ctrl+P)."""

    def _chat(self) -> ChatScreen | None:
        from ohtui.tui.screens.chat import ChatScreen

        chat = getattr(self.app, "chat", None)
        return chat if isinstance(chat, ChatScreen) else None

    def _runner(self, command: SlashCommand) -> Callable[[], None]:
        def run() -> None:
            chat = self._chat()
            if chat is None:
                return
            if command.takes_argument:
                chat.prefill(f"/{command.name} ")
            else:
                chat.run_slash(command.name)

        return run

    async def discover(self) -> Hits:
        """All commands, before anything is typed."""
        for command in SLASH_COMMANDS:
            yield DiscoveryHit(f"/{command.name}", self._runner(command), help=command.description)

    async def search(self, query: str) -> Hits:
        """Commands matching what was typed."""
        matcher = self.matcher(query)
        for command in SLASH_COMMANDS:
            text = f"/{command.name}"
            score = matcher.match(f"{text} {command.description}")
            if score > 0:
                yield Hit(
                    score, matcher.highlight(text), self._runner(command), help=command.description
                )
