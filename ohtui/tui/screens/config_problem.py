"""Tell the user what is wrong with config.toml, and offer to open the settings."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfigProblemScreen(ModalScreen[bool]):
    """The problem, word for word; dismisses with True to open the settings."""

    CSS_PATH = "config_problem.tcss"
    BINDINGS = [
        Binding("escape", "dismiss(False)", "Continue"),
        Binding("s", "dismiss(True)", "Open settings"),
    ]

    def __init__(self, problem: str) -> None:
        super().__init__()
        self._problem = problem

    def compose(self) -> ComposeResult:
        """The heading, the problem, and the two ways on."""
        with Vertical(id="dialog"):
            yield Static("Your settings have a problem", id="heading")
            with VerticalScroll(id="problem-scroll"):
                yield Static(self._problem, id="problem", markup=False)
            with Horizontal(id="buttons"):
                yield Button("Open settings", id="open", variant="primary", compact=True)
                yield Button("Continue", id="continue", compact=True)
            yield Static(
                "s open settings · esc continue with what is valid", id="legend", markup=False
            )

    def on_mount(self) -> None:
        self.query_one("#open", Button).focus()

    @on(Button.Pressed, "#open")
    def _open(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#continue")
    def _continue(self) -> None:
        self.dismiss(False)
