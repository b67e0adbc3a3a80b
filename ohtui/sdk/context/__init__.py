"""What shapes the prompts beyond the agent's own: per-agent context, condensers, the View."""

from ohtui.sdk.context.agent_context import AgentContext
from ohtui.sdk.context.condenser import (
    CondenserBase,
    LLMSummarizingCondenser,
    NoCondensationAvailableException,
    NoOpCondenser,
    PipelineCondenser,
    RollingCondenser,
)
from ohtui.sdk.context.view import View

__all__ = [
    "AgentContext",
    "CondenserBase",
    "LLMSummarizingCondenser",
    "NoCondensationAvailableException",
    "NoOpCondenser",
    "PipelineCondenser",
    "RollingCondenser",
    "View",
]
