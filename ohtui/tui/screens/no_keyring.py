"""No OS keyring works: say so plainly, and offer what ohtui can do instead."""

from __future__ import annotations

from typing import Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

Choice = Literal["memory", "env"]


class NoKeyringScreen(ModalScreen[Choice | None]):
    """Keep secrets in memory for this session ("memory"), use an environment variable
    ("env"), or go back (None). Never a plain-text file."""

    CSS_PATH = "no_keyring.tcss"
    BINDINGS = [
        Binding("m", "dismiss('memory')", "In memory"),
        Binding("e", "dismiss('env')", "Environment variable"),
        Binding("escape", "dismiss(None)", "Back"),
    ]

    def __init__(self, problem: str, env_var: str) -> None:
        super().__init__()
        self._problem = problem
        self._env_var = env_var

    def compose(self) -> ComposeResult:
        """What is wrong, and the two safe ways on."""
        with Vertical(id="dialog"):
            yield Static("Your keys cannot be saved in a keyring", id="heading")
            yield Static(self._problem, id="problem", markup=False)
            yield Static(
                "ohtui keeps API keys and secrets only in the OS keyring, never in a plain "
                "file. You can:",
                id="explain",
                markup=False,
            )
            yield Static(
                "m  keep them in memory for this session only (enter them again next time)\n"
                f"e  use an environment variable instead: export {self._env_var}=… "
                "before starting ohtui",
                id="choices",
                markup=False,
            )
            with Horizontal(id="buttons"):
                yield Button("Keep in memory", id="memory", variant="primary", compact=True)
                yield Button("Use a variable", id="env", compact=True)
                yield Button("Back", id="back", compact=True)
            yield Static("m memory · e variable · esc back", id="legend", markup=False)

    def on_mount(self) -> None:
        self.query_one("#memory", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        choice = event.button.id
        self.dismiss(choice if choice in ("memory", "env") else None)  # type: ignore[arg-type]
