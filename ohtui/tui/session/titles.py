"""A conversation's title: set by the user, or written by the model (on /title, and once
after the first exchange of an untitled conversation)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.tui import messages as msg
from ohtui.tui.session.words import describe

if TYPE_CHECKING:
    from ohtui.sdk import BaseConversation
    from ohtui.settings.profile import Profile
    from ohtui.tui.session.link import Link

TITLE_TIMEOUT = 30.0
"""Seconds a title may take; without one the first message, cut short, is the title."""


class Titles:
    """Titles one conversation."""

    def __init__(self, link: Link, profile: Profile) -> None:
        self._link = link
        self._profile = profile
        self._titled = False

    def set_title(self, title: str | None) -> None:
        """Set the title, or (None) have the model write one."""
        link = self._link

        def work() -> None:
            conversation = link.conversation
            if conversation is None:
                return
            try:
                new = title or conversation.generate_title()
            except ValueError:
                link.post(msg.Notice("Nothing to title yet: send a message first.", "warning"))
                return
            try:
                conversation.set_title(new)
            except Exception as exc:  # noqa: BLE001 - e.g. read-only, or the disk is full
                link.post(msg.Notice(f"The title was not changed: {describe(exc)}", "error"))

        link.spawn(work, "ohtui-title")

    def title_once(self, conversation: BaseConversation) -> None:
        """After the first exchange, have the model title an untitled conversation."""
        if self._titled or conversation.state.title or not self._profile.settings.ui.auto_title:
            return
        self._titled = True
        llm = conversation.agent.llm.model_copy(
            update={"num_retries": 0, "stream": False, "timeout": TITLE_TIMEOUT}
        )
        try:
            title = conversation.generate_title(llm=llm)
        except ValueError:  # no user message (a blocked prompt): nothing to title yet
            self._titled = False
            return
        if not self._link.closed and not conversation.state.title:
            conversation.set_title(title)
