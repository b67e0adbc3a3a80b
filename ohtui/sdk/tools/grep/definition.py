"""The `grep` tool: files of the workspace whose content matches a regular expression."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState


class GrepAction(Action):
    """A content search."""

    pattern: str = Field(description="The regular expression to search the files' content for.")
    path: str | None = Field(
        default=None,
        description="The folder to search, inside the workspace (absolute or relative to "
        "it). Defaults to the workspace.",
    )
    include: str | None = Field(
        default=None,
        description='Only search files whose names match this glob (e.g. "*.js", "*.{ts,tsx}").',
    )


class GrepObservation(Observation):
    """The files a content search found."""

    matches: list[str] = Field(
        default_factory=list,
        description="The absolute paths of the files containing the pattern, newest first.",
    )
    pattern: str = Field(description="The regular expression searched for.")
    search_path: str = Field(description="The folder searched.")
    include_pattern: str | None = Field(
        default=None, description="The file name filter used, if any."
    )
    truncated: bool = Field(
        default=False, description="Whether more files matched than are listed (at most 100)."
    )


TOOL_DESCRIPTION = """Find the files whose content matches a regular expression.
* Python regular expressions, case-insensitive: "log.*Error", "def\\s+\\w+".
* `include` keeps only files whose names match a glob: "*.js", "*.{ts,tsx}".
* Lists the matching files' absolute paths, most recently modified first; at most 100, so \
narrow the pattern or pass `path`/`include` when there are more. To see the matching lines, \
view the files.
* Binary files, files over 10 MB, hidden files and bulky folders (node_modules, .git, \
virtual environments) are skipped. Only the workspace is searched; links to \
folders are not followed, nor links out of it."""


class GrepTool(ToolDefinition[GrepAction, GrepObservation]):
    """The `grep` tool: a read-only content search in the workspace."""

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """One grep tool for the conversation's workspace; it takes no parameters."""
        from ohtui.sdk.tools.grep.impl import GrepExecutor

        if conv_state is None:
            raise ValueError(
                "GrepTool.create() needs the conversation's state (conv_state): it searches "
                "that workspace. Or name it in the agent's tools: Tool(name='grep')."
            )
        if params:
            raise ValueError(f"grep takes no parameters, got {sorted(params)}")
        working_dir = conv_state.workspace.working_dir
        return [
            cls(
                description=f"{TOOL_DESCRIPTION}\n\nThe workspace (searched by default): "
                f"{working_dir}",
                action_type=GrepAction,
                observation_type=GrepObservation,
                annotations=ToolAnnotations(
                    title="grep",
                    readOnlyHint=True,
                    destructiveHint=False,
                    idempotentHint=True,
                    openWorldHint=False,
                ),
                executor=GrepExecutor(
                    working_dir, sandbox=lambda: getattr(conv_state, "sandbox", None)
                ),
            )
        ]
