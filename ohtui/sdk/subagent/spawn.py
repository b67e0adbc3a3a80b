"""Sub-conversations: a sub-agent's own conversation, made and run within its parent's limits.

What the parent guarantees, its sub-agents keep: the same workspace and sandbox (and the
application's files hidden from them), a confirmation policy no weaker than the parent's,
the parent's security analyzer, its secrets (usable by name, masked in every output), what
is left of its budget, and approvals that are never skipped: a sub-agent's action waiting
for the user is decided by the front end's confirmation handler or rejected, never run
unasked. The callers (the task, delegate and workflow tools) count the sub-conversation's
cost in the parent's stats and pass the parent's pause and interrupt on.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
from ohtui.sdk.conversation.state import ConversationExecutionStatus, ConversationState
from ohtui.sdk.security.confirmation_policy import AlwaysConfirm, ConfirmationPolicyBase

if TYPE_CHECKING:
    from ohtui.sdk.agent.base import AgentBase
    from ohtui.sdk.conversation.visualizer.base import ConversationVisualizerBase
    from ohtui.sdk.event.llm_convertible.action import ActionEvent
    from ohtui.sdk.hooks.config import HookConfig
    from ohtui.sdk.llm.llm import LLM
    from ohtui.sdk.subagent.registry import AgentFactory

logger = logging.getLogger(__name__)

ConfirmationHandler = Callable[[str, list["ActionEvent"]], bool]
"""Asked when a sub-agent's actions wait for the user: (the sub-agent's label, the actions)
-> True to run them, False to reject them."""

SUBAGENTS_DIR: Final[str] = "subagents"
"""The folder, in the parent's own directory, where its sub-conversations are saved."""

NO_HANDLER_REASON = (
    "This action needs the user's approval, and no one can be asked from inside a "
    "sub-agent here: it was not run. Report what you wanted to do instead."
)


def subagents_dir(parent: LocalConversation) -> Path | None:
    """Where the parent's sub-conversations are saved (made now), or None when the parent
    keeps nothing on disk."""
    own = parent.state.persistence_dir
    if own is None:
        return None
    folder = Path(own) / SUBAGENTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def inherited_policy(
    parent: ConfirmationPolicyBase, requested: ConfirmationPolicyBase | None
) -> ConfirmationPolicyBase:
    """The sub-agent's confirmation policy: the definition's `requested` one only where it
    cannot let an action through that the parent's would have stopped (the parent asks
    nothing, or the definition asks everything); otherwise the parent's."""
    if requested is None:
        return parent
    if not parent.is_active or isinstance(requested, AlwaysConfirm):
        return requested
    if type(requested) is not type(parent):
        logger.warning(
            "a sub-agent asked for %s under the parent's %s: it keeps the parent's policy",
            type(requested).__name__,
            type(parent).__name__,
        )
    return parent


def sub_agent(parent: LocalConversation, factory: AgentFactory) -> AgentBase:
    """The sub-agent's Agent, made by the factory from a copy of the parent's LLM (its own
    metrics, no streaming: nobody reads a sub-agent's tokens as they come)."""
    llm: LLM = parent.agent.llm.model_copy(update={"stream": False})
    agent = factory.factory_func(llm)
    return agent.model_copy(update={"llm": agent.llm.model_copy(update={"stream": False})})


def remaining_budget(parent: LocalConversation, own: float | None) -> float | None:
    """The sub-conversation's budget: its definition's, never more than the parent has
    left (a sub-agent cannot spend past the parent's budget)."""
    limit = parent.max_budget_per_run
    if not isinstance(limit, int | float):  # no budget
        return own
    spent = parent.conversation_stats.get_combined_metrics().accumulated_cost
    left = max(limit - spent, 1e-9)  # a budget must be positive: nothing left stops at once
    return left if own is None else min(own, left)


