"""One ACP session: one conversation of ohtui's engine, its updates streamed to the client,
its prompts run to a stop reason, its approvals asked of the client.

The engine calls back on its run thread; updates are queued onto the loop and sent by one
task, in order. A turn (`prompt`) runs the conversation on a daemon thread and, whenever it
waits for approval, asks the client about each action the policy would ask the user about,
applying the answer as the TUI's approval screen does. `cancel` stops the turn now, as
Ctrl+C in the TUI: the model call is dropped and the running command's process tree killed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from acp import RequestError
from acp.schema import (
    AgentMessageChunk,
    CurrentModeUpdate,
    PromptResponse,
    TextContentBlock,
)

from ohtui.acp import permissions
from ohtui.acp.permissions import Choice
from ohtui.acp.updates import Update, Updates
from ohtui.opening import Callbacks
from ohtui.opening.safety import ConversationSafety, actions_needing_approval
from ohtui.sdk import (
    ConversationErrorEvent,
    ConversationExecutionStatus,
    ConversationRunError,
    Event,
    Message,
)
from ohtui.sdk.conversation.impl.async_run import run_on_thread
from ohtui.settings.choices import ConfirmationPolicy

if TYPE_CHECKING:
    from acp import Client

    from ohtui.sdk import LocalConversation, RemoteConversation
    from ohtui.sdk.llm import LLMStreamChunk

logger = logging.getLogger(__name__)

Status = ConversationExecutionStatus
T = TypeVar("T")

NOT_APPROVED = (
    "Not approved: the user cancelled while this action waited, and sent a new message "
    "instead (read it)."
)


async def blocking(work: Callable[[], T], name: str) -> T:
    """`work()` on a daemon thread, awaited (the loop stays free; exit never waits on it)."""
    result: list[T] = []
    await run_on_thread(lambda: result.append(work()), lambda: None, name)
    return result[0]


class Feed:
    """Session updates from any thread, sent to the client in order by one task."""

    def __init__(self, client: Client, session_id: str, updates: Updates) -> None:
        self.updates = updates
        self._client = client
        self.session_id = session_id
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[Update] = asyncio.Queue()
        self._sender = asyncio.ensure_future(self._send_all())
        self.live = True
        """Whether engine callbacks are sent (off while a saved conversation is replayed)."""

    def rename(self, session_id: str) -> None:
        """The session's id, once its conversation is open."""
        self.session_id = session_id

    def callbacks(self) -> Callbacks:
        """The engine's callbacks: events and streamed tokens become updates."""
        return Callbacks(on_event=self._on_event, on_token=self._on_token)

    def _on_event(self, event: Event) -> None:
        if self.live:
            self.push(self.updates.of_event(event))

    def _on_token(self, chunk: LLMStreamChunk) -> None:
        if self.live:
            self.push(self.updates.of_token(chunk))

    def push(self, updates: list[Update]) -> None:
        """Queue updates, from any thread."""
        for update in updates:
            try:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, update)
            except RuntimeError:  # the loop has closed: the client is gone
                return

    async def drain(self) -> None:
        """Wait until every update queued so far has been sent."""
        await asyncio.sleep(0)  # updates handed over from threads just before land first
        await self._queue.join()

    async def _send_all(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                await self._client.session_update(session_id=self.session_id, update=update)
            except Exception as exc:  # noqa: BLE001 - the client is gone or refused one: go on
                logger.warning("session/update not sent: %s", exc)
            finally:
                self._queue.task_done()

    def close(self) -> None:
        """Stop sending."""
        self._sender.cancel()


class AcpSession:
    """One conversation, driven by an ACP client."""

    def __init__(
        self,
        session_id: str,
        conversation: LocalConversation | RemoteConversation,
        safety: ConversationSafety,
        client: Client,
        feed: Feed,
        model: str,
    ) -> None:
        self.id = session_id
        self.conversation = conversation
        self.safety = safety
        self.model = model
        self._client = client
        self.feed = feed
        self._turn: asyncio.Task[object] | None = None
        self._asking: asyncio.Task[object] | None = None
        self._cancelled = False

    async def prompt(self, message: Message) -> PromptResponse:
        """Send the message and run until the agent stops: end_turn, cancelled, or
        max_turn_requests when it hit the iteration limit. A failed model call is a JSON-RPC
        error naming why (auth_required for a key the provider refused)."""
        if self._turn is not None and not self._turn.done():
            raise RequestError.invalid_request(
                {"details": "a prompt is already running in this session: wait, or cancel it"}
            )
        self._cancelled = False
        self._turn = asyncio.current_task()
        try:
            await blocking(lambda: self._send(message), "ohtui-acp-send")
            return await self._run_turn()
        finally:
            self._turn = None

    def _send(self, message: Message) -> None:
        conversation = self.conversation
        if conversation.state.execution_status is Status.WAITING_FOR_CONFIRMATION:
            # run() would take the waiting actions as approved: a new prompt is not a yes.
            conversation.reject_pending_actions(NOT_APPROVED)
        conversation.send_message(message)

    async def _run_turn(self) -> PromptResponse:
        conversation = self.conversation
        while True:
            if self._cancelled:
                return PromptResponse(stop_reason="cancelled")
            try:
                await self._run()
            except ConversationRunError as exc:
                await self.feed.drain()
                if self._cancelled:
                    return PromptResponse(stop_reason="cancelled")
                raise run_error(exc.original_exception, conversation) from None
            await self.feed.drain()
            if self._cancelled:
                return PromptResponse(stop_reason="cancelled")
            status = conversation.state.execution_status
            if status is Status.WAITING_FOR_CONFIRMATION:
                if not await self._confirm():
                    return PromptResponse(stop_reason="cancelled")
                continue
            return await self._stopped(status)

    async def _run(self) -> None:
        """One run on a daemon thread. A conversation here runs through `arun`, which takes
        an interrupt made from the moment it is called (a cancel can never slip in before
        the run starts and be forgotten); one on an agent server through `run`."""
        from ohtui.sdk import LocalConversation as Local

        conversation = self.conversation
        if isinstance(conversation, Local):
            await conversation.arun()
            return
        await run_on_thread(conversation.run, conversation.interrupt, f"ohtui-acp-{self.id[:8]}")

    async def _stopped(self, status: ConversationExecutionStatus) -> PromptResponse:
        """The stop reason for how the run ended; an error said as the agent's words."""
        if status in (Status.FINISHED, Status.IDLE):
            return PromptResponse(stop_reason="end_turn")
        if status is Status.PAUSED:
            return PromptResponse(stop_reason="cancelled")
        error = _latest_error(self.conversation)
        if status is Status.STUCK:
            text = "Stopped: the agent is stuck (it repeats itself without progress)."
        else:
            text = f"Stopped: {error.detail}" if error is not None else f"Stopped ({status.value})."
        self.feed.push(
            [
                AgentMessageChunk(
                    session_update="agent_message_chunk",
                    content=TextContentBlock(type="text", text=f"\n\n{text}"),
                )
            ]
        )
        await self.feed.drain()
        if error is not None and error.code == "MaxIterationsReached":
            return PromptResponse(stop_reason="max_turn_requests")
        return PromptResponse(stop_reason="end_turn")

    async def _confirm(self) -> bool:
        """Ask the client about each waiting action that needs approval and apply the
        answers; False when the turn was cancelled meanwhile (nothing more runs)."""
        conversation = self.conversation
        working_dir = conversation.workspace.working_dir
        needing = await blocking(
            lambda: actions_needing_approval(conversation), "ohtui-acp-pending"
        )
        for action, reason in needing:
            asked = permissions.question(action, reason, working_dir, self.safety.policy)
            choice = await self._ask(asked)
            if choice is None:
                return False
            await blocking(partial(self._apply, asked, choice), "ohtui-acp-decide")
            if choice.allows:
                self.feed.push([self.feed.updates.approved(action)])
        return not self._cancelled

    async def _ask(self, asked: permissions.Question) -> Choice | None:
        """The client's answer (None: the request or the turn was cancelled)."""
        if self._cancelled:
            return None
        request = self._client.request_permission(
            session_id=self.id,
            tool_call=asked.tool_call,
            options=asked.options,
            ohtui=asked.meta,
        )
        task = asyncio.ensure_future(request)
        self._asking = task
        try:
            response = await task
        except asyncio.CancelledError:
            if self._cancelled:
                return None
            raise
        except Exception as exc:  # noqa: BLE001 - the client failed to answer: nothing runs
            logger.warning("session/request_permission failed: %s", exc)
            return None if self._cancelled else Choice.REJECT_ONCE
        finally:
            self._asking = None
        if self._cancelled:
            return None
        return permissions.choice_of(response, asked)

    def _apply(self, asked: permissions.Question, choice: Choice) -> None:
        """What the TUI's approval screen does with the same answer."""
        action = asked.action
        if choice is Choice.ALLOW_ALWAYS:
            for rule in asked.rules:
                self.safety.add_rule(rule)
        elif choice is Choice.REJECT_ALWAYS:
            for rule in asked.rules:
                self.safety.add_rule(rule, decision="deny")
        if not choice.allows:
            self.conversation.reject_pending_actions(permissions.REJECTED, action_ids=[action.id])

    def cancel(self) -> None:
        """Stop the turn now: the model call dropped, the running command (and all it
        started) killed, a permission request withdrawn."""
        self._cancelled = True
        if self._asking is not None:
            self._asking.cancel()
        if self._turn is not None:
            self.conversation.interrupt()

    def set_policy(self, policy: ConfirmationPolicy) -> None:
        """Switch the confirmation policy (blocking), keeping the rules; told as a mode."""
        self.safety.set_policy(policy)
        self.feed.push(
            [CurrentModeUpdate(session_update="current_mode_update", current_mode_id=policy.value)]
        )

    async def close(self) -> None:
        """End everything the conversation started (commands, MCP servers) and close it."""
        self.cancel()
        self.feed.close()
        await blocking(self.conversation.close, "ohtui-acp-close")


def _latest_error(
    conversation: LocalConversation | RemoteConversation,
) -> ConversationErrorEvent | None:
    for event in reversed(conversation.state.active_branch(20)):
        if isinstance(event, ConversationErrorEvent):
            return event
    return None


def run_error(
    error: BaseException, conversation: LocalConversation | RemoteConversation
) -> RequestError:
    """The JSON-RPC error for a turn that failed: the provider's refusal of the key is
    auth_required; anything else an internal error saying what happened (secrets masked)."""
    from ohtui.sdk.llm import LLMAuthenticationError

    text = (
        conversation.state.secret_registry.mask_secrets_in_output(str(error))
        or type(error).__name__
    )
    if isinstance(error, LLMAuthenticationError):
        return RequestError(-32000, f"The model's provider refused the API key: {text}", None)
    return RequestError(-32603, f"The run failed: {text}", {"details": text})
