"""ConversationInfo and full_state: our conversation state as OpenHands 1.58 JSON.

Built from our ConversationState's JSON dump (live or as saved) plus what the server keeps
about the conversation (`ServerRecord`: the agent as the client sent it, tags, times).
Secrets never leave: the LLM api_key and every secret value read "**********".
A fork names its parent as OpenHands does (`forked_from_conversation_id`, dashed like `id`,
and `forked_from_event_id`, None for a fork of the whole conversation).
ohtui's own field: `ohtui_sandbox`, the sandbox in force for an open conversation
(`{"mode", "network", "problem"}`; None for one listed but not open).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ohtui.sdk.wire.agent_in import REDACTED, redacted
from ohtui.sdk.wire.extensions import POLICY_FIELD

RECORD_KEY = "ohtui_server"
"""The key of the server's record in a conversation's saved `agent_state`."""
_POLICY_KINDS = {"AlwaysConfirm", "NeverConfirm", "ConfirmRisky"}
_RULES_KIND = "ApprovalRulesPolicy"
_ANALYZER_KINDS = {"LLMSecurityAnalyzer"}
_METRICS_FIELDS = ("model_name", "accumulated_cost", "max_budget_per_task")
_OUR_METRICS_FIELDS = ("call_count", "total_latency", "max_latency")
"""Ours besides: OpenHands' Metrics ignores them (it would list every call), ours reads them."""
_USAGE_FIELDS = (
    "model",
    "prompt_tokens",
    "completion_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "context_window",
    "per_turn_token",
    "response_id",
)


@dataclass
class ServerRecord:
    """What the server keeps about a conversation besides our own state."""

    agent: dict[str, Any]
    """The agent as OpenHands JSON, secrets redacted (echoed in every ConversationInfo)."""
    sealed_agent: str | None = None
    """The agent payload with its keys, encrypted with the server's cipher (for resume)."""
    tags: dict[str, str] = field(default_factory=dict)
    created_at: str = field(default_factory=lambda: datetime.now().isoformat())
    autotitle: bool = False

    def to_json(self) -> dict[str, Any]:
        """As saved in agent_state."""
        return {
            "agent": self.agent,
            "sealed_agent": self.sealed_agent,
            "tags": self.tags,
            "created_at": self.created_at,
            "autotitle": self.autotitle,
        }

    @classmethod
    def from_json(cls, data: Any) -> ServerRecord | None:
        """The saved record, or None when the conversation was not made by a server."""
        if not isinstance(data, dict) or not isinstance(data.get("agent"), dict):
            return None
        return cls(
            agent=data["agent"],
            sealed_agent=data.get("sealed_agent"),
            tags=dict(data.get("tags") or {}),
            created_at=str(data.get("created_at") or datetime.now().isoformat()),
            autotitle=bool(data.get("autotitle", False)),
        )


def agent_echo(agent: dict[str, Any]) -> dict[str, Any]:
    """Our saved Agent JSON as a minimal OpenHands agent (for conversations made by the TUI)."""
    llm = agent.get("llm") or {}
    return {
        "kind": "Agent",
        "llm": {
            "model": llm.get("model", ""),
            "base_url": llm.get("base_url"),
            "usage_id": llm.get("usage_id", "agent"),
            "api_key": None,
        },
        "tools": [
            {"name": tool.get("name"), "params": {}}
            for tool in agent.get("tools", [])
            if isinstance(tool, dict)
        ],
    }


def state_to_wire(
    state: dict[str, Any],
    record: ServerRecord,
    *,
    updated_at: str | None = None,
    origin: tuple[str, str | None] | None = None,
) -> dict[str, Any]:
    """ConversationInfo (also the full_state value) for a state dump and its record;
    `origin`: the conversation (id hex) and event it was forked from."""
    agent_state = {k: v for k, v in (state.get("agent_state") or {}).items() if k != RECORD_KEY}
    conversation_id = str(state["id"])
    return {
        "id": conversation_id,
        "workspace": {
            "kind": "LocalWorkspace",
            "working_dir": (state.get("workspace") or {}).get("working_dir", ""),
        },
        "persistence_dir": state.get("persistence_dir") or "",
        "agent": redacted(record.agent),
        "title": state.get("title"),
        "tags": record.tags,
        "leaf_event_id": state.get("leaf_event_id"),
        "head_is_empty": bool(state.get("head_is_empty", False)),
        "forked_from_conversation_id": str(uuid.UUID(origin[0])) if origin else None,
        "forked_from_event_id": origin[1] if origin else None,
        "created_at": record.created_at,
        "updated_at": updated_at or datetime.now().isoformat(),
        "max_iterations": state.get("max_iterations", 500),
        "stuck_detection": state.get("stuck_detection", True),
        "execution_status": state.get("execution_status", "idle"),
        "confirmation_policy": policy_to_wire(state.get("confirmation_policy")),
        POLICY_FIELD: state.get("confirmation_policy"),
        "security_analyzer": analyzer_to_wire(state.get("security_analyzer")),
        "activated_knowledge_skills": list(state.get("activated_knowledge_skills") or []),
        "invoked_skills": [],
        "blocked_actions": dict(state.get("blocked_actions") or {}),
        "blocked_messages": dict(state.get("blocked_messages") or {}),
        "stats": stats_to_wire(state.get("stats")),
        "secret_registry": secrets_to_wire(state.get("secret_registry")),
        "agent_state": agent_state,
        "hook_config": None,
        "client_tools": [],
        "tool_module_qualnames": {},
        "ohtui_sandbox": None,  # known once the conversation is open (Served.info)
    }


