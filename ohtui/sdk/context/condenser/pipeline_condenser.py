"""PipelineCondenser: several condensers, one after another."""

from __future__ import annotations

from pydantic import Field, SerializeAsAny

from ohtui.sdk.context.condenser.base import CondenserBase
from ohtui.sdk.context.view import View
from ohtui.sdk.event.condenser import Condensation
from ohtui.sdk.llm.llm import LLM


class PipelineCondenser(CondenserBase):
    """Applies `condensers` in order, each to the view the previous one returned; the first
    Condensation ends the pipeline and is what it returns."""

    condensers: list[SerializeAsAny[CondenserBase]] = Field(
        default_factory=list, description="The condensers to apply, in order."
    )

    def condense(self, view: View, agent_llm: LLM | None = None) -> View | Condensation:
        """The first Condensation a condenser returns, else the last view."""
        result: View | Condensation = view
        for condenser in self.condensers:
            if isinstance(result, Condensation):
                break
            result = condenser.condense(result, agent_llm=agent_llm)
        return result

    def handles_condensation_requests(self) -> bool:
        """Whether any of its condensers handles requests."""
        return any(c.handles_condensation_requests() for c in self.condensers)
