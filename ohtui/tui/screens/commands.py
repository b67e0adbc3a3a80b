"""Slash commands: typed in the composer (`/name arg`) or picked in the command palette."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ohtui.tui.slash import SlashCommand

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from ohtui.tui.screens.navigator import Navigator
    from ohtui.tui.session import Session


class CommandTarget(Protocol):
    """What a slash command acts on: the chat screen, its session and the app above it."""

    @property
    def navigator(self) -> Navigator:
        """The app, for other screens and other conversations."""
        ...

    @property
    def session(self) -> Session:
        """The conversation's session."""
        ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Show a notice."""
        ...

    def refuse_read_only(self) -> bool:
        """Say why nothing can change when the conversation is read-only; True then."""
        ...

    def show_side_answer(self, question: str, answer: str) -> None:
        """Show a side question and its answer above the composer."""
        ...

    def open_find(self, term: str = "") -> None:
        """Open the find bar, searching the conversation for `term` if one is given."""
        ...

    def send(self, text: str) -> None:
        """Send `text` to the agent as the user's message."""
        ...


def _new(screen: CommandTarget, argument: str) -> None:
    screen.navigator.new_conversation()


def _resume(screen: CommandTarget, argument: str) -> None:
    if argument:
        screen.navigator.resume_by_id(argument)
    else:
        screen.navigator.open_picker()


def _settings(screen: CommandTarget, argument: str) -> None:
    screen.navigator.open_settings()


def _confirm(screen: CommandTarget, argument: str) -> None:
    screen.navigator.choose_policy()


def _rules(screen: CommandTarget, argument: str) -> None:
    screen.navigator.open_rules()


def _sandbox(screen: CommandTarget, argument: str) -> None:
    screen.navigator.choose_sandbox(argument)


def _ask(screen: CommandTarget, argument: str) -> None:
    if not argument:
        screen.notify("Usage: /ask <question>. The answer is not added to the conversation.")
        return
    screen.show_side_answer(argument, "thinking…")
    screen.session.side.ask(argument)


def _condense(screen: CommandTarget, argument: str) -> None:
    screen.session.side.condense(argument or None)


def _title(screen: CommandTarget, argument: str) -> None:
    screen.session.titles.set_title(argument or None)


def _mcp(screen: CommandTarget, argument: str) -> None:
    screen.navigator.open_mcp()


def _undo(screen: CommandTarget, argument: str) -> None:
    screen.session.checkpoints.preview_restore(None)


def _checkpoints(screen: CommandTarget, argument: str) -> None:
    screen.session.checkpoints.post_list()


def _rewind(screen: CommandTarget, argument: str) -> None:
    screen.session.rewinding.list_turns()


def _fork(screen: CommandTarget, argument: str) -> None:
    screen.session.rewinding.fork(argument)


def _model(screen: CommandTarget, argument: str) -> None:
    if argument:
        screen.session.models.switch(argument)
    else:
        screen.navigator.choose_model()


def _cost(screen: CommandTarget, argument: str) -> None:
    screen.navigator.show_cost()


def _diff(screen: CommandTarget, argument: str) -> None:
    screen.navigator.open_diff(argument)


def _init(screen: CommandTarget, argument: str) -> None:
    from pathlib import Path

    from ohtui.tui.screens.init_prompt import has_instructions, init_prompt

    session = screen.session
    conversation = session.conversation
    existing: bool | None = None  # on an agent server: the agent looks for itself
    if not session.server:
        where = conversation.workspace.working_dir if conversation else session.options.workspace
        existing = has_instructions(Path(where))
    screen.send(init_prompt(existing, argument))


def _help(screen: CommandTarget, argument: str) -> None:
    screen.navigator.open_help()


def _exit(screen: CommandTarget, argument: str) -> None:
    screen.navigator.quit_now()


def _find(screen: CommandTarget, argument: str) -> None:
    screen.open_find(argument)


@dataclass(frozen=True, kw_only=True)
class Command(SlashCommand):
    """A slash command with what it does: the one list below feeds the composer's menu,
    the command palette, /help and the dispatch."""

    run: Callable[[CommandTarget, str], None]
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
    Command(
        name="rewind",
        description="go back to one of your messages: the conversation, the code or both",
        run=_rewind,
        changes_conversation=True,
    ),
    Command(
        name="fork",
        description="copy the conversation as it is now into a new one and open it",
        takes_argument=True,
        run=_fork,
        changes_conversation=True,
    ),
    Command(
        name="model",
        description="switch the model from the next turn (no name: pick one)",
        takes_argument=True,
        run=_model,
        changes_conversation=True,
    ),
    Command(
        name="cost",
        description="tokens, cache and cost per model; context used (also /usage)",
        run=_cost,
        aliases=("usage",),
    ),
    Command(
        name="diff",
        description="what the agent changed, file by file (/diff 3: since message 3)",
        run=_diff,
    ),
    Command(
        name="find",
        description="search the whole conversation, folded output too (Ctrl+F)",
        run=_find,
    ),
    Command(
        name="init",
        description="have the agent write (or improve) AGENTS.md for this workspace",
        argument_hint="[focus]",
        run=_init,
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


def run_slash_command(screen: CommandTarget, name: str, argument: str) -> None:
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


def builtin_names() -> set[str]:
    """Every name a built-in command answers to (its aliases too): a custom command never
    takes one of them."""
    return {name for command in SLASH_COMMANDS for name in (command.name, *command.aliases)}
