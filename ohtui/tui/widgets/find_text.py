"""The text of each engine event as its cells show it, fully expanded: what transcript search
(Ctrl+F) looks through.

Beside `cell_factory` and built from the same pieces (the result a call shows, an action's
summary, the error titles), so what is found is what the screen shows, folded output
included. Events are already masked for secrets when recorded: only masks are found. Pure
functions of the event (no widgets), so a whole conversation is read on a worker thread.
Imported once the engine has loaded, like the cell factory.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch

from ohtui.sdk.event import (
    ActionEvent,
    AgentErrorEvent,
    CheckpointEvent,
    CheckpointRestoreEvent,
    Condensation,
    ConversationErrorEvent,
    Event,
    HookExecutionEvent,
    InterruptEvent,
    MessageEvent,
    ObservationBaseEvent,
    PauseEvent,
)
from ohtui.sdk.event.foreign import ForeignEvent
from ohtui.sdk.llm.message import text_of
from ohtui.sdk.tool.builtins import FinishAction, ThinkAction
from ohtui.tui.render import action_summary
from ohtui.tui.widgets.cell_factory import NO_CHECKPOINT, error_title, present_result
from ohtui.tui.widgets.context_cells import skills_line

EXPANDED_LINES = 10_000
"""As many lines as an expanded cell shows."""


@dataclass(frozen=True)
class Searchable:
    """What one event shows, and which cell shows it."""

    text: str
    call: str | None = None
    """An action's tool call id: its result shows in the same cell."""
    answers: str | None = None
    """The tool call whose action cell shows this text (a result), if any."""


@singledispatch
def searchable(event: Event) -> Searchable | None:
    """The text `event` shows on screen (None: it shows nothing)."""
    return None


@searchable.register
def _(event: MessageEvent) -> Searchable | None:
    text = event.llm_message.text
    if event.source == "user":
        if event.activated_skills:
            text = f"{text}\n{skills_line(event.activated_skills)}"
        return Searchable(text)
    if event.source == "environment":
        return Searchable(f"↪ {event.sender or 'ohtui'}: {text}")
    return Searchable(_joined(event.reasoning_content or "", text))


@searchable.register
def _(event: ActionEvent) -> Searchable | None:
    thought = text_of(event.thought)
    said = _joined(event.reasoning_content or "", thought) if thought.strip() else ""
    action = event.action
    if isinstance(action, ThinkAction):
        shown = action.thought
    elif isinstance(action, FinishAction):
        shown = action.message
    else:
        summary, detail = action_summary(event)
        name = "" if event.tool_name in ("terminal", "file_editor") else event.tool_name
        shown = _joined(f"{name} {summary}".strip(), detail if detail != summary else "")
    return Searchable(_joined(said, shown), call=event.tool_call_id)


@searchable.register
def _(event: ObservationBaseEvent) -> Searchable | None:
    result = present_result(event)
    status = result.status.plain.strip() if result.status is not None else ""
    body = result.body(EXPANDED_LINES)
    return Searchable(
        _joined(status, body.plain if body is not None else ""), answers=event.tool_call_id
    )


@searchable.register
def _(event: AgentErrorEvent) -> Searchable | None:
    # Shown in its action's cell, or as an error cell of its own when that is not there.
    return Searchable(f"{event.tool_name} failed\n{event.error}", answers=event.tool_call_id)


@searchable.register
def _(event: ConversationErrorEvent) -> Searchable | None:
    return Searchable(f"{error_title(event.code)}\n{event.detail}")


@searchable.register
def _(event: PauseEvent) -> Searchable | None:
    return Searchable("Paused. Send a message to go on.")


@searchable.register
def _(event: InterruptEvent) -> Searchable | None:
    return Searchable("Interrupted. Send a message to go on.")


@searchable.register
def _(event: Condensation) -> Searchable | None:
    return Searchable(f"condensed {len(event.forgotten_event_ids)} events\n{event.summary or ''}")


@searchable.register
def _(event: ForeignEvent) -> Searchable | None:
    return Searchable(event.summary)


@searchable.register
def _(event: HookExecutionEvent) -> Searchable | None:
    if event.error or event.blocked or event.additional_context:
        return Searchable(event.visualize.plain)
    return None


@searchable.register
def _(event: CheckpointEvent) -> Searchable | None:
    if event.checkpoint_id is not None:
        return None
    return Searchable(NO_CHECKPOINT.format(reason=event.unavailable or "none could be taken"))


@searchable.register
def _(event: CheckpointRestoreEvent) -> Searchable | None:
    files = "\n".join(f"{change.status} {change.path}" for change in event.changes)
    return Searchable(f"Restored the workspace to {event.label}\n{files}")


def _joined(*parts: str) -> str:
    return "\n".join(part for part in parts if part)
