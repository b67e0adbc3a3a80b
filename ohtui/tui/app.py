"""OhtuiApp: the Textual application. Start-up imports only Textual and our light widgets;
the engine is imported on a worker thread once the first frame is on screen."""

from __future__ import annotations

import logging
import logging.handlers
import threading
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from ohtui.tui.commands import SlashCommandProvider
from ohtui.tui.options import AppOptions
from ohtui.tui.screens.chat import ChatScreen

LOG_FILE = "ohtui.log"


class OhtuiApp(App[None]):
    """A chat with a coding agent that works in your project."""

    CSS_PATH = "ohtui.tcss"
    TITLE = "ohtui"
    COMMANDS: ClassVar = App.COMMANDS | {SlashCommandProvider}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, options: AppOptions) -> None:
        super().__init__()
        self.options = options
        self.resume_hint: str | None = None
        self.exit_error: str | None = None
        self.chat: ChatScreen | None = None
        if options.resume_id:
            # Resuming shows history as soon as it can: load the engine while Textual starts.
            threading.Thread(target=_preload_engine, name="ohtui-preload", daemon=True).start()

    def get_default_screen(self) -> ChatScreen:
        """The chat is the app's base screen (no extra screen to compose first)."""
        self.chat = ChatScreen(self.options)
        return self.chat

    def on_mount(self) -> None:
        self.call_after_refresh(self._configure_logging)

    def _configure_logging(self) -> None:
        """Log to a file: nothing may be printed to the terminal while the TUI runs."""
        from ohtui.settings import paths

        root = logging.getLogger()
        if any(getattr(h, "_ohtui", False) for h in root.handlers):
            return
        try:
            directory = paths.log_dir()
            directory.mkdir(parents=True, exist_ok=True)
            handler: logging.Handler = logging.handlers.RotatingFileHandler(
                directory / LOG_FILE, maxBytes=2_000_000, backupCount=2, encoding="utf-8"
            )
        except OSError:
            handler = logging.NullHandler()
        handler._ohtui = True  # type: ignore[attr-defined]
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        logging.captureWarnings(True)

    async def action_quit(self) -> None:
        """Quit at once, whatever the agent is doing; say how to resume."""
        self.quit_now()

    def quit_now(self) -> None:
        """Stop the agent (bounded wait), remember the resume hint, and exit."""
        if self.chat is not None:
            self.resume_hint = self.chat.shutdown()
        self.exit()


def _preload_engine() -> None:
    import ohtui.sdk
    import ohtui.tui.widgets.cells  # noqa: F401
