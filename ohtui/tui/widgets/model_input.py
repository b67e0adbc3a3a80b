"""ModelInput: a model name field with a menu of matching model names under it."""

from __future__ import annotations

from collections.abc import Callable

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input

from ohtui.tui.widgets.marked import MarkedOptionList

MENU_SIZE = 8

Matcher = Callable[[str], list[str]]
"""The model names that match what is typed, best first."""


class _NameInput(Input):
    """The text field: hands the menu's keys to the ModelInput before editing."""

    def __init__(
        self, key_handler: Callable[[str], bool], value: str, placeholder: str, id: str
    ) -> None:
        super().__init__(value=value, placeholder=placeholder, id=id, select_on_focus=False)
        self._key_handler = key_handler

    async def _on_key(self, event: events.Key) -> None:
        if self._key_handler(event.key):
            event.stop()
            event.prevent_default()


class ModelInput(Vertical):
    """Type a model name; ↓/↑ pick from the matches, Enter or Tab takes one, Esc closes."""

    class Changed(Message):
        """The user typed or chose a model name."""

        def __init__(self, model_input: ModelInput, value: str) -> None:
            super().__init__()
            self.model_input = model_input
            self.value = value

        @property
        def control(self) -> ModelInput:
            """The ModelInput that changed."""
            return self.model_input

    DEFAULT_CSS = """
    ModelInput {
        height: auto;
        & > #model-menu {
            display: none;
            height: auto;
            max-height: 8;
            border: none;
            padding: 0 1;
            background: $surface-lighten-1;
            &.-open { display: block; }
        }
    }
    """

    def __init__(self, value: str = "", *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(id=id)
        self._input = _NameInput(self._handle_key, value, placeholder=placeholder, id="model-name")
        self._menu = MarkedOptionList(id="model-menu", markup=False)
        self._menu.can_focus = False
        self._matcher: Matcher = lambda _typed: []

    def compose(self) -> ComposeResult:
        yield self._input
        yield self._menu

    @property
    def value(self) -> str:
        """The model name as typed (or chosen)."""
        return self._input.value.strip()

    @value.setter
    def value(self, text: str) -> None:
        with self._input.prevent(Input.Changed):
            self._input.value = text
        self._close()

    @property
    def menu_open(self) -> bool:
        """Whether the menu of matches is showing."""
        return self._menu.has_class("-open")

    def set_matcher(self, matcher: Matcher) -> None:
        """Where matches come from (e.g. the chosen provider's models)."""
        self._matcher = matcher
        if self.menu_open:
            self._refresh_menu()

    def focus(self, scroll_visible: bool = True) -> ModelInput:
        """Focus the text field."""
        self._input.focus(scroll_visible)
        return self

    @on(Input.Changed, "#model-name")
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        self._refresh_menu()
        self.post_message(self.Changed(self, self.value))

    def on_descendant_blur(self) -> None:
        self._close()

    def _refresh_menu(self) -> None:
        typed = self._input.value.strip()
        matches = [m for m in self._matcher(typed) if m != typed][:MENU_SIZE] if typed else []
        self._menu.clear_options()
        if not matches:
            self._close()
            return
        self._menu.add_options(matches)
        self._menu.highlighted = None
        self._menu.add_class("-open")

    def _close(self) -> None:
        self._menu.remove_class("-open")

    def _handle_key(self, key: str) -> bool:
        if not self.menu_open:
            return False
        menu = self._menu
        if key in ("down", "up"):
            count = menu.option_count
            current = menu.highlighted
            if current is None:
                menu.highlighted = 0 if key == "down" else count - 1
            else:
                menu.highlighted = (current + (1 if key == "down" else -1)) % count
            return True
        if key in ("enter", "tab") and menu.highlighted is not None:
            chosen = str(menu.get_option_at_index(menu.highlighted).prompt)
            self.value = chosen
            self._input.cursor_position = len(chosen)
            self.post_message(self.Changed(self, chosen))
            return True
        if key == "escape":
            self._close()
            return True
        return False
