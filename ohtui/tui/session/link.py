"""Link: what the parts of one session share (the conversation once open, the screen they
post to, the lock over the session's state) and how they start work off the UI thread.

Everything that can block runs on daemon threads: Textual's thread workers run on an
executor that Python joins at exit, and quitting must never wait for an LLM call or a
command."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual.message import Message
    from textual.message_pump import MessagePump

    from ohtui.sdk import BaseConversation


class Link:
    """The conversation and the screen one session's parts work between."""

    def __init__(self, target: MessagePump) -> None:
        self.target = target
        self.conversation: BaseConversation | None = None
        """The open conversation (None until it has opened)."""
        self.closed = False
        """The session was closed: nothing more is posted."""
        self.lock = threading.Lock()
        """Guards the session's state shared between the UI thread and the workers."""

    def post(self, message: Message) -> None:
        """Post `message` to the screen (thread-safe), unless the session is closed."""
        if not self.closed:
            self.target.post_message(message)

    @staticmethod
    def spawn(work: Callable[[], None], name: str) -> None:
        """Run `work` on a daemon thread named `name`."""
        threading.Thread(target=work, name=name, daemon=True).start()
