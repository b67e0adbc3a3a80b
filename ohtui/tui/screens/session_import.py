"""The session's code imported off the UI thread, so keys typed as the first frame appears
show at once.

`ohtui.tui.session` brings the opening of a conversation and, through it, the engine and
pydantic: about a second of CPU on a loaded machine. Imported on the UI thread right after
the first frame, it held every key typed meanwhile (issue 30: 0.87 s before typed letters
showed). `start_session` imports it on a thread (one at a time with the engine's import, see
`load_engine`), then runs what needs the session on the UI thread; `session_class` is the
UI thread's own way in, for a user who acts before that (it waits, as before).
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ohtui.tui.widgets.engine_import import IMPORT_LOCK, load_engine

if TYPE_CHECKING:
    from textual.app import App

    from ohtui.tui.session import Session

__all__ = ["session_class", "start_session"]

MODULE = "ohtui.tui.session"


def session_class() -> type[Session]:
    """The Session class, its module imported (once, one thread at a time with the engine)."""
    if MODULE not in sys.modules:
        load_engine()
        with IMPORT_LOCK:
            import ohtui.tui.session  # noqa: F401
    from ohtui.tui.session import Session

    return Session


def start_session(
    app: App[Any], then: Callable[[], None], give_way: Callable[[], None] | None = None
) -> None:
    """Import the session's code on a thread, then run `then` on the UI thread (not at all
    when the app has ended meanwhile). `give_way`: called before each module imported (see
    `ohtui.paced_import`), so keys typed meanwhile are drawn first."""

    def imported() -> None:
        if give_way is None:
            session_class()
        else:
            from ohtui.paced_import import paced_imports

            with paced_imports(give_way):
                session_class()
        with contextlib.suppress(RuntimeError):  # the app ended meanwhile
            app.call_from_thread(then)

    threading.Thread(target=imported, name="ohtui-session-import", daemon=True).start()
