"""The `glob` tool: files of the workspace whose paths match a pattern, newest first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState


class GlobAction(Action):
    """A glob search."""

    pattern: str = Field(
        description='The glob pattern the files\' paths must match (e.g. "**/*.js", '
        '"src/**/*.ts", "*.{json,toml}").'
    )
    path: str | None = Field(
        default=None,
        description="The folder to search, inside the workspace (absolute or relative to "
        "it). Defaults to the workspace.",
    )


class GlobObservation(Observation):
    """The files a glob search found."""

    files: list[str] = Field(
        default_factory=list, description="The matching files' absolute paths, newest first."
    )
    pattern: str = Field(description="The pattern searched for.")
    search_path: str = Field(description="The folder searched.")
    truncated: bool = Field(
        default=False, description="Whether more files matched than are listed (at most 100)."
    )


TOOL_DESCRIPTION = """Find files by name with a glob pattern.
* `*` and `?` match within one folder, `**` across folders, `{a,b}` either name: "**/*.js", \
"src/**/*.ts", "**/test_*.py", "**/*.{json,yaml,yml,toml}". A pattern without "/" matches \
file names at any depth.
* Lists the matching files' absolute paths, most recently modified first; at most 100, so \
narrow the pattern or pass `path` when there are more.
* Hidden files and bulky folders (node_modules, .git, virtual environments) are skipped \
unless the pattern names them. Only the workspace is searched; links to \
folders are not followed, nor links out of it."""


class GlobTool(ToolDefinition[GlobAction, GlobObservation]):
    """The `glob` tool: a read-only file search in the workspace."""

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """One glob tool for the conversation's workspace; it takes no parameters."""
        from ohtui.sdk.tools.glob.impl import GlobExecutor

        if conv_state is None:
            raise ValueError(
                "GlobTool.create() needs the conversation's state (conv_state): it searches "
                "that workspace. Or name it in the agent's tools: Tool(name='glob')."
            )
        if params:
            raise ValueError(f"glob takes no parameters, got {sorted(params)}")
        working_dir = conv_state.workspace.working_dir
        return [
            cls(
                description=f"{TOOL_DESCRIPTION}\n\nThe workspace (relative patterns start "
                f"here): {working_dir}",
                action_type=GlobAction,
                observation_type=GlobObservation,
                annotations=ToolAnnotations(
                    title="glob",
                    readOnlyHint=True,
                    destructiveHint=False,
                    idempotentHint=True,
                    openWorldHint=False,
                ),
                executor=GlobExecutor(
                    working_dir, sandbox=lambda: getattr(conv_state, "sandbox", None)
                ),
            )
        ]
