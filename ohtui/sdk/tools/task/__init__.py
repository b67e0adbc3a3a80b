"""The task tool: an agent hands a sub-task to a sub-agent with a context of its own.

agent = Agent(llm=llm, tools=[Tool(name=TaskToolSet.name)])
"""

from ohtui.sdk.tools.task.definition import TaskAction, TaskObservation, TaskTool, TaskToolSet
from ohtui.sdk.tools.task.impl import TaskExecutor
from ohtui.sdk.tools.task.manager import Task, TaskManager, TaskStatus

__all__ = [
    "Task",
    "TaskAction",
    "TaskExecutor",
    "TaskManager",
    "TaskObservation",
    "TaskStatus",
    "TaskTool",
    "TaskToolSet",
]
