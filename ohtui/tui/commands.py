"""Slash commands: typed in the composer (`/name arg`) or picked in the command palette."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ohtui.tui.display import plural
from ohtui.tui.slash import SlashCommand

if TYPE_CHECKING:
    from ohtui.tui.screens.chat import ChatScreen

SLASH_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("new", "start a new conversation in this workspace"),
    SlashCommand("resume", "pick a saved conversation to go back to"),
    SlashCommand("settings", "model, API key, secrets, look"),
    SlashCommand("confirm", "choose which actions wait for your approval"),
    SlashCommand("rules", "list and remove your approval rules"),
    SlashCommand(
        "sandbox",
        "confine commands: workspace-write, read-only or off (this session)",
        takes_argument=True,
    ),
    SlashCommand("ask", "ask a side question; the agent keeps working", takes_argument=True),
    SlashCommand(
        "title", "rename the conversation (no name: let the model suggest one)", takes_argument=True
    ),
    SlashCommand("help", "keys and commands"),
    SlashCommand("exit", "quit ohtui"),
)


CHANGE_THE_CONVERSATION = frozenset({"confirm", "rules", "sandbox", "ask", "title"})
"""Commands a conversation open read-only refuses (/ask calls its model)."""


def run_slash_command(screen: ChatScreen, name: str, argument: str) -> None:
    """Run `/name argument` on the chat screen."""
    handlers: dict[str, Callable[[ChatScreen, str], None]] = {
        "new": _new,
        "resume": _resume,
        "settings": _settings,
        "confirm": _confirm,
        "rules": _rules,
        "sandbox": _sandbox,
        "ask": _ask,
        "title": _title,
        "help": _help,
        "exit": _exit,
        "quit": _exit,
    }
    handler = handlers.get(name)
    if handler is None:
        screen.notify(
            f"There is no command /{name}. Type / to see the commands.", severity="warning"
        )
        return
    if name in CHANGE_THE_CONVERSATION and screen.refuse_read_only():
        return
    handler(screen, argument)


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
            screen.set_policy(name)

    screen.app.push_screen(PolicyPickerScreen(screen.session.policy), chosen)


def _rules(screen: ChatScreen, argument: str) -> None:
    from ohtui.tui.screens.rules import RulesScreen

    def closed(removed: list[str] | None) -> None:
        if removed:
            screen.session.remove_rules(removed)
            screen.notify(f"Removed {plural(len(removed), 'rule')}.", timeout=3)

    screen.app.push_screen(RulesScreen(screen.session.rules()), closed)


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
    screen.session.ask(argument)


def _title(screen: ChatScreen, argument: str) -> None:
    screen.session.set_title(argument or None)


def _help(screen: ChatScreen, argument: str) -> None:
    from ohtui.tui.screens.help import HelpScreen

    screen.app.push_screen(HelpScreen(SLASH_COMMANDS))


def _exit(screen: ChatScreen, argument: str) -> None:
    screen.quit_app()


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
