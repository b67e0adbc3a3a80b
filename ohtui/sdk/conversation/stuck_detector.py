"""StuckDetector: notices when the agent keeps doing the same thing without progress."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from ohtui.sdk.agent.conversation_contract import EMPTY_REPLY_SENDER
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.condenser import Condensation
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.llm_convertible.observation import (
    AgentErrorEvent,
    ObservationBaseEvent,
    ObservationEvent,
)

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState

MAX_EVENTS_TO_SCAN_FOR_STUCK_DETECTION = 60
CONDENSATION_LOOP_THRESHOLD = 3
NUDGE_SENDER = "stuck-detector"
"""The `sender` of the message that tells the agent it is repeating itself."""
"""The `sender` of the message that tells the agent its reply had nothing in it."""
_ENGINE_SENDERS = frozenset({NUDGE_SENDER, EMPTY_REPLY_SENDER})
ERROR_PREVIEW_CHARS = 500


class StuckDetectionThresholds(BaseModel):
    """How many repetitions of each pattern count as stuck."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    action_observation: int = Field(default=4, ge=2)
    action_error: int = Field(default=3, ge=2)
    monologue: int = Field(default=3, ge=2)
    alternating_pattern: int = Field(default=6, ge=4)


@dataclass(frozen=True, slots=True)
class StuckReport:
    """Which pattern was found, described for the agent and the user."""

    pattern: str
    description: str


class StuckDetector:
    """Looks at the recent events for five patterns of a stuck agent.

    1. the same action with the same observation, again and again;
    2. the same action failing with the same error: at its threshold the agent is nudged
       (`get_action_error_nudge`), one repetition more is stuck;
    3. agent messages with no user input or action in between (a monologue);
    4. two actions alternating with their same observations;
    5. condensation after condensation (the context keeps overflowing).

    Only the last MAX_EVENTS_TO_SCAN_FOR_STUCK_DETECTION events are read, and of those only
    the ones after the last user message.
    """

    def __init__(
        self,
        state: ConversationState,
        thresholds: StuckDetectionThresholds | Mapping[str, int] | None = None,
    ) -> None:
        self.state = state
        if thresholds is None:
            thresholds = StuckDetectionThresholds()
        elif not isinstance(thresholds, StuckDetectionThresholds):
            thresholds = StuckDetectionThresholds(**thresholds)
        self.thresholds = thresholds
        self._known: dict[str, _Step] = {}
        """Steps by their answer's id: an event never changes, so each is reduced once."""

    @property
    def action_observation_threshold(self) -> int:
        """Repeats of an identical action and observation that count as stuck."""
        return self.thresholds.action_observation

    @property
    def action_error_threshold(self) -> int:
        """Repeats of an identical failing action that count as stuck."""
        return self.thresholds.action_error

    @property
    def monologue_threshold(self) -> int:
        """Agent messages in a row, without user input, that count as stuck."""
        return self.thresholds.monologue

    @property
    def alternating_pattern_threshold(self) -> int:
        """Actions in an A-B-A-B alternation that count as stuck."""
        return self.thresholds.alternating_pattern

    def is_stuck(self) -> bool:
        """Whether any pattern is present now."""
        return self.check() is not None

    def check(self) -> StuckReport | None:
        """The pattern found in the recent events, if any."""
        events = self._window()
        steps = self._steps(events)
        for found in (
            self._repeating_action_observation(steps),
            self._repeating_action_error(steps),
            self._monologue(events),
            self._alternating(steps),
            self._condensation_loop(events),
        ):
            if found is not None:
                return found
        return None

    def get_action_error_nudge(self) -> str | None:
        """What to tell the agent when its failing action just reached the threshold.

        None otherwise, and None once the agent was told (no step came since the nudge).
        """
        events = self._window()
        steps = self._steps(events)
        n = self.action_error_threshold
        if _failing_streak(steps) != n:
            return None
        last_answer = max(i for i, e in enumerate(events) if isinstance(e, ObservationBaseEvent))
        if any(_is_nudge(e) for e in events[last_answer + 1 :]):
            return None
        step = steps[-1]
        error = step.result
        if len(error) > ERROR_PREVIEW_CHARS:
            error = error[: ERROR_PREVIEW_CHARS - 1] + "…"
        return (
            f"You called `{step.tool}` with the same arguments {n} times in a row and got the "
            f"same error each time: {error}\nCalling it that way again will fail again: read "
            "the error, then correct the arguments or try another approach."
        )

    def nudged(self) -> bool:
        """Whether the agent was already nudged since the user last wrote."""
        return any(_is_nudge(e) for e in self._window())

    def _steps(self, events: Sequence[Event]) -> list[_Step]:
        """The (action, answer) pairs in order; actions not yet answered are left out."""
        actions: dict[str, ActionEvent] = {}
        steps: list[_Step] = []
        known: dict[str, _Step] = {}
        for event in events:
            if isinstance(event, ActionEvent):
                actions[event.tool_call_id] = event
            elif isinstance(event, ObservationBaseEvent) and event.tool_call_id in actions:
                action = actions.pop(event.tool_call_id)
                step = self._known.get(event.id)
                if step is None:
                    step = _Step(action.tool_name, _arguments(action), *_answer(event))
                known[event.id] = step
                steps.append(step)
        self._known = known  # only the window's: the cache never outgrows it
        return steps

    def _window(self) -> list[Event]:
        recent = list(self.state.active_branch(limit=MAX_EVENTS_TO_SCAN_FOR_STUCK_DETECTION))
        for index in range(len(recent) - 1, -1, -1):
            event = recent[index]
            if isinstance(event, MessageEvent) and event.source == "user":
                return recent[index + 1 :]
        return recent

    def _repeating_action_observation(self, steps: list[_Step]) -> StuckReport | None:
        n = self.action_observation_threshold
        last = steps[-n:]
        if len(last) == n and not last[0].failed and all(s == last[0] for s in last):
            return StuckReport(
                "action_observation",
                f"you ran {last[0].describe()} {n} times in a row and got the same result each "
                "time",
            )
        return None

    def _repeating_action_error(self, steps: list[_Step]) -> StuckReport | None:
        streak = _failing_streak(steps)
        if streak > self.action_error_threshold:  # at the threshold it was nudged
            return StuckReport(
                "action_error",
                f"you ran {steps[-1].describe()} {streak} times in a row and it failed the "
                "same way each time",
            )
        return None

    def _monologue(self, events: list[Event]) -> StuckReport | None:
        n = self.monologue_threshold
        count = 0
        for event in reversed(events):
            if isinstance(event, MessageEvent) and event.source == "agent":
                count += 1
            elif _is_engine_message(event):
                continue  # what the engine said about the monologue does not end it
            elif isinstance(event, ActionEvent | ObservationBaseEvent | MessageEvent):
                break
        if count >= n:
            return StuckReport("monologue", f"you sent {count} messages in a row with no action")
        return None

    def _alternating(self, steps: list[_Step]) -> StuckReport | None:
        n = self.alternating_pattern_threshold
        last = steps[-n:]
        if len(last) < n or last[0] == last[1]:
            return None
        if all(s == last[i % 2] for i, s in enumerate(last)):
            return StuckReport(
                "alternating_pattern",
                f"you alternated between {last[0].describe()} and {last[1].describe()} {n} times "
                "with the same results",
            )
        return None

    def _condensation_loop(self, events: list[Event]) -> StuckReport | None:
        count = 0
        for event in reversed(events):
            if isinstance(event, Condensation):
                count += 1
            elif not isinstance(event, MessageEvent | ObservationBaseEvent | ActionEvent):
                continue
            else:
                break
        if count >= CONDENSATION_LOOP_THRESHOLD:
            return StuckReport(
                "context_window", f"the history was condensed {count} times in a row"
            )
        return None


