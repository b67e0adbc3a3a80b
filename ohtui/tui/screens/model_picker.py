"""ModelPickerScreen (/model without a name): type a model, completed from litellm's list
(the settings screen's ModelInput), or take one of the recent models.

The catalogue and the recent models are read on a thread worker: the list is a file of a
few MB, and the recent models a file of the data dir."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ohtui.settings.catalog import FEATURED
from ohtui.tui.widgets.marked import MarkedOptionList
from ohtui.tui.widgets.model_input import ModelInput

Matches = Callable[[str | None, str, int], list[str]]
"""The catalogue's models of a provider (None: all) matching what is typed, at most so many."""
LEGEND = "enter switch · ↑↓ matches · tab recent · esc cancel"
MATCHES = 20


def recent_prompt(model: str, *, current: bool) -> Content:
    """A recent model, the current one marked."""
    return Content.assemble(
        ("● " if current else "  ", "$text-accent"),
        (model, "bold" if current else ""),
        ("  (now)" if current else "", "$text-accent"),
    )


class ModelPickerScreen(ModalScreen[str | None]):
    """Choose the model the conversation thinks with from its next turn: the name typed
    (Enter), or a recent one; Esc None."""

    CSS_PATH = "model_picker.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self, current: str, recent: Callable[[], list[str]], settings_model: str | None = None
    ) -> None:
        """`recent`: the models switched to lately, most recent first (called on a worker);
        `settings_model`: the one the settings name, offered too."""
        super().__init__()
        self._current = current
        self._recent = recent
        self._settings_model = settings_model

    def compose(self) -> ComposeResult:
        """The heading, the name field with its matches, the recent models and a legend."""
        with Vertical(id="dialog"):
            yield Static("Switch model", id="heading")
            yield Static(f"Now: {self._current or 'no model'}", id="now", markup=False)
            yield ModelInput(placeholder="type a model name, e.g. anthropic/claude…", id="model")
            yield Static("Recent", id="recent-heading")
            yield MarkedOptionList(id="recent")
            yield Static(LEGEND, id="legend", markup=False)

    def on_mount(self) -> None:
        """Focus the name field; read the catalogue and the recent models."""
        self.query_one(ModelInput).focus()
        self._load()

    @work(thread=True, exclusive=True, group="model-picker-load")
    def _load(self) -> None:
        from ohtui.settings.catalog import load_catalog

        recent = self._recent()
        catalog = load_catalog()
        self.app.call_from_thread(self._loaded, recent, catalog.matches)

    def _loaded(self, recent: list[str], matches: Matches) -> None:
        models = [m for m in (self._current, *recent, self._settings_model) if m]
        options = self.query_one("#recent", OptionList)
        options.clear_options()
        options.add_options(
            Option(recent_prompt(m, current=m == self._current), id=m)
            for m in dict.fromkeys(models)
        )
        options.highlighted = 0 if options.option_count else None
        provider = self._current.partition("/")[0] if "/" in self._current else "openai"

        def matcher(typed: str) -> list[str]:
            # The recent models, the current provider's, the well-known providers', any.
            words = typed.lower().split()
            found = [m for m in models if all(w in m.lower() for w in words)]
            for source in (provider, *FEATURED):
                found += matches(source, typed, MATCHES)
            found += matches(None, typed, MATCHES)
            return list(dict.fromkeys(found))[:MATCHES]

        self.query_one(ModelInput).set_matcher(matcher)

    @on(Input.Submitted, "#model-name")
    def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        model = self.query_one(ModelInput).value
        if model:
            self.dismiss(model)

    @on(OptionList.OptionSelected, "#recent")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        """Keep the model."""
        self.dismiss(None)
