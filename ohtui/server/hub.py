"""The WebSocket fan-out: frames published from any thread reach every subscriber, in order.

Engine callbacks run on each conversation's run thread; `publish` hands the frame to the
server's event loop with one `call_soon_threadsafe` and returns at once (it never blocks
the agent). Each subscriber has its own unbounded queue, drained by its socket's task, so a
slow client delays no one else and no frame is dropped while it is connected.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections import defaultdict
from typing import Any

MAX_SUBSCRIBERS = 64
"""Subscribers per conversation; one more is refused with close code 1013 (as OpenHands)."""


class Subscription:
    """One socket's queue of encoded frames for one conversation."""

    def __init__(self, conversation_id: uuid.UUID, ohtui_fields: bool = False) -> None:
        self.conversation_id = conversation_id
        self.ohtui_fields = ohtui_fields
        """The client reads ohtui's own event fields (see wire.extensions)."""
        self.queue: asyncio.Queue[str] = asyncio.Queue()


class Hub:
    """Subscribers by conversation; publish from any thread, deliver on the loop."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._subscribers: dict[uuid.UUID, list[Subscription]] = defaultdict(list)
        self._lock = threading.Lock()

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Deliver on `loop` (the server's, once it runs)."""
        self._loop = loop

    def subscribe(
        self, conversation_id: uuid.UUID, ohtui_fields: bool = False
    ) -> Subscription | None:
        """A new subscription, or None when the conversation has too many already."""
        with self._lock:
            subscribers = self._subscribers[conversation_id]
            if len(subscribers) >= MAX_SUBSCRIBERS:
                return None
            subscription = Subscription(conversation_id, ohtui_fields)
            subscribers.append(subscription)
            return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        """Stop delivering to `subscription`."""
        with self._lock:
            subscribers = self._subscribers.get(subscription.conversation_id, [])
            if subscription in subscribers:
                subscribers.remove(subscription)
            if not subscribers:
                self._subscribers.pop(subscription.conversation_id, None)

    def subscriber_count(self, conversation_id: uuid.UUID) -> int:
        """How many sockets follow the conversation."""
        with self._lock:
            return len(self._subscribers.get(conversation_id, []))

    def publish(
        self,
        conversation_id: uuid.UUID,
        frame: dict[str, Any] | None,
        ours: dict[str, Any] | None = None,
    ) -> None:
        """Send `frame` to the conversation's subscribers (`ours`, the same event with
        ohtui's fields, to those that read them; `frame` None: an event of ohtui's own
        kinds, for those only); callable from any thread."""
        with self._lock:
            targets = list(self._subscribers.get(conversation_id, ()))
        if not targets or self._loop is None or self._loop.is_closed():
            return
        text = json.dumps(frame) if frame is not None else None
        ours_text = json.dumps(ours) if ours is not None else text
        try:
            self._loop.call_soon_threadsafe(_deliver, targets, text, ours_text)
        except RuntimeError:  # the loop closed under us: the server is stopping
            return


def _deliver(targets: list[Subscription], text: str | None, ours: str | None) -> None:
    for subscription in targets:
        chosen = ours if subscription.ohtui_fields else text
        if chosen is not None:
            subscription.queue.put_nowait(chosen)
