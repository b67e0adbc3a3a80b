"""Bridge: the engine's callbacks (on the worker threads) turned into the screen's messages.

Callbacks post and return at once; streamed tokens are buffered and announced once until
the screen takes them, however fast they come. An event closes the batch it follows: text
streamed after an event is announced after it, so a busy screen keeps the engine's order."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from ohtui.opening import Callbacks
from ohtui.tui import messages as msg
from ohtui.tui.session.heap import settle_heap
from ohtui.tui.session.words import in_words
from ohtui.tui.status import RunStatus

if TYPE_CHECKING:
    from ohtui.opening.safety import ConversationSafety
    from ohtui.sdk import Event
    from ohtui.sdk.llm import LLMStreamChunk
    from ohtui.settings.profile import Profile
    from ohtui.tui.session.link import Link

POLICY_KEYS = ("confirmation_policy", "ohtui_confirmation_policy")
"""State updates that change the confirmation policy (the second: ohtui's whole policy on a
server, ohtui.sdk.wire.extensions.POLICY_FIELD; not imported: this module loads before the
engine)."""


class Bridge:
    """Turns one conversation's callbacks into messages for the screen."""

    def __init__(
        self,
        link: Link,
        profile: Profile,
        running: Callable[[], bool],
        safety: Callable[[], ConversationSafety | None],
    ) -> None:
        """`running`: whether a run is going on (the calls the status bar follows);
        `safety`: the conversation's safety, once installed (its policy is shown)."""
        self._link = link
        self._profile = profile
        self._running = running
        self._safety = safety
        self._batches: deque[list[tuple[str, str, str]]] = deque()
        """Streamed pieces, one batch per TokensReady posted (oldest first)."""
        self._open: list[tuple[str, str, str]] | None = None
        """The batch new pieces join (None: the next piece starts and announces one)."""
        self._tokens_lock = threading.Lock()
        self._heap_settled = False
        """The heap was settled at this session's first streamed token (litellm is in)."""
        self._calling = False
        """An LLM call of the run is connecting (no answer from it yet)."""

    def callbacks(self) -> Callbacks:
        """What the engine is to call back."""
        return Callbacks(
            self._on_event, self._on_token, self._on_retry, self._on_attempt, self._on_connection
        )

    def _on_event(self, event: Event) -> None:
        from ohtui.sdk import ConversationExecutionStatus, ConversationStateUpdateEvent

        post = self._link.post
        if not isinstance(event, ConversationStateUpdateEvent):
            self._answered()
            with self._tokens_lock:
                self._open = None  # text after this event goes in a batch announced after it
        if isinstance(event, ConversationStateUpdateEvent):
            if event.key == "execution_status":
                engine_status = ConversationExecutionStatus(event.value)
                post(msg.StatusChanged(RunStatus(engine_status.value)))
            elif event.key == "stats":
                self.post_stats()
            elif event.key == "title" and event.value:
                post(msg.TitleChanged(str(event.value)))
            elif event.key in POLICY_KEYS and (safety := self._safety()) is not None:
                post(msg.PolicyChanged(safety.policy))  # whoever changed it
            return
        post(msg.EngineEvent(event, self._index_of(event)))

    def _index_of(self, event: Event) -> int | None:
        """Where `event` is on the active branch (the screen shows each position once)."""
        from ohtui.sdk.conversation.event_store import EventLog
        from ohtui.tui.session.branches import active_branch

        conversation = self._link.conversation
        if conversation is None or not isinstance(conversation.state.events, EventLog):
            return None  # a remote one's: in the order they come
        return active_branch(conversation).position_of(event.id)

    def _on_connection(self, state: str, reason: str) -> None:
        self._link.post(msg.ConnectionChanged(state, reason))

    def _on_attempt(self, attempt: int) -> None:
        if not self._running():
            return  # a title or a side question: not the run the status bar follows
        self._calling = True
        total = self._attempts()
        self._link.post(
            msg.CallActivity("connecting…" if attempt == 1 else f"connecting… ({attempt}/{total})")
        )

    def _on_retry(self, attempt: int, wait: float, error: Exception) -> None:
        if not self._running():
            return
        self._link.post(
            msg.CallActivity(
                f"retrying {attempt + 1}/{self._attempts()}",
                until=time.monotonic() + wait,
                reason=in_words(error),
            )
        )

    def _attempts(self) -> int:
        conversation = self._link.conversation
        return conversation.agent.llm.num_retries + 1 if conversation is not None else 1

    def _answered(self) -> None:
        """The model answered (a token or an event): the call is no longer connecting."""
        if self._calling:
            self._calling = False
            self._link.post(msg.CallActivity(""))

    def call_failed(self, error: BaseException) -> None:
        """The run's LLM call failed for good: say why in the status bar."""
        self._calling = False
        self._link.post(msg.CallActivity(in_words(error)))

    def _on_token(self, chunk: LLMStreamChunk) -> None:
        # Chunks are buffered and announced once until the UI takes them: however fast they
        # come, the UI's queue holds one message, and each redraw shows all that arrived.
        if not (chunk.content or chunk.reasoning_content):
            return
        self._answered()
        if not self._heap_settled:
            self._heap_settled = True
            settle_heap()  # the model's client is loaded now: long-lived from here on
        piece = (chunk.response_id, chunk.content, chunk.reasoning_content)
        with self._tokens_lock:
            if self._open is not None:
                self._open.append(piece)
                return
            self._open = [piece]
            self._batches.append(self._open)
        self._link.post(msg.TokensReady())

    def take_tokens(self) -> list[tuple[str, str, str]]:
        """The oldest announced batch of streamed (response id, text, reasoning) pieces,
        merged: one TokensReady, one take."""
        with self._tokens_lock:
            if not self._batches:
                return []
            pieces = self._batches.popleft()
            if pieces is self._open:
                self._open = None
        merged: list[tuple[str, str, str]] = []
        for response_id, content, reasoning in pieces:
            if merged and merged[-1][0] == response_id:
                _, text, thought = merged[-1]
                merged[-1] = (response_id, text + content, thought + reasoning)
            else:
                merged.append((response_id, content, reasoning))
        return merged

    def post_stats(self) -> None:
        """Post the conversation's cost and context use."""
        conversation = self._link.conversation
        if conversation is None:
            return
        stats = conversation.conversation_stats
        context = stats.context  # tokens in context after the latest call, and the window
        self._link.post(
            msg.StatsChanged(
                cost=stats.get_combined_metrics().accumulated_cost,
                context_used=context.tokens if context is not None else 0,
                context_window=context.window if context is not None else None,
                context_trigger=self._profile.settings.context.trigger,
            )
        )
