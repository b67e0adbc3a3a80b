"""The `task_tracker` tool's task item, action and observation (its definition builds on them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.utils.text import plural

if TYPE_CHECKING:
    from rich.text import Text


TaskStatus = Literal["todo", "in_progress", "done"]


_MARKS: dict[TaskStatus, tuple[str, str]] = {
    "todo": ("☐", ""),
    "in_progress": ("◐", "yellow"),
    "done": ("☑", "green dim"),
}


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
