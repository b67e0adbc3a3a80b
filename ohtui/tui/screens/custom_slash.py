"""The chat screen's custom slash commands: read off the UI thread after the first frame, read
again when the `/` menu opens and the files have changed, each problem told once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ohtui.tui.screens.custom_commands import (
    CommandLoad,
    CustomCommand,
    Scope,
    Signature,
    command_folders,
    load_commands,
    merge,
    shown_path,
    signature,
)

if TYPE_CHECKING:
    from textual.screen import Screen

    from ohtui.tui.slash import SlashCommand


class CustomCommands:
    """The custom commands a chat screen offers beside its built-ins."""

    def __init__(
        self,
        screen: Screen[None],
        builtins: Callable[[], Sequence[SlashCommand]],
        taken: Callable[[], set[str]],
        workspace: Path | None,
        user_folder: Path | None,
        changed: Callable[[list[SlashCommand]], None],
    ) -> None:
        """`builtins`: the built-in commands and `taken` every name they answer to (read each
        time: the table may grow); `changed` gets the full list whenever it changes."""
        self._screen = screen
        self._builtins = builtins
        self._taken = taken
        self._workspace = workspace
        self._user_folder = user_folder
        self._changed = changed
        self._signature: Signature | None = None
        self._commands: dict[str, CustomCommand] = {}
        self._told: set[str] = set()
        """Problems already shown: a reload never repeats them."""

    @property
    def commands(self) -> list[CustomCommand]:
        """The custom commands in use (none shadowing a built-in), in menu order."""
        return list(self._commands.values())

    def all_commands(self) -> list[SlashCommand]:
        """The built-ins, then the custom commands."""
        return [*self._builtins(), *self._commands.values()]

    def find(self, name: str) -> CustomCommand | None:
        """The custom command called `name` (None: there is none)."""
        return self._commands.get(name)

    def set_workspace(self, workspace: Path | None) -> None:
        """Read the commands of another workspace (the conversation opened elsewhere)."""
        if workspace == self._workspace:
            return
        self._workspace = workspace
        self.refresh()

    def refresh(self) -> None:
        """Read the files again, on a thread, if they changed since the last reading."""
        folders = command_folders(self._workspace, self._user_folder)
        known = self._signature
        self._screen.run_worker(
            lambda: self._check(folders, known),
            thread=True,
            exclusive=True,
            group="custom-commands",
            exit_on_error=False,
        )

    def _check(self, folders: list[tuple[Path, Scope]], known: Signature | None) -> None:
        """(A thread.) Load the commands when the files differ from `known`."""
        now = signature(folders)
        if now == known:
            return
        load = load_commands(folders)
        self._screen.call_later(self._apply, now, load)

    def _apply(self, now: Signature, load: CommandLoad) -> None:
        """(The UI thread.) Use what was read; tell each new problem once."""
        self._signature = now
        offered, shadowed = merge(self._builtins(), load.commands, self._taken())
        self._commands = {c.name: c for c in offered if isinstance(c, CustomCommand)}
        problems = [
            *load.problems,
            *(
                f"{shown_path(c.source, c.scope)}: /{c.name} is a built-in command, "
                "which wins; rename the file to use it"
                for c in shadowed
            ),
        ]
        for problem in problems:
            if problem not in self._told:
                self._told.add(problem)
                self._screen.notify(
                    f"Custom command skipped: {problem}", severity="warning", timeout=10
                )
        self._changed(offered)
