"""The slash commands in the command palette (Ctrl+P): they run on the chat screen."""

from __future__ import annotations

from collections.abc import Callable

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ohtui.tui.app.navigation import Navigation
from ohtui.tui.screens import commands
from ohtui.tui.screens.chat import ChatScreen
from ohtui.tui.slash import SlashCommand


class SlashCommandProvider(Provider):
    """The slash commands, in the command palette (Ctrl+P)."""

    def _chat(self) -> ChatScreen | None:
        app = self.app
        return app.chat if isinstance(app, Navigation) else None

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

    def _commands(self) -> list[SlashCommand]:
        """The built-in commands, then the custom ones."""
        chat = self._chat()
        if chat is None:
            return list(commands.SLASH_COMMANDS)
        return chat.custom_commands.all_commands()

    async def discover(self) -> Hits:
        """All commands, before anything is typed."""
        for command in self._commands():
            yield DiscoveryHit(f"/{command.name}", self._runner(command), help=command.description)

    async def search(self, query: str) -> Hits:
        """Commands matching what was typed."""
        matcher = self.matcher(query)
        for command in self._commands():
            text = f"/{command.name}"
            score = matcher.match(f"{text} {command.description}")
            if score > 0:
                yield Hit(
                    score, matcher.highlight(text), self._runner(command), help=command.description
                )
