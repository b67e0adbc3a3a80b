"""The `task_tracker` tool's task item, action, observation and definition."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition
from ohtui.sdk.utils.text import plural

if TYPE_CHECKING:
    from rich.text import Text

    from ohtui.sdk.conversation.state import ConversationState

TaskStatus = Literal["todo", "in_progress", "done"]

TASK_TRACKER_DESCRIPTION = """Keep a plan for multi-step work as a task list and track progress \
through it.
* `plan`: replace the whole list with `task_list`. Send every task each time, not only the \
changed ones; tasks left out are dropped.
* `view`: show the current list.
Make a plan when the work has several steps. Mark a task `in_progress` when you start it \
(one at a time) and `done` as soon as it is finished and checked; add tasks you discover on the \
way. The list is saved with the conversation."""


class TaskItem(BaseModel):
    """One task in the plan."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    title: str = Field(description="A short, specific description of the task.")
    notes: str = Field(default="", description="Optional details: approach, findings, blockers.")
    status: TaskStatus = Field(
        default="todo", description="todo (not started), in_progress (being worked on) or done."
    )


class TaskTrackerAction(Action):
    """View the task list, or replace it with a new plan."""

    command: Literal["view", "plan"] = Field(
        description="view: show the current list. plan: replace the list with `task_list`."
    )
    task_list: list[TaskItem] = Field(
        default_factory=list,
        description="For `plan`: the complete new list of tasks, in order.",
    )

    @property
    def visualize(self) -> Text:
        """The command, and for a plan how many tasks it has."""
        from rich.text import Text

        text = Text(self.command, style="bold")
        if self.command == "plan":
            text.append(f" ({plural(len(self.task_list), 'task')})", style="dim")
        return text


_MARKS: dict[TaskStatus, tuple[str, str]] = {
    "todo": ("☐", ""),
    "in_progress": ("◐", "yellow"),
    "done": ("☑", "green dim"),
}


class TaskTrackerObservation(Observation):
    """The task list after a view or plan."""

    command: Literal["view", "plan"] = Field(description="The command that ran.")
    task_list: list[TaskItem] = Field(default_factory=list, description="The current tasks.")

    @property
    def visualize(self) -> Text:
        """The tasks as a checklist; the text when there are none or on error."""
        from rich.text import Text

        if self.is_error or not self.task_list:
            return super().visualize
        text = Text()
        for task in self.task_list:
            mark, style = _MARKS[task.status]
            text.append(f"{mark} {task.title}\n", style=style)
            if task.notes:
                text.append(f"  {task.notes}\n", style="dim")
        return text


class TaskTrackerTool(ToolDefinition[TaskTrackerAction, TaskTrackerObservation]):
    """The built-in `task_tracker` tool."""

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """One tracker keeping its list in the conversation's agent_state; no parameters."""
        # tracker.py imports this module for the action and observation types.
        from ohtui.sdk.tools.task_tracker.tracker import TaskTrackerExecutor

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
