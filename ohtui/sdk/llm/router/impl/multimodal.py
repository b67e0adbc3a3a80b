"""MultimodalRouter: images, or a history too long for the secondary LLM, go to the primary."""

from __future__ import annotations

import logging
from typing import ClassVar

from pydantic import model_validator

from ohtui.sdk.llm.message import Message
from ohtui.sdk.llm.router.base import RouterLLM

logger = logging.getLogger(__name__)


class MultimodalRouter(RouterLLM):
    """Routes to "primary" (which reads images) when a message holds an image or the
    request exceeds the "secondary" LLM's context window; to "secondary" otherwise."""

    router_name: str = "multimodal_router"

    PRIMARY_MODEL_KEY: ClassVar[str] = "primary"
    SECONDARY_MODEL_KEY: ClassVar[str] = "secondary"

    @model_validator(mode="after")
    def _primary_and_secondary(self) -> MultimodalRouter:
        missing = [
            key
            for key in (self.PRIMARY_MODEL_KEY, self.SECONDARY_MODEL_KEY)
            if key not in self.llms_for_routing
        ]
        if missing:
            names = ", ".join(repr(key) for key in missing)
            raise ValueError(
                f"MultimodalRouter needs llms_for_routing with {names} "
                "(both 'primary' and 'secondary')"
            )
        return self

    def select_llm(self, messages: list[Message]) -> str:
        """ "primary" for images or an overlong request, else "secondary"."""
        if any(message.contains_image for message in messages):
            return self.PRIMARY_MODEL_KEY
        secondary = self.llms_for_routing[self.SECONDARY_MODEL_KEY]
        window = secondary.context_window
        if window and secondary.get_token_count(messages) > window:
            logger.warning("the request exceeds %s's context window", secondary.model)
            return self.PRIMARY_MODEL_KEY
        return self.SECONDARY_MODEL_KEY
