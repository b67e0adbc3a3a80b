"""RandomRouter: each call to one of the routed LLMs, picked at random."""

from __future__ import annotations

import random

from ohtui.sdk.llm.message import Message
from ohtui.sdk.llm.router.base import RouterLLM


class RandomRouter(RouterLLM):
    """Picks a routed LLM at random for each call (for trying models side by side)."""

    router_name: str = "random_router"

    def select_llm(self, messages: list[Message]) -> str:
        """Any routed LLM's name, at random."""
        return random.choice(list(self.llms_for_routing))
