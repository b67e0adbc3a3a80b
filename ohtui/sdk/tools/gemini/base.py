"""What the four Gemini-style tools share: built for one workspace, confined to it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition, ToolExecutor
from ohtui.sdk.tools.file_editor.confined import SandboxOf, WorkspaceFiles

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState

ToolT = TypeVar("ToolT", bound=ToolDefinition[Any, Any])


class WorkspaceExecutor(ToolExecutor[Any, Any]):
    """An executor working on the files of one workspace, through the file editor's
    confined handles."""

    def __init__(self, workspace_root: str, sandbox: SandboxOf | None = None) -> None:
        """`sandbox`: the conversation's current sandbox; its boundary holds here too."""
        self.files = WorkspaceFiles(workspace_root, sandbox)

    @property
    def workspace_root(self) -> str:
        """The workspace the tool works in."""
        return str(self.files.working_dir)


def create_for_workspace(
    cls: type[ToolT],
    conv_state: ConversationState | None,
    params: dict[str, Any],
    *,
    description: str,
    action_type: type[Action],
    observation_type: type[Observation],
    executor: type[WorkspaceExecutor],
    read_only: bool,
) -> list[ToolT]:
    """The one tool `cls` for the conversation's workspace; it takes no parameters."""
    if conv_state is None:
        raise ValueError(
            f"{cls.__name__}.create() needs the conversation's state (conv_state): it works "
            f"in that workspace. Or name it in the agent's tools: Tool(name='{cls.name}')."
        )
    if params:
        raise ValueError(f"{cls.name} takes no parameters, got {sorted(params)}")
    working_dir = conv_state.workspace.working_dir
    return [
        cls(
            description=f"{description}\n\nThe workspace (relative paths start here): "
            f"{working_dir}",
            action_type=action_type,
            observation_type=observation_type,
            annotations=ToolAnnotations(
                title=cls.name,
                readOnlyHint=read_only,
                destructiveHint=not read_only,
                idempotentHint=read_only,
                openWorldHint=False,
            ),
            executor=executor(working_dir, sandbox=lambda: getattr(conv_state, "sandbox", None)),
            meta={"workspace_root": working_dir},
        )
    ]


def failure(verb: str, path: object, exc: Exception) -> str:
    """What the model reads when a file could not be used: the reason, and that nothing
    changed."""
    if isinstance(exc, OSError):
        reason = f"Could not {verb} {path}: {exc.strerror or exc}."
    else:
        reason = str(exc).rstrip()
        reason += "" if reason.endswith((".", "!", "?")) else "."
    return f"Error: {reason} Nothing was changed."
