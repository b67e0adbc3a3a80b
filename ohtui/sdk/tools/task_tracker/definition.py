"""The `task_tracker` tool's definition; its task item, action and observation live in `actions`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition
from ohtui.sdk.tools.task_tracker.actions import (  # noqa: F401 - re-exported at the old path
    TaskItem,
    TaskStatus,
    TaskTrackerAction,
    TaskTrackerObservation,
)
from ohtui.sdk.tools.task_tracker.tracker import TaskTrackerExecutor

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState


TASK_TRACKER_DESCRIPTION = """Keep a plan for multi-step work as a task list and track progress \
through it.
* `plan`: replace the whole list with `task_list`. Send every task each time, not only the \
changed ones; tasks left out are dropped.
* `view`: show the current list.
Make a plan when the work has several steps. Mark a task `in_progress` when you start it \
(one at a time) and `done` as soon as it is finished and checked; add tasks you discover on the \
way. The list is saved with the conversation."""


class TaskTrackerTool(ToolDefinition[TaskTrackerAction, TaskTrackerObservation]):
    """The built-in `task_tracker` tool."""

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """One tracker keeping its list in the conversation's agent_state; no parameters."""
        if conv_state is None:
            raise ValueError(
                "TaskTrackerTool.create() needs the conversation's state (conv_state): it keeps "
                "its list there. Or name it in the agent's tools: Tool(name='task_tracker')."
            )
        if params:
            raise ValueError(f"task_tracker takes no parameters, got {sorted(params)}")
        return [
            cls(
                description=TASK_TRACKER_DESCRIPTION,
                action_type=TaskTrackerAction,
                observation_type=TaskTrackerObservation,
                annotations=ToolAnnotations(
                    title="task_tracker",
                    readOnlyHint=False,
                    destructiveHint=False,
                    idempotentHint=True,
                    openWorldHint=False,
                ),
                executor=TaskTrackerExecutor(conv_state),
            )
        ]
