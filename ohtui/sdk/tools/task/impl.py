"""TaskExecutor: runs a task action through the TaskManager, into a TaskObservation."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ohtui.sdk.tool.tool import ToolExecutor
from ohtui.sdk.tools.task.definition import TaskAction, TaskObservation
from ohtui.sdk.tools.task.manager import TaskManager, TaskStatus

if TYPE_CHECKING:
    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation

logger = logging.getLogger(__name__)


class TaskExecutor(ToolExecutor[TaskAction, TaskObservation]):
    """Runs each task to its end (blocking) and reports its answer or its error."""

    def __init__(self, manager: TaskManager) -> None:
        self._manager = manager

    def __call__(
        self, action: TaskAction, conversation: LocalConversation | None = None
    ) -> TaskObservation:
        """Run the task; a failure to start it is an error observation, never an exception."""
        try:
            task = self._manager.start_task(
                prompt=action.prompt,
                subagent_type=action.subagent_type,
                description=action.description,
                resume=action.resume,
                conversation=conversation,
            )
        except Exception as exc:
            logger.warning("task could not start: %s", exc, exc_info=True)
            return TaskObservation.from_text(
                text=f"Failed to execute task: {exc}",
                task_id="unknown",
                subagent=action.subagent_type,
                status=TaskStatus.ERROR.value,
                is_error=True,
            )
        if task.status is TaskStatus.COMPLETED:
            return TaskObservation.from_text(
                text=task.result or "Task completed with no result.",
                task_id=task.id,
                subagent=action.subagent_type,
                status=task.status.value,
            )
        return TaskObservation.from_text(
            text=task.error or "Task failed.",
            task_id=task.id,
            subagent=action.subagent_type,
            status=task.status.value,
            is_error=True,
        )

    def pause(self) -> None:
        """Pause the sub-agents at work (the parent conversation was paused)."""
        self._manager.pause()

    def interrupt(self) -> None:
        """Stop the sub-agents at work now (the parent conversation was interrupted)."""
        self._manager.interrupt()

    def close(self) -> None:
        """Stop the sub-agents and forget the tasks."""
        self._manager.close()
