"""TaskTrackerExecutor: keeps the plan in the conversation's agent_state so it survives restarts."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pydantic import ValidationError

from ohtui.sdk.tool.tool import ToolExecutor
from ohtui.sdk.tools.task_tracker.actions import (
    TaskItem,
    TaskTrackerAction,
    TaskTrackerObservation,
)

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState

logger = logging.getLogger(__name__)

STATE_KEY = "task_list"
"""The key of the plan in `agent_state`, stored as a list of plain dicts."""


class TaskTrackerExecutor(ToolExecutor[TaskTrackerAction, TaskTrackerObservation]):
    """Shows and replaces the task list held in the conversation state it was created with."""

    def __init__(self, conv_state: ConversationState) -> None:
        self._state = conv_state
        self.load()  # logs any stored entries that no longer validate, once, at start

    def __call__(
        self, action: TaskTrackerAction, conversation: object = None
    ) -> TaskTrackerObservation:
        """Run `view` or `plan`; a bad plan comes back as an error and changes nothing."""
        if action.command == "view":
            tasks = self.load()
            if not tasks:
                return TaskTrackerObservation.from_text(
                    "There is no plan yet. Use the plan command with a task_list to make one.",
                    command="view",
                )
            return TaskTrackerObservation.from_text(
                format_tasks(tasks), command="view", task_list=tasks
            )
        for number, task in enumerate(action.task_list, start=1):
            if not task.title.strip():
                return TaskTrackerObservation.from_text(
                    f"Task {number} has an empty title; give every task a short title. "
                    "The plan was not changed.",
                    is_error=True,
                    command="plan",
                    task_list=self.load(),
                )
        tasks = list(action.task_list)
        # Assign a new dict: the state persists on assignment, not on in-place mutation.
        self._state.agent_state = {
            **self._state.agent_state,
            STATE_KEY: [task.model_dump() for task in tasks],
        }
        text = "Plan updated. " + format_tasks(tasks) if tasks else "The task list is now empty."
        return TaskTrackerObservation.from_text(text, command="plan", task_list=tasks)

    def load(self) -> list[TaskItem]:
        """The tasks stored in the conversation state, skipping entries that do not validate."""
        tasks: list[TaskItem] = []
        for entry in self._state.agent_state.get(STATE_KEY) or []:
            try:
                tasks.append(TaskItem.model_validate(entry))
            except ValidationError:
                logger.warning("ignoring an invalid stored task: %r", entry)
        return tasks


def summarize(tasks: list[TaskItem]) -> str:
    """How many tasks there are and in which status, e.g. '3 tasks: 1 done, 1 in progress, ...'."""
    done = sum(t.status == "done" for t in tasks)
    doing = sum(t.status == "in_progress" for t in tasks)
    todo = len(tasks) - done - doing
    noun = "task" if len(tasks) == 1 else "tasks"
    return f"{len(tasks)} {noun}: {done} done, {doing} in progress, {todo} to do"


def format_tasks(tasks: list[TaskItem]) -> str:
    """The model-facing list: the counts, then one numbered line per task with its status."""
    lines = [f"{summarize(tasks)}."]
    for number, task in enumerate(tasks, start=1):
        lines.append(f"{number}. [{task.status}] {task.title}")
        lines.extend(f"   {line}" for line in task.notes.splitlines())
    return "\n".join(lines)
