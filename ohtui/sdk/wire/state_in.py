"""OpenHands ConversationInfo / state JSON -> our stats, status and policy objects."""

from __future__ import annotations

import logging
from typing import Any

from ohtui.sdk.agent.conversation_contract import ContextUsage, ConversationStats
from ohtui.sdk.llm.metrics import RECENT_USAGES, Metrics, TokenUsage
from ohtui.sdk.security.analyzer import SecurityAnalyzerBase
from ohtui.sdk.security.confirmation_policy import (
    AlwaysConfirm,
    ConfirmationPolicyBase,
    NeverConfirm,
)
from ohtui.sdk.wire.events_in import validate_leniently

logger = logging.getLogger(__name__)


def stats_from_wire(data: Any) -> ConversationStats:
    """`stats` ({"usage_to_metrics": {usage_id: metrics}}), theirs or ours."""
    if not isinstance(data, dict):
        return ConversationStats()
    usage = data.get("usage_to_metrics")
    metrics = {
        str(usage_id): _metrics(value)
        for usage_id, value in (usage.items() if isinstance(usage, dict) else ())
        if isinstance(value, dict)
    }
    context = data.get("context")
    stats = ConversationStats(usage_to_metrics=metrics)
    if isinstance(context, dict):
        stats.context = validate_leniently(ContextUsage, dict(context))
    return stats


def _metrics(data: dict[str, Any]) -> Metrics:
    ours = validate_leniently(Metrics, dict(data))
    if ours is not None and "call_count" in data:
        return ours
    latencies = [
        float(item.get("latency", 0.0))
        for item in data.get("response_latencies") or []
        if isinstance(item, dict)
    ]
    usages = [u for u in data.get("token_usages") or [] if isinstance(u, dict)]
    latest = validate_leniently(TokenUsage, dict(usages[-1])) if usages else None
    accumulated = data.get("accumulated_token_usage")
    total = (
        validate_leniently(TokenUsage, dict(accumulated)) if isinstance(accumulated, dict) else None
    )
    kept = [validate_leniently(TokenUsage, dict(u)) for u in usages[-RECENT_USAGES:]]
    return Metrics(
        model_name=str(data.get("model_name") or ""),
        accumulated_cost=float(data.get("accumulated_cost") or 0.0),
        accumulated_token_usage=total or TokenUsage(),
        latest_token_usage=latest,
        token_usages=[u for u in kept if u is not None],
        call_count=len(latencies),
        total_latency=sum(latencies),
        max_latency=max(latencies, default=0.0),
    )


def policy_from_wire(data: Any) -> ConfirmationPolicyBase:
    """A confirmation policy ({"kind": "AlwaysConfirm"}...): NeverConfirm when there is none
    (the protocol's default), AlwaysConfirm when it cannot be read (a kind we lack): a
    policy we cannot read is never taken for one that lets everything run."""
    if data is None:
        return NeverConfirm()
    if isinstance(data, dict):
        try:
            policy = validate_leniently(ConfirmationPolicyBase, dict(data))
        except ValueError:
            policy = None
        if policy is not None:
            return policy
    logger.warning(
        "a confirmation policy that cannot be read (%.200r): asking for every action", data
    )
    return AlwaysConfirm()


def analyzer_from_wire(data: Any) -> SecurityAnalyzerBase | None:
    """A security analyzer, or None (none set, or of a kind we lack)."""
    if not isinstance(data, dict):
        return None
    try:
        return validate_leniently(SecurityAnalyzerBase, dict(data))
    except ValueError:
        return None
