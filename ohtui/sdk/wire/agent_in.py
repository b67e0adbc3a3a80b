"""An OpenHands create payload's `agent` (and friends) -> our engine objects.

OpenHands clients send every field they have: fields we do not have are ignored, a value our
model refuses for an optional setting is dropped (logged), and only what would make the
agent wrong is an error (`WireError`, a ValueError whose message names the field and what
to send instead): no model, a tool we do not have, a policy or secret we cannot read.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, SecretStr, ValidationError

from ohtui.sdk.agent.agent import Agent
from ohtui.sdk.agent.base import BUILT_IN_TOOL_CLASSES
from ohtui.sdk.context.agent_context import AgentContext
from ohtui.sdk.context.condenser.llm_summarizing_condenser import LLMSummarizingCondenser
from ohtui.sdk.llm.llm import LLM
from ohtui.sdk.secret.secrets import SecretSource
from ohtui.sdk.security.analyzer import SecurityAnalyzerBase
from ohtui.sdk.security.confirmation_policy import ConfirmationPolicyBase
from ohtui.sdk.tool.registry import list_registered_tools
from ohtui.sdk.tool.spec import Tool

logger = logging.getLogger(__name__)

REDACTED = "**********"
"""What a secret looks like in every response (OpenHands' own redaction)."""
TOOL_ALIASES = {"bash": "terminal", "execute_bash": "terminal", "str_replace_editor": "file_editor"}
"""Older OpenHands tool names for tools we have under another name."""
_CONTEXT_FIELDS = ("system_message_suffix", "user_message_suffix")
_SERVER_SIDE_LLM_FIELDS = frozenset({"log_completions_folder", "fallback_strategy"})
"""LLM fields that name places on the server's disk (where logs go, which profiles answer
for the model): a client does not choose them; the server's defaults stand."""


class WireError(ValueError):
    """A payload we cannot turn into a working agent; the message says what to change."""


def agent_from_wire(payload: Any) -> Agent:
    """Our Agent for an OpenHands `agent` JSON object (its kind must be Agent)."""
    if not isinstance(payload, Mapping):
        raise WireError("'agent' must be an object with at least 'llm' and 'tools'")
    kind = payload.get("kind", "Agent")
    if kind != "Agent":
        raise WireError(f"agent kind '{kind}' is not supported here: send kind 'Agent'")
    llm = llm_from_wire(payload.get("llm"), "agent.llm")
    fields: dict[str, Any] = {"llm": llm, "tools": tools_from_wire(payload.get("tools", []))}
    if isinstance(payload.get("include_default_tools"), list):
        fields["include_default_tools"] = [
            name for name in payload["include_default_tools"] if name in BUILT_IN_TOOL_CLASSES
        ]
    if isinstance(payload.get("system_prompt_filename"), str):
        fields["system_prompt_filename"] = payload["system_prompt_filename"]
    if isinstance(payload.get("system_prompt_kwargs"), Mapping):
        fields["system_prompt_kwargs"] = dict(payload["system_prompt_kwargs"])
    if isinstance(payload.get("filter_tools_regex"), str):
        fields["filter_tools_regex"] = payload["filter_tools_regex"]
    context = _context_from_wire(payload.get("agent_context"))
    if context is not None:
        fields["agent_context"] = context
    condenser = _condenser_from_wire(payload.get("condenser"))
    if condenser is not None:
        fields["condenser"] = condenser
    try:
        return Agent(**fields)
    except ValidationError as exc:
        raise WireError(f"agent: {_first_error(exc)}") from exc


def llm_from_wire(payload: Any, where: str) -> LLM:
    """Our LLM from OpenHands LLM JSON: shared fields kept, the rest ignored."""
    if not isinstance(payload, Mapping) or not payload.get("model"):
        raise WireError(f"{where} must be an object with a 'model', e.g. 'openai/gpt-4o'")
    fields = {
        name: value
        for name, value in payload.items()
        if name in LLM.model_fields
        and name not in _SERVER_SIDE_LLM_FIELDS
        and value is not None
        and value != REDACTED
    }
    while True:
        try:
            return LLM(**fields)
        except ValidationError as exc:
            bad = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
            if "model" in bad or not bad & fields.keys():
                raise WireError(f"{where}: {_first_error(exc)}") from exc
            for name in bad & fields.keys():
                logger.warning("%s.%s=%r is not supported here: ignored", where, name, fields[name])
                del fields[name]


def tools_from_wire(payload: Any) -> list[Tool]:
    """Tool specs by name; a name we do not have is a WireError listing the ones we do."""
    if not isinstance(payload, list):
        raise WireError("agent.tools must be a list of {'name': ...} objects")
    known = set(list_registered_tools())
    tools: list[Tool] = []
    for index, item in enumerate(payload):
        name = item.get("name") if isinstance(item, Mapping) else item
        if not isinstance(name, str) or not name:
            raise WireError(f"agent.tools[{index}] needs a 'name'")
        name = TOOL_ALIASES.get(name, name)
        if name not in known:
            raise WireError(
                f"agent.tools[{index}]: unknown tool '{name}'; this server has "
                f"{', '.join(sorted(known))}"
            )
        params = item.get("params") if isinstance(item, Mapping) else None
        tools.append(Tool(name=name, params=_accepted_params(name, params or {})))
    return tools


def _accepted_params(name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The params our tool's create() takes by name (OpenHands tools take others)."""
    if not params:
        return {}
    from ohtui.sdk.tool.registry import _MODULE_QUALNAMES, _REG

    if name not in _REG and name in _MODULE_QUALNAMES:
        import importlib

        importlib.import_module(_MODULE_QUALNAMES[name])
    tool = _REG.get(name)
    named = {"response_schema"}  # any tool takes one (structured output), as a JSON schema
    if inspect.isclass(tool):
        signature = inspect.signature(tool.create)
        named |= {
            p.name
            for p in signature.parameters.values()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "conv_state"
        }
    kept = {k: v for k, v in params.items() if k in named}
    if dropped := sorted(params.keys() - kept.keys()):
        logger.info("tool %s: params %s are not ours: ignored", name, ", ".join(dropped))
    return kept


def _context_from_wire(payload: Any) -> AgentContext | None:
    if not isinstance(payload, Mapping):
        return None
    fields = {k: payload[k] for k in _CONTEXT_FIELDS if isinstance(payload.get(k), str)}
    return AgentContext(**fields) if fields else None


def _condenser_from_wire(payload: Any) -> LLMSummarizingCondenser | None:
    """OpenHands' LLMSummarizingCondenser maps to ours; other condensers are ignored."""
    if not isinstance(payload, Mapping):
        return None
    if payload.get("kind") != "LLMSummarizingCondenser":
        logger.info("condenser %s is not supported here: ignored", payload.get("kind"))
        return None
    llm = llm_from_wire(payload.get("llm"), "agent.condenser.llm")
    fields = {k: payload[k] for k in ("max_size", "keep_first") if isinstance(payload.get(k), int)}
    try:
        return LLMSummarizingCondenser(llm=llm, **fields)
    except ValidationError as exc:
        raise WireError(f"agent.condenser: {_first_error(exc)}") from exc


def confirmation_policy_from_wire(payload: Any) -> ConfirmationPolicyBase:
    """A policy from `{"kind": "AlwaysConfirm" | "NeverConfirm" | "ConfirmRisky", ...}`."""
    return _kinded(ConfirmationPolicyBase, payload, "confirmation_policy")


def security_analyzer_from_wire(payload: Any) -> SecurityAnalyzerBase | None:
    """An analyzer from `{"kind": ...}`, or None for null."""
    if payload is None:
        return None
    return _kinded(SecurityAnalyzerBase, payload, "security_analyzer")


def secrets_from_wire(payload: Any) -> dict[str, str | SecretSource]:
    """Secrets by name: plain strings, or `{"kind": "StaticSecret"|"LookupSecret", ...}`."""
    if payload is None:
        return {}
    if not isinstance(payload, Mapping):
        raise WireError("'secrets' must be an object of NAME: value")
    secrets: dict[str, str | SecretSource] = {}
    for name, value in payload.items():
        if isinstance(value, str):
            secrets[str(name)] = value
        elif isinstance(value, SecretStr):
            secrets[str(name)] = value.get_secret_value()
        else:
            secrets[str(name)] = _kinded(SecretSource, value, f"secrets.{name}")
    return secrets


def _kinded(base: type[Any], payload: Any, where: str) -> Any:
    """An instance of the `kind` subclass of `base`, fields it lacks ignored."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("kind"), str):
        raise WireError(f"{where} must be an object with a 'kind'")
    try:
        cls = base.resolve_kind(payload["kind"])
    except ValueError as exc:
        raise WireError(f"{where}: {exc}") from exc
    fields = {k: v for k, v in payload.items() if k in cls.model_fields and k != "kind"}
    try:
        return cls(**fields)
    except ValidationError as exc:
        raise WireError(f"{where}: {_first_error(exc)}") from exc


def redacted(data: Any) -> Any:
    """`data` (JSON) with every non-empty api_key replaced by REDACTED."""
    if isinstance(data, Mapping):
        out = {}
        for key, value in data.items():
            if key == "api_key" and isinstance(value, str) and value:
                out[key] = REDACTED
            else:
                out[key] = redacted(value)
        return out
    if isinstance(data, list):
        return [redacted(item) for item in data]
    return data


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


def model_json(model: BaseModel) -> dict[str, Any]:
    """A model as JSON data, None values left out."""
    return model.model_dump(mode="json", exclude_none=True)