def updates_to_wire(key: str, value: Any) -> list[tuple[str, Any]]:
    """The per-field updates (key, value) that tell a change of `key` (JSON data): the
    confirmation policy goes as ohtui has it, then in OpenHands' kinds."""
    if key == "confirmation_policy":
        return [(POLICY_FIELD, value), (key, policy_to_wire(value))]
    return [(key, field_to_wire(key, value))]


def field_to_wire(key: str, value: Any) -> Any:
    """A per-field update's value (already JSON data) in OpenHands shape."""
    if key == "stats":
        return stats_to_wire(value)
    if key == "confirmation_policy":
        return policy_to_wire(value)
    if key == "security_analyzer":
        return analyzer_to_wire(value)
    if key == "secret_registry":
        return secrets_to_wire(value)
    if key == "agent_state" and isinstance(value, dict):
        return {k: v for k, v in value.items() if k != RECORD_KEY}
    if key == "agent" and isinstance(value, dict):
        return agent_echo(value)
    return value


def policy_to_wire(policy: Any) -> dict[str, Any]:
    """The confirmation policy in a kind OpenHands knows: as it is, or for approval rules
    their fallback (what is asked where no rule decides: the policy the user chose). No
    policy at all is NeverConfirm; one we cannot read asks for everything."""
    if policy is None:
        return {"kind": "NeverConfirm"}
    if isinstance(policy, dict) and policy.get("kind") == _RULES_KIND:
        return policy_to_wire(policy.get("fallback"))
    if isinstance(policy, dict) and policy.get("kind") in _POLICY_KINDS:
        keep = {"kind", "threshold", "confirm_unknown"}
        return {k: v for k, v in policy.items() if k in keep}
    return {"kind": "AlwaysConfirm"}


def analyzer_to_wire(analyzer: Any) -> dict[str, Any] | None:
    """An analyzer OpenHands knows, else None (ours rate actions on this side only)."""
    if isinstance(analyzer, dict) and analyzer.get("kind") in _ANALYZER_KINDS:
        return {"kind": analyzer["kind"]}
    return None


def stats_to_wire(stats: Any) -> dict[str, Any]:
    """`{"usage_to_metrics": {usage_id: Metrics}}`: OpenHands' fields, and the call counts
    and the context's size that its models ignore and our client shows."""
    stats = stats if isinstance(stats, dict) else {}
    usages = stats.get("usage_to_metrics") or {}
    out: dict[str, Any] = {}
    for usage_id, metrics in usages.items():
        if not isinstance(metrics, dict):
            continue
        entry = {k: metrics[k] for k in (*_METRICS_FIELDS, *_OUR_METRICS_FIELDS) if k in metrics}
        for key in ("accumulated_token_usage", "latest_token_usage"):
            usage = metrics.get(key)
            if isinstance(usage, dict):
                entry[key] = {k: usage[k] for k in _USAGE_FIELDS if k in usage}
        out[str(usage_id)] = entry
    wire: dict[str, Any] = {"usage_to_metrics": out}
    if isinstance(stats.get("context"), dict):
        wire["context"] = stats["context"]
    return wire


def secrets_to_wire(registry: Any) -> dict[str, Any]:
    """Secret names and kinds, every value redacted."""
    sources = (registry or {}).get("secret_sources") or {} if isinstance(registry, dict) else {}
    out = {}
    for name, source in sources.items():
        kind = source.get("kind", "StaticSecret") if isinstance(source, dict) else "StaticSecret"
        entry: dict[str, Any] = {"kind": kind}
        if kind == "StaticSecret":
            entry["value"] = REDACTED
        elif isinstance(source, dict) and source.get("url"):
            entry["url"] = source["url"]
        out[str(name)] = entry
    return {"secret_sources": out}
