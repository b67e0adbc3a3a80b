"""The lifecycle hooks conversation managers listen to (the Strands `HookRegistry` shape)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from ohtui.sdk.llm.message import Message


@runtime_checkable
class ManagedAgent(Protocol):
    """What a conversation manager needs of an agent: its messages and its LLM."""

    messages: list[Message]
    llm: Any


class HookEvent:
    """Base of the lifecycle events; each carries the agent it concerns."""

    agent: ManagedAgent


@dataclass
class BeforeModelCallEvent(HookEvent):
    """Fired before every LLM call, with the tokens the request is expected to use.

    `projected_input_tokens` is counted on first access (counting a long history costs
    time, and most listeners never ask); None when the model's tokenizer is unknown.
    """

    agent: ManagedAgent
    count_tokens: Callable[[], int | None] = field(default=lambda: None, repr=False)
    _projected: int | None = field(default=None, init=False, repr=False)
    _counted: bool = field(default=False, init=False, repr=False)

    @property
    def projected_input_tokens(self) -> int | None:
        """The input tokens of the request about to be sent, if they can be counted."""
        if not self._counted:
            self._projected = self.count_tokens()
            self._counted = True
        return self._projected


@dataclass
class AfterInvocationEvent(HookEvent):
    """Fired when a run of the agent ends (finished, paused, waiting or failed)."""

    agent: ManagedAgent


E = TypeVar("E", bound=HookEvent)
HookCallback = Callable[[Any], None]


@runtime_checkable
class HookProvider(Protocol):
    """Something that registers its callbacks with a HookRegistry."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Add this provider's callbacks to `registry`."""


class HookRegistry:
    """Callbacks by event type, invoked in the order they were added."""

    def __init__(self) -> None:
        self._callbacks: dict[type[HookEvent], list[HookCallback]] = {}

    def add_callback(self, event_type: type[E], callback: Callable[[E], None]) -> None:
        """Call `callback` with every event of `event_type` (or a subclass)."""
        if not (isinstance(event_type, type) and issubclass(event_type, HookEvent)):
            raise TypeError(
                f"add_callback takes a hook event class such as BeforeModelCallEvent, "
                f"not {event_type!r}"
            )
        if not callable(callback):
            raise TypeError(f"the callback for {event_type.__name__} must be callable")
        self._callbacks.setdefault(event_type, []).append(callback)

    def add_hook(self, provider: HookProvider) -> None:
        """Let `provider` register its callbacks."""
        provider.register_hooks(self)

    def has_callbacks(self) -> bool:
        """Whether any callback is registered."""
        return any(self._callbacks.values())

    def invoke_callbacks(self, event: E) -> E:
        """Call every callback registered for the event's type (and its bases); return it."""
        for event_type in type(event).__mro__:
            for callback in self._callbacks.get(event_type, ()):
                callback(event)
        return event
