"""OrderedKeys: an App mixin that hands keys and pastes on one at a time, in the order they
were typed, each to where the keys before it have moved the focus.

Textual routes a key by posting it to the focused widget's queue and goes straight on to the
next key. A key that moves focus (Tab, ↓ into a list, Enter that opens a screen) does so only
when its widget handles it, later; keys typed right after it (fast typing, a paste, tmux
send-keys) were already posted to the old widget and land in the previous field. Here the
next key waits until the one before has been handled by its widget and the widget's parents
(where bindings and bubbling messages run), and by a screen it opened, and until focus
changes they asked for (posted to the app) have run. Each wait is bounded: a busy widget
delays keys by at most KEY_SETTLE_TIMEOUT, never loses them.

A paste is typed input too: it waits in the same line as the keys. Routed past held keys, a
paste typed right after "summarize" landed after its "s" (`s[pasted 200 lines #1]ummarize`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import TYPE_CHECKING

from textual import events

if TYPE_CHECKING:
    from textual.app import App
    from textual.message_pump import MessagePump

    _Base = App[object]
else:
    _Base = object

KEY_SETTLE_TIMEOUT = 0.3
"""Seconds to wait for one message pump to handle a key before the next key goes on."""


Typed = events.Key | events.Paste
"""What the user types: routed to the focused widget, in order."""


class OrderedKeys(_Base):
    """Mix into an App (before App) to route each key or paste after the previous one has
    settled."""

    _key_backlog: deque[Typed]
    _key_in_flight: bool = False

    async def on_event(self, event: events.Event) -> None:
        """Hold a key or paste while the one before it is being handled; route the other
        events as usual."""
        if isinstance(event, events.Key | events.Paste) and not event.is_forwarded:
            if self._key_in_flight:
                self._backlog().append(event)
                return
            await self._route_key(event)
            return
        await super().on_event(event)

    def _backlog(self) -> deque[Typed]:
        if not hasattr(self, "_key_backlog"):
            self._key_backlog = deque()
        return self._key_backlog

    async def _route_key(self, event: Typed) -> None:
        target: MessagePump = self.focused or self.screen
        screen = self.screen
        self._key_in_flight = True
        try:
            await super().on_event(event)
        finally:
            task = asyncio.create_task(self._settle(target, screen))
            self._settle_task = task  # keep a reference: a bare task may be collected

    async def _settle(self, target: MessagePump, screen: MessagePump) -> None:
        """Wait for the key's widget, its parents and any screen it opened to handle what
        they were sent; then let the app run what they posted to it, and take the next key."""
        try:
            pump: MessagePump | None = target
            while pump is not None:
                await _handled(pump)
                if pump is screen:
                    break
                pump = pump._parent
            seen = {id(screen)}
            while id(self.screen) not in seen:  # a screen was opened (or closed)
                seen.add(id(self.screen))
                await _handled(self.screen)
        finally:
            if not self.call_later(self._next_key):  # the app is closing
                self._key_in_flight = False

    async def _next_key(self) -> None:
        self._key_in_flight = False
        backlog = self._backlog()
        if backlog:
            await self._route_key(backlog.popleft())


async def _handled(pump: MessagePump) -> None:
    """Return once `pump` has handled what was posted to it so far (or after a while)."""
    done = asyncio.Event()
    if not pump.call_later(done.set):
        return
    with contextlib.suppress(TimeoutError):  # a busy widget delays keys, never loses them
        await asyncio.wait_for(done.wait(), KEY_SETTLE_TIMEOUT)
