"""Side requests on a conversation: a question answered without recording it (/ask), and a
condensation of the history the user asks for (/condense)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ohtui.tui import messages as msg
from ohtui.tui.session.words import describe

if TYPE_CHECKING:
    from ohtui.sdk import BaseConversation
    from ohtui.settings.profile import Profile
    from ohtui.tui.session.link import Link

logger = logging.getLogger(__name__)


class SideRequests:
    """Asks one conversation's agent aside, and condenses its history on demand."""

    def __init__(self, link: Link, profile: Profile) -> None:
        self._link = link
        self._profile = profile
        self._condensing = False

    def ask(self, question: str) -> None:
        """Answer a side question without recording it (/ask)."""
        link = self._link

        def work() -> None:
            conversation = link.conversation
            if conversation is None:
                link.post(msg.SideAnswer(question, "The conversation is still opening.", True))
                return
            try:
                answer = conversation.ask_agent(question)
            except Exception as exc:  # noqa: BLE001 - shown next to the question
                link.post(msg.SideAnswer(question, describe(exc), True))
                return
            link.post(msg.SideAnswer(question, answer))

        link.spawn(work, "ohtui-ask")

    def condense(self, focus: str | None) -> None:
        """Condense the history now (/condense), `focus` telling the summary what to keep.

        The summary is written on a thread (after a running step ends); the chat shows
        progress from Condensing messages, and the result as the Condensation event."""
        from ohtui.opening.context import HOW_TO_CONDENSE

        link = self._link
        conversation = link.conversation
        if conversation is None:
            link.post(msg.Notice("The conversation is still opening: /condense in a moment."))
            return
        condenser = conversation.agent.condenser
        if condenser is None or not condenser.handles_condensation_requests():
            strategy = self._profile.settings.context.strategy
            link.post(
                msg.Notice(
                    f"/condense needs a summarizing condenser; this conversation uses "
                    f"{strategy.label}. To use one, {HOW_TO_CONDENSE}.",
                    "warning",
                )
            )
            return
        with link.lock:
            if self._condensing:
                link.post(msg.Notice("A condensation is already being written."))
                return
            self._condensing = True
        link.post(msg.Condensing(True))
        link.spawn(lambda: self._condense(conversation, focus), "ohtui-condense")

    def _condense(self, conversation: BaseConversation, focus: str | None) -> None:
        from ohtui.sdk.context.condenser import NoCondensationAvailableException

        link = self._link
        try:
            conversation.condense(focus or None)
        except NoCondensationAvailableException:
            link.post(
                msg.Notice("Nothing to condense yet: the conversation is still short.", "warning")
            )
        except Exception as exc:
            logger.warning("condensing failed: %s", exc, exc_info=True)
            link.post(msg.Notice(f"The history was not condensed: {describe(exc)}", "error"))
        finally:
            with link.lock:
                self._condensing = False
            link.post(msg.Condensing(False))

    @property
    def condensing(self) -> bool:
        """Whether a condensation the user asked for is being written."""
        return self._condensing
