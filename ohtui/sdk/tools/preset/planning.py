"""The planning agent: explores the workspace read-only (glob, grep, viewing files) and writes
an implementation plan into one plan file, for another agent to carry out."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ohtui.sdk.agent.agent import Agent
from ohtui.sdk.agent.prompts import PLANNING_PROMPT_FILE
from ohtui.sdk.context.condenser.llm_summarizing_condenser import LLMSummarizingCondenser
from ohtui.sdk.tool.spec import Tool
from ohtui.sdk.tools.planning_file_editor.plan import (  # noqa: F401 - the SDK's names here
    PLAN_STRUCTURE,
    format_plan_structure,
    get_plan_headers,
)

if TYPE_CHECKING:
    from ohtui.sdk.llm.llm import LLM

logger = logging.getLogger(__name__)

PLANNING_CONDENSER_MAX_SIZE = 100
PLANNING_CONDENSER_KEEP_FIRST = 6
"""A planner reads much and keeps its first findings: a larger view than the default's."""


def register_planning_tools() -> None:
    """Register glob, grep and planning_file_editor by importing them."""
    from ohtui.sdk.tools import glob, grep, planning_file_editor  # noqa: F401 - they register

    logger.debug("Planning tools registered: glob, grep, planning_file_editor")


def get_planning_tools(plan_path: str | None = None) -> list[Tool]:
    """The planning agent's tool specs; `plan_path` (absolute) is passed to the planning
    editor as the plan file (by default `.agents_tmp/PLAN.md` in the workspace)."""
    register_planning_tools()
    from ohtui.sdk.tools.glob import GlobTool
    from ohtui.sdk.tools.grep import GrepTool
    from ohtui.sdk.tools.planning_file_editor import PlanningFileEditorTool

    params = {"plan_path": plan_path} if plan_path else {}
    return [
        Tool(name=GlobTool.name),
        Tool(name=GrepTool.name),
        Tool(name=PlanningFileEditorTool.name, params=params),
    ]


def get_planning_condenser(llm: LLM) -> LLMSummarizingCondenser:
    """The planning agent's condenser: a summarizing one writing with `llm`."""
    return LLMSummarizingCondenser(
        llm=llm, max_size=PLANNING_CONDENSER_MAX_SIZE, keep_first=PLANNING_CONDENSER_KEEP_FIRST
    )


def get_planning_agent(llm: LLM) -> Agent:
    """A planning agent for `llm`: read-only exploration tools, an editor that writes only the
    plan file, and the planning prompt with the plan's structure."""
    return Agent(
        llm=llm,
        tools=get_planning_tools(),
        system_prompt_filename=PLANNING_PROMPT_FILE,
        system_prompt_kwargs={"plan_structure": format_plan_structure()},
        condenser=get_planning_condenser(llm.model_copy(update={"usage_id": "planning_condenser"})),
    )
