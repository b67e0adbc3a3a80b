"""NoOpCondenser: sends the whole view."""

from __future__ import annotations

from ohtui.sdk.context.condenser.base import CondenserBase
from ohtui.sdk.context.view import View
from ohtui.sdk.event.condenser import Condensation
from ohtui.sdk.llm.llm import LLM


class NoOpCondenser(CondenserBase):
    """A condenser that never condenses: the view goes to the model unchanged."""

    def condense(self, view: View, agent_llm: LLM | None = None) -> View | Condensation:
        """`view`, as it is."""
        return view
