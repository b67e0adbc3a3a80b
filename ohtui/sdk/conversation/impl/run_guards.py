"""RunGuards: between steps, decide whether a run goes on (blocked prompts, Stop hooks, stuck)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ohtui.sdk.conversation.state import ConversationExecutionStatus, ConversationState
from ohtui.sdk.conversation.stuck_detector import NUDGE_SENDER, StuckDetector
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.conversation_error import ConversationErrorEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent

if TYPE_CHECKING:
    from ohtui.sdk.hooks.runner import HookManager

MAX_STOP_DENIALS = 5
"""Stop hooks may keep the agent going this many times per run; then it may stop."""
STOP_FEEDBACK = "[Stop hook feedback]"
"""How the feedback of a Stop hook that keeps the agent going starts."""
STUCK_NUDGE = (
    "You seem to be stuck: {}. Do not repeat it. Try a different approach, or stop and "
    "explain what blocks you."
)


class RunGuards:
    """The checks a LocalConversation makes around its steps."""

    def __init__(
        self,
        state: ConversationState,
        hooks: HookManager | None,
        stuck_detector: StuckDetector | None,
        on_event: Callable[[Event], None],
    ) -> None:
        self._state = state
        self._hooks = hooks
        self._stuck_detector = stuck_detector
        self._on_event = on_event
        self._stop_denials = 0

    def begin_run(self) -> None:
        """Reset the per-run counters."""
        self._stop_denials = 0

    def latest_message_blocked(self) -> bool:
        """Whether the newest user message was blocked by a UserPromptSubmit hook."""
        blocked = self._state.blocked_messages
        if not blocked:
            return False
        for event in reversed(self._state.active_branch()):
            if isinstance(event, MessageEvent) and event.source == "user":
                return event.id in blocked
        return False

    def unconfirmed_actions_wait(self) -> bool:
        """Whether actions no one confirmed wait on the active branch (HEAD moved onto an
        action whose result is on another branch, a fork began at one, a run failed between
        a call and its result): they then wait for the user (WAITING_FOR_CONFIRMATION),
        never run on their own. (A run begun from that status is the user's confirmation:
        it does not ask; nor does an action the policy lets run unasked.)"""
        state = self._state
        pending = state.get_unmatched_actions(state.active_branch())
        policy, working_dir = state.confirmation_policy, state.workspace.working_dir
        if all(policy.decide(a, working_dir).verdict == "allow" for a in pending):
            return False
        self._state.execution_status = ConversationExecutionStatus.WAITING_FOR_CONFIRMATION
        return True

    def stop_denied(self) -> bool:
        """Run the Stop hooks; when one denies, its feedback goes to the agent, which goes on."""
        if self._hooks is None:
            return False
        may_stop, results = self._hooks.run_stop(stop_hook_active=self._stop_denials > 0)
        if may_stop or self._stop_denials >= MAX_STOP_DENIALS:
            return False
        self._stop_denials += 1
        feedback = "\n".join(r.additional_context for r in results if r.additional_context)
        feedback = feedback or self._hooks.get_blocking_reason(results) or "Do not stop yet."
        self._on_event(MessageEvent.from_environment(f"{STOP_FEEDBACK} {feedback}", "stop-hook"))
        return True

    def stuck(self) -> bool:
        """Check for a stuck agent: nudge it once; if it carries on, stop the run as STUCK."""
        detector = self._stuck_detector
        if detector is None or not self._state.stuck_detection:
            return False
        nudge = detector.get_action_error_nudge()
        if nudge is not None:
            self._on_event(MessageEvent.from_environment(nudge, NUDGE_SENDER))
            return False
        report = detector.check()
        if report is None:
            return False
        # A failing action is nudged at its threshold, so its report means it went on.
        if report.pattern != "action_error" and not detector.nudged():
            self._on_event(
                MessageEvent.from_environment(STUCK_NUDGE.format(report.description), NUDGE_SENDER)
            )
            return False
        self._state.execution_status = ConversationExecutionStatus.STUCK
        self._on_event(
            ConversationErrorEvent(
                code="AgentStuck",
                detail=f"The agent is stuck: {report.description}, even after being told. "
                "Send a message with new directions to continue.",
            )
        )
        return True
