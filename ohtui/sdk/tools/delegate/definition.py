"""The delegate tool: spawn named sub-agents, then hand them tasks that run in parallel."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from ohtui.sdk.subagent.registry import get_factory_info
from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import DeclaredResources, ToolAnnotations, ToolDefinition

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState
    from ohtui.sdk.subagent.spawn import ConfirmationHandler

CommandLiteral = Literal["spawn", "delegate"]


class DelegateAction(Action):
    """Spawn sub-agents, or delegate tasks to those spawned."""

    command: CommandLiteral = Field(
        description="The commands to run. Allowed options are: `spawn`, `delegate`."
    )
    ids: list[str] | None = Field(
        default=None,
        description="Required parameter of `spawn` command. "
        "List of identifiers to initialize sub-agents with.",
    )
    agent_types: list[str] | None = Field(
        default=None,
        description="Optional parameter of `spawn` command. The agent type of each ID, in "
        "order; an ID without one (or with a blank one) gets the general-purpose agent.",
    )
    tasks: dict[str, str] | None = Field(
        default=None,
        description="Required parameter of `delegate` command. "
        "Dictionary mapping sub-agent identifiers to task descriptions.",
    )


class DelegateObservation(Observation):
    """What a spawn or delegate command did."""

    command: CommandLiteral = Field(description="The command that was executed")


DELEGATE_DESCRIPTION = """Work with sub-agents, each in a conversation of its own.

`spawn` starts sub-agents under identifiers you choose (`ids`), each of an agent type \
(`agent_types`, in the same order; the general-purpose agent when left out). `delegate` \
gives each of them a task (`tasks`: identifier -> task); they work at the same time, and \
you get every answer back at once. A spawned sub-agent keeps its memory between tasks.

Agent types:
{agent_types_info}
"""


class DelegateTool(ToolDefinition[DelegateAction, DelegateObservation]):
    """The `delegate` tool (spawn and delegate commands)."""

    def declared_resources(self, action: Action) -> DeclaredResources:
        """Calls share the executor's sub-agents: one at a time."""
        return DeclaredResources(keys=("delegate:sub-agents",), declared=True)

    @classmethod
    def create(  # type: ignore[override]
        cls,
        conv_state: ConversationState | None = None,
        max_children: int = 5,
        confirmation_handler: ConfirmationHandler | None = None,
    ) -> Sequence[DelegateTool]:
        """The delegate tool of one conversation: at most `max_children` sub-agents;
        `confirmation_handler` decides their actions that wait for the user (without one,
        they are rejected)."""
        from ohtui.sdk.tools.delegate.impl import DelegateExecutor

        executor = DelegateExecutor(
            max_children=max_children, confirmation_handler=confirmation_handler
        )
        return [
            cls(
                action_type=DelegateAction,
                observation_type=DelegateObservation,
                description=DELEGATE_DESCRIPTION.format(agent_types_info=get_factory_info()),
                annotations=ToolAnnotations(
                    title="delegate",
                    readOnlyHint=False,
                    destructiveHint=True,
                    idempotentHint=False,
                    openWorldHint=True,
                ),
                executor=executor,
            )
        ]


register_tool(DelegateTool.name, DelegateTool)
