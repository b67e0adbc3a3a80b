"""Slash commands as the composer offers them: plain data plus the menu's filter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    """A command the user can type as `/name` in the composer."""

    name: str
    """The command's name, without the leading slash."""
    description: str
    """One short line shown beside the name in the completion menu."""
    takes_argument: bool = False
    """Whether the command expects text after it (accepting it then leaves a trailing space)."""
    argument_hint: str = ""
    """What to type after it (e.g. "[file]"), shown beside the name in the menus."""


def filter_commands(commands: Sequence[SlashCommand], fragment: str) -> list[SlashCommand]:
    """The commands whose name starts with `fragment`, then those that contain it (any case)."""
    needle = fragment.lower()
    prefixed = [command for command in commands if command.name.lower().startswith(needle)]
    containing = [
        command
        for command in commands
        if needle in command.name.lower() and not command.name.lower().startswith(needle)
    ]
    return prefixed + containing