def open_sub_conversation(
    parent: LocalConversation,
    agent: AgentBase,
    *,
    factory: AgentFactory,
    persistence_dir: Path | None,
    conversation_id: uuid.UUID | None = None,
    visualizer: ConversationVisualizerBase | None = None,
    max_iteration_per_run: int | None = None,
    hook_config: HookConfig | None = None,
) -> LocalConversation:
    """A sub-conversation of `parent` running `agent` (new, or resumed by its id), with the
    parent's workspace, sandbox, policy, analyzer and secrets (see the module)."""
    definition = factory.definition
    conversation = LocalConversation(
        agent=agent,
        workspace=parent.state.workspace.working_dir,
        persistence_dir=persistence_dir,
        conversation_id=conversation_id,
        visualizer=visualizer,
        max_iteration_per_run=(
            max_iteration_per_run
            or definition.max_iteration_per_run
            or parent.max_iteration_per_run
        ),
        max_budget_per_run=remaining_budget(parent, definition.max_budget_per_run),
        hook_config=_hooks(parent, hook_config if hook_config is not None else definition.hooks),
    )
    try:
        _inherit_limits(parent, conversation, definition.get_confirmation_policy())
    except BaseException:
        conversation.close()
        raise
    return conversation


def _hooks(parent: LocalConversation, own: HookConfig | None) -> HookConfig | None:
    """The sub-agent's hooks: its own, after the parent's PreToolUse hooks (which may block
    an action, as they would the parent's: they are part of what keeps it safe)."""
    from ohtui.sdk.hooks.config import HookConfig

    manager = parent.hooks
    if manager is None or not manager.config.pre_tool_use:
        return own
    gate = HookConfig(pre_tool_use=list(manager.config.pre_tool_use))
    return HookConfig.merge([gate, own])


def _inherit_limits(
    parent: LocalConversation,
    conversation: LocalConversation,
    requested: ConfirmationPolicyBase | None,
) -> None:
    state = parent.state
    conversation.set_confirmation_policy(inherited_policy(state.confirmation_policy, requested))
    conversation.set_security_analyzer(state.security_analyzer)
    sources = state.secret_registry.secret_sources
    if sources:
        conversation.update_secrets(dict(sources))
    sandbox = state.sandbox
    if sandbox is not None:
        # The parent's saved conversations stay out of reach, as they are for the parent.
        conversation.set_sandbox(
            sandbox.config,
            private_paths=(*sandbox.private, *sandbox.extra_hidden),
            protected_paths=sandbox.protected,
        )


def run_until_settled(
    label: str,
    conversation: LocalConversation,
    confirmation_handler: ConfirmationHandler | None,
) -> None:
    """Run the sub-conversation until it stops for good. Actions waiting for the user go to
    `confirmation_handler`; without one they are rejected and the run stops there."""
    conversation.run()
    while (
        conversation.state.execution_status is ConversationExecutionStatus.WAITING_FOR_CONFIRMATION
    ):
        pending = ConversationState.get_unmatched_actions(conversation.state.active_branch())
        if not pending:
            return
        if confirmation_handler is None:
            conversation.reject_pending_actions(NO_HANDLER_REASON)
            return
        if not confirmation_handler(label, pending):
            conversation.reject_pending_actions("User rejected the actions")
        conversation.run()


def stop_detail(
    conversation: LocalConversation, status: ConversationExecutionStatus | None = None
) -> str:
    """Why a sub-conversation stopped without finishing (in `status`, by default its own),
    with what it said so far."""
    from ohtui.sdk.conversation.response_utils import get_agent_final_response
    from ohtui.sdk.event.conversation_error import ConversationErrorEvent
    from ohtui.sdk.event.llm_convertible.message import MessageEvent
    from ohtui.sdk.event.llm_convertible.observation import UserRejectObservation

    state = conversation.state
    status = status if status is not None else state.execution_status
    failed = status is ConversationExecutionStatus.ERROR
    reason = f"Sub-agent stopped without finishing (status: {status.value})."
    for event in reversed(state.events):  # this run's events: back to the task's message
        if isinstance(event, MessageEvent) and event.source == "user":
            break
        if isinstance(event, ConversationErrorEvent) and failed:
            reason = event.detail
            break
        if isinstance(event, UserRejectObservation) and event.rejection_reason == NO_HANDLER_REASON:
            reason = (
                f"The sub-agent's '{event.tool_name}' action needed the user's approval, which "
                "cannot be asked from inside a sub-agent here; it was not run."
            )
            break
    partial = get_agent_final_response(state.events)
    return f"{reason}\nPartial result:\n{partial}" if partial else reason
