"""What an opening is asked for and what it gives: the target, the engine's callbacks, the
opened conversation and the notices to show. Plain records, shared by the local and the
remote opening."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ohtui.sdk import Event, LocalConversation, RemoteConversation
    from ohtui.sdk.conversation import LeaseHolder
    from ohtui.sdk.llm import LLMStreamChunk


@dataclass(frozen=True, slots=True)
class Target:
    """Which conversation to open."""

    resume_id: str | None = None
    """A saved conversation's id, or a unique prefix of it."""
    continue_latest: bool = False
    """The workspace's most recently updated conversation."""
    new_id: str | None = None
    """A fixed id for a new conversation (tests); None picks a random one."""


@dataclass(frozen=True, slots=True)
class Opened:
    """A conversation ready to run, and whether it has history already."""

    conversation: LocalConversation | RemoteConversation
    model: str
    resumed: bool
    key_source: str
    """Where the API key came from: a variable's name, "keyring", "memory" or "none"."""
    sandbox_notice: str | None = None
    """Why commands run without the sandbox the settings ask for (None: as asked)."""


@dataclass(frozen=True, slots=True)
class Callbacks:
    """What the engine calls back: events, streamed tokens, LLM attempts and retries."""

    on_event: Callable[[Event], None] | None = None
    on_token: Callable[[LLMStreamChunk], None] | None = None
    on_retry: Callable[[int, float, Exception], None] | None = None
    on_attempt: Callable[[int], None] | None = None
    """An LLM call's attempt (1, 2, ...) starts: its connection is being made."""
    on_connection: Callable[[str, str], None] | None = None
    """A remote conversation's link to its server changed: ("reconnecting…", why), or
    ("connected", "")..."""


@dataclass(frozen=True, slots=True)
class Started:
    """What `start` gives: the opened conversation, and what to tell the user."""

    opened: Opened
    notices: tuple[str, ...] = ()
    """Warnings to show, in order (sandbox, missing key, rules file)."""
    held_by: LeaseHolder | None = None
    """Who runs the conversation when another ohtui does: it is open read-only here."""
    read_only_reason: str | None = None
    """Why it is open read-only when no other ohtui has it (its folder cannot be written)."""

    @property
    def conversation(self) -> LocalConversation | RemoteConversation:
        """The conversation."""
        return self.opened.conversation


NEW_CONVERSATION = Target()
"""The default target: a new conversation with a random id."""
NO_CALLBACKS = Callbacks()
"""The default callbacks: the engine calls nothing back."""
