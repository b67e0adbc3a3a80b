"""The task tool: hand a sub-task to a sub-agent of a registered type, which works in a
conversation of its own and returns its final answer (or resumes an earlier task)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from ohtui.sdk.llm.message import ImageContent, TextContent
from ohtui.sdk.subagent.registry import get_factory_info, get_registered_agent_definitions
from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import DeclaredResources, ToolAnnotations, ToolDefinition

if TYPE_CHECKING:
    from rich.text import Text

    from ohtui.sdk.conversation.state import ConversationState
    from ohtui.sdk.subagent.spawn import ConfirmationHandler
    from ohtui.sdk.tools.task.impl import TaskExecutor


class TaskAction(Action):
    """Start (or resume) a sub-agent task."""

    description: str | None = Field(
        default=None, description="A short (3-5 word) description of the task."
    )
    prompt: str = Field(description="The task for the agent to perform.")
    subagent_type: str = Field(
        default="general-purpose",
        description="The type of specialized agent to use for this task.",
    )
    resume: str | None = Field(default=None, description="Task ID of the task to resume from.")
    max_turns: SkipJsonSchema[int | None] = Field(
        default=None,
        ge=1,
        deprecated=True,
        description="Ignored: a task's step limit comes from its agent definition or the "
        "parent conversation.",
    )


class TaskObservation(Observation):
    """A task's outcome: its id (to resume it), the agent type, its status and its answer."""

    task_id: str = Field(description="The unique identifier of the task.")
    subagent: str = Field(description="The subagent of the task.")
    status: str = Field(description="The status of the task.")

    def _get_task_info(self) -> str:
        return f"Task ID: {self.task_id}\nSubagent: {self.subagent}\nStatus: {self.status}"

    @property
    def visualize(self) -> Text:
        """The task's id, type and status, then its answer (red when it failed)."""
        from rich.text import Text

        text = Text(self._get_task_info(), style="blue")
        text.append("\n")
        text.append(self.text, style="red" if self.is_error else "")
        return text

    @property
    def to_llm_content(self) -> Sequence[TextContent | ImageContent]:
        """The task's id, type and status first, so the model can resume it."""
        return [TextContent(text=self._get_task_info()), *super().to_llm_content]


TASK_TOOL_DESCRIPTION: Final[str] = """Hand a self-contained sub-task to a sub-agent.

A sub-agent works on its own, in a conversation of its own, and gives you back only its \
final answer: use one when a task needs many steps whose details you do not need to keep \
(exploring an unfamiliar codebase, running and summarising a test suite), not for a single \
command you could run yourself.

Agent types you can choose (`subagent_type`):
{agent_types_info}

Write the prompt as a complete brief: what to do, where (files, names, errors), and what to \
report back. The answer comes with a task ID; pass it as `resume` to continue the same \
sub-agent with its memory of the task.
{task_tool_examples}"""

TASK_TOOL_EXAMPLES: Final[dict[str, str]] = {
    "code-explorer": (
        '\nExample: subagent_type="code-explorer", prompt="Find where the retry delay of the '
        'HTTP client is computed and list every caller, with file paths and line numbers."\n'
    ),
    "bash-runner": (
        '\nExample: subagent_type="bash-runner", prompt="Run the unit tests under tests/api and '
        'report the counts and, for each failure, the test name and its assertion."\n'
    ),
}


class TaskTool(ToolDefinition[TaskAction, TaskObservation]):
    """The `task` tool itself, run by a TaskExecutor."""

    def declared_resources(self, action: Action) -> DeclaredResources:
        """Tasks share nothing with each other: several may run at once."""
        return DeclaredResources(keys=(), declared=True)

    @classmethod
    def create(  # type: ignore[override]
        cls, executor: TaskExecutor, description: str
    ) -> Sequence[TaskTool]:
        """The task tool running its actions with `executor`."""
        return [
            cls(
                action_type=TaskAction,
                observation_type=TaskObservation,
                description=description,
                annotations=ToolAnnotations(
                    title="task",
                    readOnlyHint=False,
                    destructiveHint=True,
                    idempotentHint=False,
                    openWorldHint=True,
                ),
                executor=executor,
            )
        ]


class TaskToolSet(ToolDefinition[TaskAction, TaskObservation]):
    """What an agent lists (`Tool(name=TaskToolSet.name)`) to get the task tool, with the
    agent types registered when its conversation starts."""

    @classmethod
    def create(  # type: ignore[override]
        cls,
        conv_state: ConversationState | None = None,
        confirmation_handler: ConfirmationHandler | None = None,
    ) -> list[ToolDefinition]:
        """The task tool of one conversation, with its own TaskManager.

        `confirmation_handler` decides a sub-agent's actions that wait for the user; without
        one they are rejected (never run unasked).
        """
        from ohtui.sdk.tools.task.impl import TaskExecutor
        from ohtui.sdk.tools.task.manager import TaskManager

        registered = {d.name for d in get_registered_agent_definitions()}
        examples = "".join(text for name, text in TASK_TOOL_EXAMPLES.items() if name in registered)
        description = TASK_TOOL_DESCRIPTION.format(
            agent_types_info=get_factory_info(), task_tool_examples=examples
        )
        executor = TaskExecutor(manager=TaskManager(confirmation_handler=confirmation_handler))
        return list(TaskTool.create(executor=executor, description=description))


register_tool(TaskToolSet.name, TaskToolSet)
register_tool(TaskTool.name, TaskTool)
