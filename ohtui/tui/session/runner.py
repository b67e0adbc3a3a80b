"""Runner: sending the user's messages and running the conversation on a daemon thread.

A message sent while a run goes on (or before the conversation opens, or while /condense
writes a summary) is queued, shown as such at once, and handed to the engine at the next step
boundary; a run asked for while one goes on runs again after
it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ohtui.image_file import ImageFileError, data_url
from ohtui.tui import messages as msg
from ohtui.tui.session.words import describe
from ohtui.tui.status import RunStatus

if TYPE_CHECKING:
    from ohtui.sdk import BaseConversation, Message
    from ohtui.tui.session.link import Link

logger = logging.getLogger(__name__)

NOT_SENT = "The message was not sent: attach the image again."
NOT_APPROVED = "Not approved: the user answered with a new message instead (read it)."


@dataclass(frozen=True)
class Outgoing:
    """A message on its way to the conversation: its text and its image files."""

    text: str
    images: tuple[Path, ...] = ()

    def message(self) -> str | Message:
        """What `send_message` takes: the text alone, or a Message with its images read
        as data URLs (here, on the sending thread: a few MB take a moment to encode).
        ImageFileError when an image has gone or changed since it was attached."""
        if not self.images:
            return self.text
        from ohtui.sdk import ImageContent, Message, TextContent

        urls = [data_url(path) for path in self.images]
        return Message(
            role="user",
            content=[TextContent(text=self.text), ImageContent(image_urls=urls)],
        )


def run_status(conversation: BaseConversation) -> RunStatus:
    """The conversation's execution status, in the UI's terms."""
    return RunStatus(conversation.state.execution_status.value)


class Runner:
    """Sends messages to one conversation and runs it."""

    def __init__(
        self,
        link: Link,
        call_failed: Callable[[BaseException], None],
        finished: Callable[[BaseConversation, RunStatus], None],
        held_aside: Callable[[], bool] = lambda: False,
    ) -> None:
        """`call_failed`: a run's LLM call failed for good; `finished`: a run ended, with
        this status (after RunFinished is posted); `held_aside`: whether something else
        holds the conversation for a while (a summary being written for /condense)."""
        self._link = link
        self._held_aside = held_aside
        self._call_failed = call_failed
        self._finished = finished
        self._running = False
        self._rerun = False
        self._queue: list[Outgoing] = []
        self._delivering = False

    @property
    def running(self) -> bool:
        """Whether a run is going on."""
        return self._running

    @property
    def queued(self) -> bool:
        """Whether messages wait to be handed to the conversation."""
        with self._link.lock:
            return bool(self._queue)

    def submit(self, text: str, images: Sequence[Path] = ()) -> None:
        """Send a message (with image files); while a run goes on (or before opening) it
        is queued."""
        outgoing = Outgoing(text, tuple(images))
        link = self._link
        held = self._held_aside()  # taken before the lock: it reads the holder's own state
        with link.lock:
            busy = self._running or link.conversation is None or held
            if busy:
                self._queue.append(outgoing)
                queued = [item.text for item in self._queue]
        if busy:
            link.post(msg.QueueChanged(queued))
            if link.conversation is not None:
                self.deliver_queue()
            return
        link.spawn(lambda: self._send_then_run(outgoing), "ohtui-send")

    def take_queue(self) -> list[str]:
        """Take back the messages queued for the conversation (it will not get them)."""
        with self._link.lock:
            queued, self._queue = self._queue, []
        return [item.text for item in queued]

    def _send_then_run(self, outgoing: Outgoing) -> None:
        conversation = self._link.conversation
        if conversation is None:
            return
        try:
            if run_status(conversation) is RunStatus.WAITING_FOR_CONFIRMATION:
                # run() would take the waiting actions as approved: a reply is not a yes.
                conversation.reject_pending_actions(NOT_APPROVED)
                self._link.post(
                    msg.Notice("The waiting actions were not run: you replied instead.")
                )
            conversation.send_message(outgoing.message())
        except ImageFileError as exc:
            self._link.post(msg.Notice(f"{exc} {NOT_SENT}", "warning"))
            return
        except Exception as exc:  # shown to the user; the conversation stays usable
            logger.exception("sending a message failed")
            self._link.post(msg.SessionFailed(describe(exc)))
            return
        self.start_run()

    def deliver_queue(self) -> None:
        """Hand queued messages to the engine, in order, each at the next step boundary."""
        with self._link.lock:
            if self._delivering:
                return
            self._delivering = True
        self._link.spawn(self._deliver_loop, "ohtui-deliver")

    def _deliver_loop(self) -> None:
        from ohtui.sdk import ConversationExecutionStatus

        link = self._link
        conversation = link.conversation
        assert conversation is not None
        while True:
            with link.lock:
                if not self._queue or link.closed:
                    self._delivering = False
                    return
                outgoing = self._queue[0]
            try:
                conversation.send_message(outgoing.message())  # waits for the step to end
            except ImageFileError as exc:
                link.post(msg.Notice(f"{exc} {NOT_SENT}", "warning"))
                with link.lock:
                    self._queue.pop(0)
                    queued = [item.text for item in self._queue]
                link.post(msg.QueueChanged(queued))
                continue
            except Exception as exc:  # shown to the user; the rest stays queued
                logger.exception("delivering a queued message failed")
                link.post(msg.SessionFailed(describe(exc)))
                with link.lock:
                    self._delivering = False
                return
            with link.lock:
                self._queue.pop(0)
                queued = [item.text for item in self._queue]
                idle = not self._running
            link.post(msg.QueueChanged(queued))
            running = conversation.state.execution_status is ConversationExecutionStatus.RUNNING
            if idle or not running:
                # No run of ours goes on (the message waited for /condense, which reads as
                # running meanwhile), or the run had ended: start one for this message.
                self.start_run()

    def start_run(self) -> None:
        """Run the conversation (again); a run already going picks the new input up."""
        with self._link.lock:
            if self._running:
                self._rerun = True
                return
            self._running = True
        self._link.spawn(self._run_loop, "ohtui-run")

    def _run_loop(self) -> None:
        from ohtui.sdk import ConversationRunError, get_agent_final_response

        link = self._link
        conversation = link.conversation
        assert conversation is not None
        while True:
            try:
                conversation.run()
            except ConversationRunError as exc:
                logger.warning("run failed: %s", exc)  # its ConversationErrorEvent is on screen
                self._call_failed(exc.original_exception)
            except Exception as exc:  # never let the worker die silently
                logger.exception("run crashed")
                link.post(msg.SessionFailed(describe(exc)))
            with link.lock:
                if self._rerun and not link.closed:
                    self._rerun = False
                    continue
                self._running = False
            break
        status = run_status(conversation)
        final = ""
        if status is RunStatus.FINISHED:
            final = get_agent_final_response(conversation.state.active_branch(20))
        link.post(msg.RunFinished(status, final))
        self._finished(conversation, status)

    def pause(self) -> None:
        """Pause between steps (Esc)."""
        if self._link.conversation is not None:
            self._link.conversation.pause()

    def interrupt(self) -> None:
        """Stop now: abandon the LLM call, kill the running command."""
        if self._link.conversation is not None:
            self._link.conversation.interrupt()
