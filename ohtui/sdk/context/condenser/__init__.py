"""Condensers: keep a long history within the model's window (the OpenHands pattern)."""

from ohtui.sdk.context.condenser.base import (
    CondensationRequirement,
    CondenserBase,
    NoCondensationAvailableException,
    PipelinableCondenserBase,
    RollingCondenser,
)
from ohtui.sdk.context.condenser.llm_summarizing_condenser import (
    LLMSummarizingCondenser,
    default_condenser,
)
from ohtui.sdk.context.condenser.no_op_condenser import NoOpCondenser
from ohtui.sdk.context.condenser.pipeline_condenser import PipelineCondenser

__all__ = [
    "CondensationRequirement",
    "CondenserBase",
    "LLMSummarizingCondenser",
    "NoCondensationAvailableException",
    "NoOpCondenser",
    "PipelinableCondenserBase",
    "PipelineCondenser",
    "RollingCondenser",
    "default_condenser",
]