def _is_nudge(event: Event) -> bool:
    return isinstance(event, MessageEvent) and event.sender == NUDGE_SENDER


def _is_engine_message(event: Event) -> bool:
    return isinstance(event, MessageEvent) and event.sender in _ENGINE_SENDERS


def _failing_streak(steps: list[_Step]) -> int:
    """How many of the last steps are the same failing action with the same error."""
    if not steps or not steps[-1].failed:
        return 0
    streak = 0
    for step in reversed(steps):
        if step != steps[-1]:
            break
        streak += 1
    return streak


@dataclass(frozen=True)
class _Step:
    """An action and what answered it, reduced to what makes two steps the same."""

    tool: str
    arguments: str
    result: str
    failed: bool

    def describe(self) -> str:
        arguments = self.arguments if len(self.arguments) <= 80 else self.arguments[:79] + "…"
        return f"`{self.tool}` with {arguments}"


def _arguments(action: ActionEvent) -> str:
    data: Any = (
        action.action.model_dump(exclude={"kind"}) if action.action else action.tool_call.arguments
    )
    return json.dumps(data, sort_keys=True, default=str)


def _answer(event: ObservationBaseEvent) -> tuple[str, bool]:
    if isinstance(event, AgentErrorEvent):
        return event.error, True
    if isinstance(event, ObservationEvent):
        return event.observation.text, event.observation.is_error
    return event.to_llm_message().text, False
