"""Our `Agent` -> the OpenHands-shaped `agent` of a create-conversation payload.

The server rebuilds the agent from this JSON with its own models, so only what it knows is
sent: the LLM fields both sides have (the API key in clear: the server needs it to call the
model, and the request goes to a server the user chose), the tools by name, the built-in
tools, the context's suffixes and skipped skill loading, and a summarizing condenser.
"""

from __future__ import annotations

from typing import Any

from ohtui.sdk.agent.base import AgentBase
from ohtui.sdk.agent.prompts import DEFAULT_PROMPT_FILE
from ohtui.sdk.llm.llm import LLM

LLM_FIELDS = (
    "model",
    "api_key",
    "base_url",
    "api_version",
    "temperature",
    "top_p",
    "max_output_tokens",
    "max_input_tokens",
    "timeout",
    "num_retries",
    "retry_min_wait",
    "retry_max_wait",
    "retry_multiplier",
    "usage_id",
    "stream",
    "reasoning_effort",
    "drop_params",
    "input_cost_per_token",
    "output_cost_per_token",
    "extra_headers",
    "api_mode",
    "caching_prompt",
    "native_tool_calling",
)
"""LLM fields OpenHands' LLM has too (1.58); ours alone (e.g. connect_timeout) stay here."""
_CONTEXT_FIELDS = (
    "system_message_suffix",
    "user_message_suffix",
    "load_project_skills",
    "load_user_skills",
)
_CONDENSER_FIELDS = ("max_size", "max_tokens", "keep_first", "minimum_progress")


def llm_to_wire(llm: LLM) -> dict[str, Any]:
    """The LLM as OpenHands JSON, API key included; unset fields left out."""
    data = llm.model_dump(mode="json", context={"expose_secrets": True})
    out = {name: data[name] for name in LLM_FIELDS if data.get(name) is not None}
    if isinstance(out.get("timeout"), float):
        out["timeout"] = round(out["timeout"])  # an int there
    return out


def agent_to_wire(agent: AgentBase) -> dict[str, Any]:
    """The create payload's `agent`: kind, llm, tools and what else OpenHands understands."""
    out: dict[str, Any] = {
        "kind": agent.kind,
        "llm": llm_to_wire(agent.llm),
        "tools": [tool.model_dump(mode="json") for tool in agent.tools],
        "include_default_tools": list(agent.include_default_tools),
    }
    if agent.system_prompt_filename != DEFAULT_PROMPT_FILE:
        out["system_prompt_filename"] = agent.system_prompt_filename
    if agent.system_prompt_kwargs:
        out["system_prompt_kwargs"] = dict(agent.system_prompt_kwargs)
    if agent.filter_tools_regex is not None:
        out["filter_tools_regex"] = agent.filter_tools_regex
    context = agent.agent_context
    if context is not None:
        dumped = context.model_dump(mode="json")
        out["agent_context"] = {k: dumped[k] for k in _CONTEXT_FIELDS if dumped.get(k) is not None}
    condenser = agent.condenser
    condenser_llm = getattr(condenser, "llm", None)
    if condenser is not None and condenser.kind == "LLMSummarizingCondenser":
        dumped = condenser.model_dump(mode="json")
        wire = {k: dumped[k] for k in _CONDENSER_FIELDS if dumped.get(k) is not None}
        if isinstance(condenser_llm, LLM):
            wire["llm"] = llm_to_wire(condenser_llm)
        out["condenser"] = {"kind": condenser.kind, **wire}
    return out
