"""The Gemini agent: the default agent with the Gemini-style file tools (read_file,
write_file, edit, list_directory) instead of the file editor."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.sdk.agent.agent import Agent
from ohtui.sdk.context.condenser.llm_summarizing_condenser import default_condenser
from ohtui.sdk.tool.spec import Tool
from ohtui.sdk.tools.preset.default import _warn_no_browser

if TYPE_CHECKING:
    from ohtui.sdk.context.condenser.base import CondenserBase
    from ohtui.sdk.llm.llm import LLM

GEMINI_TOOL_NAMES = (
    "terminal",
    "read_file",
    "write_file",
    "edit",
    "list_directory",
    "task_tracker",
)
"""The Gemini agent's tools, by registered name, in the order the model sees them."""


def register_gemini_tools(enable_browser: bool = True) -> None:
    """Register the Gemini agent's tools by importing them. ohtui has no browser tool:
    asking for one leaves it out, said once in the log."""
    from ohtui.sdk.tools import gemini, task_tracker, terminal  # noqa: F401 - register

    if enable_browser:
        _warn_no_browser()


def get_gemini_tools(enable_browser: bool = True) -> list[Tool]:
    """The Gemini agent's tool specs."""
    register_gemini_tools(enable_browser=enable_browser)
    return [Tool(name=name) for name in GEMINI_TOOL_NAMES]


def get_gemini_condenser(llm: LLM) -> CondenserBase:
    """The Gemini agent's condenser: the default agent's, writing with `llm`."""
    return default_condenser(llm)


def get_gemini_agent(llm: LLM, cli_mode: bool = False) -> Agent:
    """An agent for `llm` with the Gemini-style file tools; `cli_mode` as for the default
    agent."""
    return Agent(
        llm=llm,
        tools=get_gemini_tools(enable_browser=not cli_mode),
        system_prompt_kwargs={"cli_mode": cli_mode},
        condenser=get_gemini_condenser(llm.model_copy(update={"usage_id": "condenser"})),
    )
