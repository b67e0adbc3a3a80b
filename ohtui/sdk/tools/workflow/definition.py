"""The workflow tool: the model writes a Python script that coordinates sub-agents
(in parallel, over items, then a reducer), and gets back only what the script returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, Literal

from pydantic import Field

from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState
    from ohtui.sdk.tools.workflow.impl import WorkflowExecutor


class WorkflowAction(Action):
    """Run a workflow script."""

    name: str = Field(description="A short name for this workflow run.")
    script: str = Field(
        description="The Python script. It defines `async def main(wf):` and works only "
        "through `wf`."
    )
    max_concurrency: int = Field(
        default=8,
        ge=1,
        le=64,
        description="How many sub-agents may work at once (2 to 4 spares the model's rate limits).",
    )


class WorkflowObservation(Observation):
    """What a workflow returned, or why it failed."""

    name: str = Field(description="The workflow's name.")
    status: Literal["completed", "error"] = Field(description="How the workflow ended.")


WORKFLOW_DESCRIPTION: Final[str] = """Run a workflow: a Python script you write that \
coordinates sub-agents.

Use it for large work that splits into independent parts (an audit of every package, \
reviews from several angles): the parts' details stay inside the workflow, and you get \
back only what `main` returns.

The script defines exactly one entry point, `async def main(wf):`, and does nothing but \
coordinate sub-agents through `wf` (the sub-agents read files and run commands, under the \
usual approvals):
- `await wf.run_agent(prompt, subagent_type="general-purpose", description=None)`: one \
sub-agent's answer.
- `await wf.map_agents(items, prompt, subagent_type="general-purpose", \
max_concurrency=None, description=None)`: one sub-agent per item, answers in the items' \
order; `prompt` is a function of the item or a text with `{item}` in it. If any fails, \
an exception group is raised (catch it with `except Exception`).
- `await wf.reduce_agent(items, prompt, subagent_type="general-purpose", description=None)`: \
one sub-agent given `prompt` and the items (as JSON, cut to fit).
- `await wf.pipeline(items, *stages)`: each item through every stage on its own; stages \
may be plain or async functions; an item whose stage fails becomes None.
- `wf.flatten(values)`: one level of nested lists made flat.

`subagent_type` names a registered agent type. Scripts may not import anything, use names \
or attributes starting with "_", or use attributes other than `wf`'s methods and plain \
str/list/dict methods; `str.format` is not available (use f-strings). `print` goes to the \
application's output, not to you: return what you need.

Example:
```python
async def main(wf):
    areas = ["api", "storage", "cli"]
    findings = await wf.map_agents(
        items=areas,
        prompt=lambda area: f"Review the error handling of the {area} package.",
        subagent_type="code-explorer",
        max_concurrency=3,
    )
    return await wf.reduce_agent(findings, "Rank these findings by severity.")
```
"""


class WorkflowTool(ToolDefinition[WorkflowAction, WorkflowObservation]):
    """The `workflow` tool, with a given executor (tests, extensions)."""

    @classmethod
    def create(  # type: ignore[override]
        cls,
        conv_state: ConversationState | None = None,
        executor: WorkflowExecutor | None = None,
        description: str = WORKFLOW_DESCRIPTION,
    ) -> Sequence[WorkflowTool]:
        """The workflow tool, running scripts with `executor` (default: a new one)."""
        from ohtui.sdk.tools.workflow.impl import WorkflowExecutor

        return [
            cls(
                action_type=WorkflowAction,
                observation_type=WorkflowObservation,
                description=description,
                annotations=ToolAnnotations(
                    title="workflow",
                    readOnlyHint=False,
                    destructiveHint=True,
                    idempotentHint=False,
                    openWorldHint=True,
                ),
                executor=executor if executor is not None else WorkflowExecutor(),
            )
        ]


class WorkflowToolSet(ToolDefinition[WorkflowAction, WorkflowObservation]):
    """What an agent lists (`Tool(name=WorkflowToolSet.name)`) to get the workflow tool."""

    @classmethod
    def create(  # type: ignore[override]
        cls, conv_state: ConversationState | None = None
    ) -> Sequence[WorkflowTool]:
        """The workflow tool of one conversation."""
        return WorkflowTool.create(conv_state)


register_tool(WorkflowToolSet.name, WorkflowToolSet)
register_tool(WorkflowTool.name, WorkflowTool)
