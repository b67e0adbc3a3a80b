"""SecretsEditor: the secrets the agent may use, as names with masked values; add, remove."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Input, OptionList
from textual.widgets.option_list import Option

from ohtui.tui.widgets.marked import MarkedOptionList

MASK = "••••••••"


class SecretsEditor(Vertical):
    """Edits a name → value map in memory; values are never shown, only typed."""

    DEFAULT_CSS = """
    SecretsEditor {
        height: auto;
    }
    """

    @dataclass
    class Problem(Message):
        """What is wrong with what was typed ("" when all is well again)."""

        editor: SecretsEditor
        text: str

        @property
        def control(self) -> SecretsEditor:
            """The SecretsEditor the text was typed in."""
            return self.editor

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._secrets: dict[str, str] = {}
        self._loaded: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield MarkedOptionList(id="secrets", markup=False)
        with Horizontal(classes="row"):
            yield Input(placeholder="NAME", id="secret-name")
            yield Input(placeholder="value", password=True, id="secret-value")
            yield Button("Add", id="add-secret", compact=True)
            yield Button("Remove", id="remove-secret", compact=True)

    def on_mount(self) -> None:
        self._show()

    @property
    def secrets(self) -> dict[str, str]:
        """The secrets as edited."""
        return dict(self._secrets)

    @property
    def changed(self) -> bool:
        """Whether they differ from what was loaded."""
        return self._secrets != self._loaded

    def load(self, secrets: dict[str, str]) -> None:
        """Start from these secrets (the saved ones)."""
        self._secrets = dict(secrets)
        self._loaded = dict(secrets)
        self._show()

    def _show(self) -> None:
        listing = self.query_one("#secrets", OptionList)
        listing.clear_options()
        if not self._secrets:
            listing.add_option(Option("No secrets yet", disabled=True))
            return
        listing.add_options(
            Option(Content.assemble((name, "bold"), "  ", (MASK, "$foreground-muted")), id=name)
            for name in sorted(self._secrets)
        )

    @on(Button.Pressed, "#add-secret")
    @on(Input.Submitted, "#secret-value")
    def _add(self, event: Message) -> None:
        from ohtui.settings.secrets import valid_secret_name

        event.stop()
        name_input = self.query_one("#secret-name", Input)
        value_input = self.query_one("#secret-value", Input)
        name, value = name_input.value.strip(), value_input.value
        if not valid_secret_name(name):
            self.post_message(
                self.Problem(
                    self,
                    f"'{name}' cannot be a secret name: use letters, digits and _, not "
                    "starting with a digit (the agent sees it as $NAME).",
                )
            )
            name_input.focus()
            return
        if not value:
            self.post_message(self.Problem(self, f"Type the value of {name}."))
            value_input.focus()
            return
        self._secrets[name] = value
        name_input.value = value_input.value = ""
        self._show()
        self.post_message(self.Problem(self, ""))
        name_input.focus()

    @on(Button.Pressed, "#remove-secret")
    def _remove(self, event: Button.Pressed) -> None:
        event.stop()
        listing = self.query_one("#secrets", OptionList)
        if listing.highlighted is None:
            self.post_message(self.Problem(self, "Highlight a secret in the list to remove it."))
            return
        name = listing.get_option_at_index(listing.highlighted).id
        if name in self._secrets:
            del self._secrets[name]
            self._show()
