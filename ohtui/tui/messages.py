"""Messages the session posts from its worker threads to the chat screen.

`post_message` is thread-safe, so the engine's callbacks post these and return at once;
widgets are only ever touched on the UI thread, when the screen handles them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from ohtui.settings.choices import ConfirmationPolicy
from ohtui.tui.approval_types import PendingActionView
from ohtui.tui.checkpoint_types import CheckpointRow, RestorePreview
from ohtui.tui.rewind_types import RewindPreview, TurnRow
from ohtui.tui.status import RunStatus


@dataclass
class SessionReady(Message):
    """The conversation is open: who it is, and the newest part of its history."""

    conversation_id: str
    title: str | None
    model: str
    workspace: str
    status: RunStatus
    policy: ConfirmationPolicy
    history: list[Any]
    """The newest events of the active branch (engine Event objects), oldest first."""
    has_older: bool
    """Whether older events exist before `history`."""
    total_events: int
    resumed: bool = False
    sandbox: str = "off"
    """How commands are confined, e.g. "workspace-write, no network", or "off"."""
    held_by: Any = None
    """Who runs the conversation (an engine LeaseHolder) when another ohtui does: it is open
    read-only here."""
    read_only: str | None = None
    """Why it is open read-only although no other ohtui has it (its folder cannot be
    written), and what to change."""
    server: str = ""
    """host:port of the agent server the agent runs on ("": on this machine)."""
    branches: dict[int, int] = field(default_factory=dict)
    """Position on the active branch → branches leaving there (the transcript's markers)."""


@dataclass
class ConnectionChanged(Message):
    """The link to the agent server changed: `state` "connected", "reconnecting…"..."""

    state: str
    reason: str = ""


@dataclass
class SandboxChanged(Message):
    """Commands are confined differently now (`sandbox` as in SessionReady)."""

    sandbox: str


@dataclass
class PolicyChanged(Message):
    """The confirmation policy in force now, as the conversation has it (after a change,
    made or refused)."""

    policy: ConfirmationPolicy


@dataclass
class SessionFailed(Message):
    """The conversation could not be opened or run; `error` says why and what to do."""

    error: str


@dataclass
class SavedHistory(Message):
    """The newest saved events of the conversation being resumed, read before it opens."""

    history: list[Any]
    total_events: int
    has_older: bool
    status: RunStatus | None = None
    """The run status it was saved with (e.g. waiting for approval)."""


@dataclass
class SetupNeeded(Message):
    """No model is configured: the user has to choose one (first run)."""

    reason: str


@dataclass
class EngineEvent(Message):
    """An event the conversation recorded (already masked for secrets)."""

    event: Any
    index: int | None = None
    """Its position on the active branch (None: not known; the one after the last)."""


@dataclass
class TokensReady(Message):
    """Streamed text is waiting: the screen takes it with `Session.take_tokens()`."""


@dataclass
class StatusChanged(Message):
    """The run status changed."""

    status: RunStatus


@dataclass
class StatsChanged(Message):
    """Cost and context usage after an LLM call."""

    cost: float
    context_used: int
    """Tokens in context after the latest call (0: no call yet)."""
    context_window: int | None
    """The model's window (None: unknown)."""
    context_trigger: float = 1.0
    """The share of the window at which the context strategy acts (1.0: when full)."""


@dataclass
class ApprovalNeeded(Message):
    """The run stopped: these actions wait for the user's decision."""

    pending: list[PendingActionView]


@dataclass
class QueueChanged(Message):
    """Messages typed while the agent runs, not delivered yet."""

    queued: list[str] = field(default_factory=list)


@dataclass
class RunFinished(Message):
    """A run ended (finished, paused, waiting, stuck or failed)."""

    status: RunStatus
    final_response: str = ""


@dataclass
class OlderEvents(Message):
    """A page of older events, for scrolling up."""

    events: list[Any]
    has_older: bool
    branches: dict[int, int] = field(default_factory=dict)
    """Position → branches leaving there (see session.branches.branch_points)."""


@dataclass
class NewerEvents(Message):
    """A page of newer events, for scrolling back down: the events from index `after`."""

    events: list[Any]
    after: int
    branches: dict[int, int] = field(default_factory=dict)


@dataclass
class EventPage(Message):
    """A page to show instead of the window: the events from index `start` (the first
    events of the conversation, or, `newest`, its newest when it was read)."""

    events: list[Any]
    start: int
    has_older: bool
    newest: bool = False
    branches: dict[int, int] = field(default_factory=dict)


@dataclass
class SideAnswer(Message):
    """The answer to an /ask side question (not part of the conversation)."""

    question: str
    answer: str
    failed: bool = False


@dataclass
class TitleChanged(Message):
    """The conversation got a (new) title."""

    title: str


@dataclass
class Notice(Message):
    """Something to tell the user in a notification."""

    text: str
    severity: str = "information"


@dataclass
class CallActivity(Message):
    """What the LLM call of a run is doing, for the status bar: "connecting…", "retrying
    2/5 in 4 s: …", the error that ended it; "" once the model answers."""

    text: str
    until: float | None = None
    """time.monotonic() at which a retry starts: the status counts down to it."""
    reason: str = ""
    """Why it retries, in words."""


@dataclass
class Condensing(Message):
    """A condensation the user asked for started (True) or ended (False)."""

    active: bool


@dataclass
class TrustNeeded(Message):
    """Something would run programs and is not trusted yet (or what it runs changed): the
    workspace's .mcp.json, a plugin. Ask; answer with `Session.answer_trust`."""

    question: str
    review: str
    """All it would run, with the secrets it receives."""
    changed: list[str]
    """What changed since the user trusted it ([] the first time)."""
    note: str
    """What trusting means (when it runs, until when)."""


@dataclass
class McpChanged(Message):
    """An MCP server's status or tools changed (the /mcp screen refreshes)."""


@dataclass
class RestorePreviewReady(Message):
    """What restoring a checkpoint would change: the chat asks the user to confirm it."""

    preview: RestorePreview


@dataclass
class CheckpointsListed(Message):
    """The conversation's checkpoints, newest first (/checkpoints)."""

    checkpoints: list[CheckpointRow]


@dataclass
class Restored(Message):
    """The workspace was restored to a checkpoint (`before` as CheckpointRow.before)."""

    before: str
    changed: int


@dataclass
class RewindTurns(Message):
    """The user's messages on the active branch, newest first (/rewind)."""

    turns: list[TurnRow]


@dataclass
class RewindPreviews(Message):
    """What followed some of the messages the rewind screen lists, by event id."""

    previews: dict[str, str]


@dataclass
class RewindPlanned(Message):
    """What rewinding to a message would restore: the rewind screen asks what to do."""

    preview: RewindPreview


@dataclass
class BranchShown(Message):
    """The conversation moved to another branch (a rewind): show its newest events instead of
    everything shown, and give `prefill` back to the composer."""

    events: list[Any]
    total: int
    """Events on the new active branch."""
    has_older: bool
    branches: dict[int, int] = field(default_factory=dict)
    prefill: str = ""
    notice: str = ""


@dataclass
class Forked(Message):
    """A fork of the conversation was made: the app opens it."""

    conversation_id: str
    title: str
    restored: int = 0
    """Files the workspace restore changed before the fork (0: none)."""


@dataclass
class ModelChanged(Message):
    """The conversation thinks with another model from its next LLM call on (/model)."""

    model: str
    restored: bool = False
    """The model chosen for the conversation with /model, gone back to as it reopened."""


@dataclass
class FindTexts(Message):
    """Transcript search: the text of a stretch of the active branch, read for the index
    (see `session.finding`); `read` events read so far of `total`."""

    generation: int
    """The reading this belongs to (an older one's texts are dropped)."""
    texts: list[Any]
    """(position, Searchable) pairs."""
    read: int
    total: int
    done: bool


@dataclass
class FindPage(Message):
    """Transcript search: the page of events around a hit to show instead of the window."""

    events: list[Any]
    start: int
    has_older: bool
    target: int
    """The position of the hit's cell on the branch."""
    branches: dict[int, int] = field(default_factory=dict)


@dataclass
class InstructionsLoaded(Message):
    """The instruction files and skills the agent got (an `instructions.LoadedInstructions`),
    for the chat's first cell."""

    loaded: Any
