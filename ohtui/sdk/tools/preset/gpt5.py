"""The GPT-5 agent: the default agent with `apply_patch` (the edit format GPT-5 models are
trained on) instead of the file editor."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ohtui.sdk.agent.agent import Agent
from ohtui.sdk.context.condenser.llm_summarizing_condenser import default_condenser
from ohtui.sdk.tool.spec import Tool
from ohtui.sdk.tools.preset.default import _warn_no_browser

if TYPE_CHECKING:
    from ohtui.sdk.context.condenser.base import CondenserBase
    from ohtui.sdk.llm.llm import LLM

logger = logging.getLogger(__name__)

GPT5_TOOL_NAMES = ("terminal", "apply_patch", "task_tracker")
"""The GPT-5 agent's tools, by registered name, in the order the model sees them."""


def register_gpt5_tools(enable_browser: bool = True) -> None:
    """Register terminal, apply_patch and task_tracker by importing them. ohtui has no
    browser tool: asking for one leaves it out, said once in the log."""
    from ohtui.sdk.tools import apply_patch, task_tracker, terminal  # noqa: F401 - register

    if enable_browser:
        _warn_no_browser()


def get_gpt5_tools(enable_browser: bool = True) -> list[Tool]:
    """The GPT-5 agent's tool specs."""
    register_gpt5_tools(enable_browser=enable_browser)
    return [Tool(name=name) for name in GPT5_TOOL_NAMES]


def get_gpt5_condenser(llm: LLM) -> CondenserBase:
    """The GPT-5 agent's condenser: the default agent's, writing with `llm`."""
    return default_condenser(llm)


def get_gpt5_agent(llm: LLM, cli_mode: bool = False) -> Agent:
    """An agent for `llm` that edits files with apply_patch; `cli_mode` as for the default
    agent (the user's own machine rather than a hosted workspace)."""
    return Agent(
        llm=llm,
        tools=get_gpt5_tools(enable_browser=not cli_mode),
        system_prompt_kwargs={"cli_mode": cli_mode},
        condenser=get_gpt5_condenser(llm.model_copy(update={"usage_id": "condenser"})),
    )
