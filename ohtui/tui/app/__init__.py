"""OhtuiApp: the Textual application. Start-up imports only Textual and our light widgets;
the engine is imported on a worker thread once the first frame is on screen.

A package of its own: the app sits above the screens and widgets it shows (they reach it
through `ohtui.tui.screens.navigator`)."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.filter import LineFilter
from textual.widgets import Input, TextArea

from ohtui.tui import SET_FRAME_RATE

if SET_FRAME_RATE:  # Textual has read it: not for the processes the agent starts
    os.environ.pop("TEXTUAL_FPS", None)

from ohtui.long_lived import started
from ohtui.settings.profile import Profile
from ohtui.settings.screen_reader import screen_reader_on
from ohtui.tui.app.frame_handover import HandoverDriver
from ohtui.tui.app.input_pace import InputPace
from ohtui.tui.app.navigation import Navigation
from ohtui.tui.app.palette import SlashCommandProvider
from ohtui.tui.app.preload import preload_picker
from ohtui.tui.key_order import OrderedKeys
from ohtui.tui.options import AppOptions
from ohtui.tui.screen_reader import SCREEN_READER_CLASS, NoShapes, spoken_key
from ohtui.tui.screens.chat import ChatScreen
from ohtui.tui.shown_only import ShownOnly
from ohtui.tui.toast_place import watch_screens
from ohtui.tui.widgets.engine_import import load_engine

WARM_UP_AFTER = 2.0
"""Seconds the first frame stays idle before the LLM path is warmed up (see _warm_up) and the
conversation picker got ready to open (see preload_picker)."""
WARM_UP_POLL = 0.05
"""Seconds between the warm-up's looks for the open conversation: it starts as soon as the
conversation is open (litellm's import is most of what the first message would wait for)."""
WARM_UP_TRIES = 240
"""Times the warm-up looks for the open conversation before going without (about 12 s after
the first frame)."""
SHOWN_ONLY = ShownOnly()
"""One instance: Textual caches each line's filtered form by filter."""
NO_SHAPES = NoShapes()
MCP_START_AFTER = 0.25
"""Seconds the first frame stays idle before the MCP servers start (see Session.frame_idle)."""
LLM_WARM_AFTER = 0.25
"""Seconds the first frame stays idle before the LLM path is warmed up (see _warm_up): litellm's
import takes seconds, the first message should not wait for it."""

logger = logging.getLogger(__name__)


def _warm_engine(conversation: object, give_way: Callable[[], None]) -> None:
    """Import litellm and connect to the conversation's LLM server (a local conversation's;
    a remote one calls its LLM at the server); the import gives way to keys (`give_way`)."""
    load_engine()
    from ohtui.sdk import LocalConversation
    from ohtui.sdk.llm.warm_up import warm_up

    if isinstance(conversation, LocalConversation):
        warm_up(conversation.agent.llm, pause=give_way)
    elif conversation is None:
        warm_up(pause=give_way)


class OhtuiApp(InputPace, OrderedKeys, Navigation):
    """A chat with a coding agent that works in your project."""

    CSS_PATH = "ohtui.tcss"
    TITLE = "ohtui"
    COMMANDS: ClassVar = App.COMMANDS | {SlashCommandProvider}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]
    screen_reader = False
    """Screen-reader mode (set before the first frame; see __init__)."""

    def __init__(self, options: AppOptions) -> None:
        super().__init__()
        self.options = options
        self.profile = Profile(
            options.config_file,
            options.overrides(),
            use_keyring=options.use_keyring,
            environ=options.environ,
        )
        self.resume_hint: str | None = None
        self.exit_error: str | None = None
        self._crash: Exception | None = None
        self.chat: ChatScreen | None = None
        # Decided before the first frame, which it changes.
        self.screen_reader = screen_reader_on(self.profile.early_value("ui", "screen_reader"))
        if self.screen_reader:
            self.add_class(SCREEN_READER_CLASS)  # what every widget asks (reading_aloud)
            self.css_path.append(Path(__file__).with_name("screen_reader.tcss"))
            self.animation_level = "none"
        if options.resume_id or options.continue_latest:
            # Resuming shows history as soon as it can: load the engine while Textual starts.
            threading.Thread(target=load_engine, name="ohtui-preload", daemon=True).start()

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, but on Linux and macOS one that puts each frame on the terminal
        before the UI thread goes on (see frame_handover)."""
        driver_class = super().get_driver_class()
        return HandoverDriver if driver_class is LinuxDriver else driver_class

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, then ShownOnly: whatever a widget shows, no text in it reaches
        the terminal as a control; in screen-reader mode, NoShapes: no box drawing either."""
        shapes = [NO_SHAPES] if self.screen_reader else []
        return [*super().get_line_filters(), *shapes, SHOWN_ONLY]

    def get_default_screen(self) -> ChatScreen:
        """The chat is the app's base screen (no extra screen to compose first)."""
        self.chat = ChatScreen(self.options, self.profile, self)
        return self.chat

    def on_mount(self) -> None:
        # The theme is known before the first frame (one key, read without validation);
        # everything else in the settings loads with the conversation, off this thread.
        theme = self.profile.early_value("ui", "theme")
        if isinstance(theme, str) and theme in self.available_themes:
            self.theme = theme
        watch_screens(self)
        self.call_after_refresh(started)  # the garbage collector, off since the start (cli)
        self.call_after_refresh(self._configure_logging)
        self.call_after_refresh(self.set_timer, MCP_START_AFTER, self.frame_idle)
        self.call_after_refresh(self.set_timer, LLM_WARM_AFTER, self._warm_up)
        self.call_after_refresh(self.set_timer, WARM_UP_AFTER, self._preload_picker)

    def get_key_display(self, binding: Binding) -> str:
        """Keys as Textual shows them; in screen-reader mode in words ("ctrl+c", "up")."""
        shown = super().get_key_display(binding)
        return spoken_key(shown) if self.screen_reader else shown

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Screen-reader mode: a text field's cursor stays still (a blinking one changes
        the screen twice a second, and screen readers announce changes)."""
        widget = event.widget
        if self.screen_reader and isinstance(widget, Input | TextArea) and widget.cursor_blink:
            widget.cursor_blink = False

    def _warm_up(self, tries: int = 0) -> None:
        """The first frame has been idle: warm the LLM path up off the UI thread, once the
        conversation is open (to learn its server)."""
        # The session if made: making it here would import it on the UI thread (keys wait).
        session = self.current_session if self.chat is not None else None
        conversation = session.conversation if session is not None else None
        if conversation is None and tries < WARM_UP_TRIES:
            self.set_timer(WARM_UP_POLL, lambda: self._warm_up(tries + 1))
            return
        threading.Thread(
            target=_warm_engine,
            args=(conversation, self.give_way),
            name="ohtui-warm-up",
            daemon=True,
        ).start()

    def _preload_picker(self) -> None:
        async def preload() -> None:
            await preload_picker(self)
            self.get_picker_ready()

        self.run_worker(preload(), group="preload", exit_on_error=False)

    def _configure_logging(self) -> None:
        """Log to a file: nothing may be printed to the terminal while the TUI runs."""
        from ohtui.logs import log_to_file

        log_to_file()

    # Textual prints an unexpected error's traceback with every local variable in it (server
    # settings, secrets). These two of its private hooks send it to the log file instead.
    def _handle_exception(self, error: Exception) -> None:
        self._crash = error
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        """End the app on an unexpected error: the traceback goes to the log file (no
        locals), the terminal gets one sentence saying where (see cli.main), exit code 1."""
        from ohtui.logs import LOG_FILE, log_to_file
        from ohtui.settings import paths

        log_to_file()
        error = self._crash
        name = type(error).__name__ if error is not None else "an error"
        logger.error("ohtui stopped on an unexpected error", exc_info=error)
        self.exit_error = (
            f"ohtui stopped on an unexpected error ({name}); the details are in "
            f"{paths.log_dir() / LOG_FILE}."
        )
        self.bell()
        self._close_messages_no_wait()

    async def action_quit(self) -> None:
        """Quit at once, whatever the agent is doing; say how to resume."""
        self.quit_now()

    def on_unmount(self) -> None:
        """However the app ends: its conversation is let go, and its MCP servers end."""
        if self.chat is not None and self.resume_hint is None:
            self.resume_hint = self.shutdown()

    def quit_now(self) -> None:
        """Stop the agent (bounded wait), remember the resume hint, and exit."""
        if self.chat is not None:
            self.resume_hint = self.shutdown()
        self.exit()
