"""The `apply_patch` tool: file edits as one patch in the format GPT-5 models are trained on."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition, ToolExecutor
from ohtui.sdk.tools.apply_patch.core import ActionType, Commit, DiffError, plan_patch
from ohtui.sdk.tools.file_editor.confined import SandboxOf, WorkspaceFiles, inside
from ohtui.sdk.tools.file_editor.fileio import FileEditorError, TextFile
from ohtui.sdk.tools.file_editor.render import unified_diff

if TYPE_CHECKING:
    from rich.text import Text

    from ohtui.sdk.conversation.state import ConversationState

logger = logging.getLogger(__name__)


class ApplyPatchAction(Action):
    """The patch to apply."""

    patch: str = Field(
        description="The patch, from '*** Begin Patch' to '*** End Patch' (the apply_patch "
        "format of OpenAI's GPT-5 prompting guide); paths relative to the workspace."
    )


class ApplyPatchObservation(Observation):
    """What a patch changed."""

    message: str = Field(default="", description="A summary of the change, or the error.")
    fuzz: int = Field(
        default=0, description="How loosely the hunks matched the files (0: exactly)."
    )
    commit: Commit | None = Field(default=None, description="Each file's change.")
    diff: str | None = Field(default=None, description="The change as a unified diff.")

    @property
    def visualize(self) -> Text:
        """The diff coloured like `git diff`; the message when there is none."""
        from rich.text import Text

        from ohtui.sdk.tools.file_editor.render import diff_lines

        if self.is_error or not self.diff:
            return super().visualize
        text = Text()
        for kind, line in diff_lines(self.diff):
            text.append(line + "\n", style=kind.value)
        return text


class ApplyPatchExecutor(ToolExecutor[ApplyPatchAction, ApplyPatchObservation]):
    """Applies patches inside the workspace, through the file editor's confined handles.

    The whole change is computed before the first file is written, so a patch that does not
    apply changes nothing. The conversation's checkpoint, taken before the action, undoes it.
    """

    def __init__(self, workspace_root: str, sandbox: SandboxOf | None = None) -> None:
        """`sandbox`: the conversation's current sandbox; its boundary holds here too."""
        self.workspace_root = Path(workspace_root).resolve()
        self.files = WorkspaceFiles(str(self.workspace_root), sandbox)

    def __call__(
        self, action: ApplyPatchAction, conversation: object = None
    ) -> ApplyPatchObservation:
        """Apply the patch; any failure comes back as an error observation."""
        texts: dict[str, TextFile] = {}

        def read(raw: str) -> str:
            texts[raw] = self.files.read(self._resolve(raw))
            return texts[raw].text

        def exists(raw: str) -> bool:
            return self.files.exists(self._resolve(raw))

        try:
            commit, fuzz = plan_patch(action.patch, read, exists)
        except (DiffError, FileEditorError) as exc:
            return _error(f"{exc} Nothing was changed.")
        except OSError as exc:
            return _error(
                f"The patch could not be read against the files: {exc}. Nothing was changed."
            )
        done: list[str] = []
        try:
            for raw, change in commit.changes.items():
                self._write(raw, change.type, change.new_content, change.move_path, texts)
                done.append(raw)
        except (FileEditorError, OSError) as exc:
            applied = ", ".join(done) or "none"
            return _error(
                f"Applying the patch failed at {raw}: {exc}. Files already changed: "
                f"{applied}; the checkpoint taken before this action can restore them."
            )
        message = _summary(commit, fuzz)
        diff = "".join(
            unified_diff(change.old_content, change.new_content, change.move_path or raw)
            for raw, change in commit.changes.items()
        )
        return ApplyPatchObservation.from_text(
            message, message=message, fuzz=fuzz, commit=commit, diff=diff or None
        )

    def _resolve(self, raw: str) -> Path:
        path = self.files.resolve(raw)
        if not inside(os.path.normpath(path), str(self.workspace_root)):
            raise DiffError(
                f"Absolute or escaping paths are not allowed: {raw} is outside the workspace "
                f"({self.workspace_root}). Name files relative to the workspace."
            )
        return path

    def _write(
        self,
        raw: str,
        kind: ActionType,
        content: str | None,
        move_to: str | None,
        texts: dict[str, TextFile],
    ) -> None:
        path = self._resolve(raw)
        if kind is ActionType.DELETE:
            self.files.remove(path)
            return
        if move_to:
            self.files.write(self._resolve(move_to), content or "")
            self.files.remove(path)
            return
        self.files.write(path, content or "", like=texts.get(raw))


def _error(text: str) -> ApplyPatchObservation:
    return ApplyPatchObservation.from_text(text, is_error=True, message=text)


def _summary(commit: Commit, fuzz: int) -> str:
    verbs = {ActionType.ADD: "added", ActionType.DELETE: "deleted", ActionType.UPDATE: "updated"}
    lines = [
        f"{verbs[change.type]} {path}"
        + (f" (moved to {change.move_path})" if change.move_path else "")
        for path, change in commit.changes.items()
    ]
    loose = f" Some hunks matched only loosely (fuzz {fuzz}): check the result." if fuzz else ""
    return "Done! Applied the patch: " + "; ".join(lines) + "." + loose


DESCRIPTION = """Edit files with a patch: add, update, move and delete files of the workspace \
in one call.
The patch starts with '*** Begin Patch' and ends with '*** End Patch'. Each file starts with \
'*** Add File: PATH' (every following line starts with '+'), '*** Delete File: PATH' or \
'*** Update File: PATH' (optionally followed by '*** Move to: NEW_PATH'). An update's hunks \
start with '@@' (optionally '@@ LINE' to apply after that line of the file) and hold lines \
starting with ' ' (kept), '-' (removed) or '+' (added); give about three lines of context \
around each change. Paths are relative to the workspace ({working_dir}). A patch that does \
not apply changes nothing."""


class ApplyPatchTool(ToolDefinition[ApplyPatchAction, ApplyPatchObservation]):
    """The `apply_patch` tool."""

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """One apply_patch tool for the conversation's workspace; it takes no parameters."""
        if conv_state is None:
            raise ValueError(
                "ApplyPatchTool.create() needs the conversation's state (conv_state). "
                "Or name it in the agent's tools: Tool(name='apply_patch')."
            )
        if params:
            raise ValueError(f"apply_patch takes no parameters, got {sorted(params)}")
        working_dir = conv_state.workspace.working_dir
        return [
            cls(
                description=DESCRIPTION.format(working_dir=working_dir),
                action_type=ApplyPatchAction,
                observation_type=ApplyPatchObservation,
                annotations=ToolAnnotations(
                    title="apply_patch",
                    readOnlyHint=False,
                    destructiveHint=True,
                    idempotentHint=False,
                    openWorldHint=False,
                ),
                executor=ApplyPatchExecutor(
                    working_dir, sandbox=lambda: getattr(conv_state, "sandbox", None)
                ),
            )
        ]

    def to_responses_tool(self, add_security_risk_prediction: bool = False) -> dict[str, Any]:
        """The Responses API entry: GPT-5 models know this tool, so its schema is minimal
        (the `patch` argument only, as the provider expects)."""
        return {
            "type": "function",
            "name": self.name,
            "parameters": {
                "type": "object",
                "properties": {"patch": {"type": "string"}},
                "required": ["patch"],
            },
            "strict": False,
        }
