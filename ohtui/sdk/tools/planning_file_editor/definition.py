"""The `planning_file_editor` tool: the file editor for a planning agent, which views any file
and changes only the plan."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition
from ohtui.sdk.tools.file_editor.actions import FileEditorAction, FileEditorObservation
from ohtui.sdk.tools.file_editor.definition import FILE_EDITOR_DESCRIPTION
from ohtui.sdk.tools.planning_file_editor.plan import (
    DEFAULT_CONFIG_DIR,
    PLAN_FILENAME,
    get_plan_headers,
)

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState

logger = logging.getLogger(__name__)


class PlanningFileEditorAction(FileEditorAction):
    """A file editor command; anything but `view` must name the plan file."""


class PlanningFileEditorObservation(FileEditorObservation):
    """The result of a planning file editor command."""


TOOL_DESCRIPTION = (
    FILE_EDITOR_DESCRIPTION
    + """

This is the planning agent's editor:
* `view` any file of the workspace.
* Only the plan file can be changed (create, str_replace, insert, undo_edit); any other \
path is refused.
* The plan file already holds the plan's section headings: fill in each section."""
)


class PlanningFileEditorTool(
    ToolDefinition[PlanningFileEditorAction, PlanningFileEditorObservation]
):
    """The `planning_file_editor` tool."""

    @classmethod
    def create(
        cls,
        conv_state: ConversationState | None = None,
        plan_path: str | None = None,
        **params: Any,
    ) -> Sequence[Self]:
        """One planning editor for the workspace. `plan_path` (absolute) is the plan file;
        by default `.agents_tmp/PLAN.md` in the workspace, or a `PLAN.md` already at the
        workspace's top. The file is made, with the plan's headings, if it is missing."""
        from ohtui.sdk.tools.planning_file_editor.impl import PlanningFileEditorExecutor

        if conv_state is None:
            raise ValueError(
                "PlanningFileEditorTool.create() needs the conversation's state (conv_state). "
                "Or name it in the agent's tools: Tool(name='planning_file_editor')."
            )
        if params:
            raise ValueError(f"planning_file_editor takes only plan_path, got {sorted(params)}")
        working_dir = conv_state.workspace.working_dir
        plan = _plan_file(working_dir, plan_path)
        if not plan.exists():
            plan.parent.mkdir(parents=True, exist_ok=True)
            plan.write_text(get_plan_headers(), encoding="utf-8")
            logger.info("Created the plan file %s", plan)
        description = (
            f"{TOOL_DESCRIPTION}\n\nThe workspace: {working_dir}\nThe plan file: {plan}\n"
            "Other agents of the workflow read the plan from there."
        )
        return [
            cls(
                description=description,
                action_type=PlanningFileEditorAction,
                observation_type=PlanningFileEditorObservation,
                annotations=ToolAnnotations(
                    title="planning_file_editor",
                    readOnlyHint=False,
                    destructiveHint=False,
                    idempotentHint=False,
                    openWorldHint=False,
                ),
                executor=PlanningFileEditorExecutor(
                    working_dir,
                    str(plan),
                    sandbox=lambda: getattr(conv_state, "sandbox", None),
                ),
            )
        ]


def _plan_file(working_dir: str, plan_path: str | None) -> Path:
    if plan_path is not None:
        if not Path(plan_path).is_absolute():
            raise ValueError(
                f"plan_path must be an absolute path, got: {plan_path}. Pass the full path "
                "of the plan file, or leave plan_path out for .agents_tmp/PLAN.md in the "
                "workspace."
            )
        return Path(plan_path)
    root = Path(working_dir).resolve()
    legacy = root / PLAN_FILENAME
    if legacy.exists():
        logger.warning(
            "Using the plan at %s; %s is where new plans are kept.",
            legacy,
            root / DEFAULT_CONFIG_DIR / PLAN_FILENAME,
        )
        return legacy
    return root / DEFAULT_CONFIG_DIR / PLAN_FILENAME
