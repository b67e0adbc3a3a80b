"""The default agent: terminal, file editor and task tracker, with a summarizing condenser.

ohtui ships no browser tool. Asking for one (`enable_browser=True`, upstream's default, or
`get_default_agent(cli_mode=False)`) leaves it out and says so once in the log, so that code
written for the SDK's defaults runs here with the tools ohtui has.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ohtui.sdk.agent.agent import Agent
from ohtui.sdk.context.condenser.llm_summarizing_condenser import default_condenser
from ohtui.sdk.tool.builtins import DEFAULT_BUILT_IN_TOOLS, FinishTool
from ohtui.sdk.tool.registry import list_registered_tools, register_tool
from ohtui.sdk.tool.spec import Tool
from ohtui.sdk.tools.preset.builtin_agents import (  # noqa: F401 - re-exported, as upstream
    discover_builtin_agents,
    register_builtins_agents,
)

if TYPE_CHECKING:
    from ohtui.sdk.context.condenser.base import CondenserBase
    from ohtui.sdk.llm.llm import LLM

logger = logging.getLogger(__name__)

DEFAULT_TOOL_NAMES = ("terminal", "file_editor", "task_tracker")
"""The tools of the default agent, by registered name, in the order the model sees them."""
SUB_AGENT_TOOL_MODULE = "ohtui.sdk.tools.task"
"""Where the sub-agent delegation tool (`TaskToolSet`) lives."""

_browser_warned = False


def _warn_no_browser() -> None:
    global _browser_warned
    if not _browser_warned:
        _browser_warned = True
        logger.warning(
            "ohtui has no browser tool: the default tools leave it out (pass "
            "enable_browser=False, or cli_mode=True, to say you do not want it)"
        )


def register_default_tools(enable_browser: bool = True) -> None:
    """Register the default tools (terminal, file_editor, task_tracker) by importing them."""
    from ohtui.sdk.tools import file_editor, task_tracker, terminal  # noqa: F401 - register

    if enable_browser:
        _warn_no_browser()


def _task_tool_set_name() -> str:
    import importlib

    try:
        module = importlib.import_module(SUB_AGENT_TOOL_MODULE)
        task_tool_set = module.TaskToolSet
    except (ImportError, AttributeError) as exc:
        raise RuntimeError(
            "enable_sub_agents=True needs the sub-agent delegation tool (TaskToolSet in "
            f"{SUB_AGENT_TOOL_MODULE}), which this ohtui does not have; call "
            "get_default_tools(enable_sub_agents=False)"
        ) from exc
    name: str = task_tool_set.name
    return name


def get_default_tools(enable_browser: bool = True, enable_sub_agents: bool = False) -> list[Tool]:
    """The default agent's tool specs; `enable_sub_agents` adds the TaskToolSet that
    delegates to sub-agents. There is no browser tool to add (see the module docstring)."""
    register_default_tools(enable_browser=enable_browser)
    tools = [Tool(name=name) for name in DEFAULT_TOOL_NAMES]
    if enable_sub_agents:
        tools.append(Tool(name=_task_tool_set_name()))
    return tools


def get_default_condenser(llm: LLM) -> CondenserBase:
    """The default agent's condenser: a summarizing one writing with `llm`."""
    return default_condenser(llm)


def get_default_agent(
    llm: LLM, cli_mode: bool = False, finish_tool_response_schema: Any | None = None
) -> Agent:
    """The default agent for `llm`.

    `cli_mode` says the agent works on the user's own machine rather than in a sandbox
    (the system prompt tells the model which). `finish_tool_response_schema` (a pydantic
    model class or a JSON schema) makes `finish` take a structured answer of that shape.
    """
    tools = get_default_tools(enable_browser=not cli_mode)
    extra: dict[str, Any] = {}
    if finish_tool_response_schema is not None:
        finish_name = FinishTool.__name__
        if finish_name not in list_registered_tools():
            register_tool(finish_name, FinishTool)
        tools.append(
            Tool(name=finish_name, params={"response_schema": finish_tool_response_schema})
        )
        extra["include_default_tools"] = [
            tool.__name__ for tool in DEFAULT_BUILT_IN_TOOLS if tool is not FinishTool
        ]
    return Agent(
        llm=llm,
        tools=tools,
        system_prompt_kwargs={"cli_mode": cli_mode},
        condenser=get_default_condenser(llm.model_copy(update={"usage_id": "condenser"})),
        **extra,
    )
