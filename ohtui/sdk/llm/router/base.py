"""RouterLLM: an LLM that hands each call to one of several LLMs, chosen per call."""

from __future__ import annotations

import logging
import threading
from abc import abstractmethod
from typing import Any

from pydantic import Field, field_validator, model_validator

from ohtui.sdk.llm.llm import LLM, ChatMessages, LLMCallContext, LLMResponse, ToolsArg
from ohtui.sdk.llm.message import Message
from ohtui.sdk.llm.streaming import TokenCallbackType

logger = logging.getLogger(__name__)


class RouterLLM(LLM):
    """Several LLMs behind one: `select_llm` names, per call, the one that answers.

    Each routed LLM keeps its own settings and metrics (a conversation counts them under
    their own usage ids); the router's own model fields are placeholders. Subclasses
    implement `select_llm`.
    """

    router_name: str = Field(default="base_router", description="The router's name.")
    llms_for_routing: dict[str, LLM] = Field(
        default_factory=dict, description="The LLMs to route between, by name."
    )
    active_llm: LLM | None = Field(
        default=None, exclude=True, description="The LLM that answered the latest call."
    )

    @model_validator(mode="before")
    @classmethod
    def _placeholder_model(cls, data: Any) -> Any:
        # A router needs no model of its own: its name stands in for one.
        if isinstance(data, dict) and not data.get("model"):
            name = data.get("router_name") or cls.model_fields["router_name"].default
            return {**data, "model": name or "router"}
        return data

    @field_validator("llms_for_routing")
    @classmethod
    def _some_llms(cls, llms: dict[str, LLM]) -> dict[str, LLM]:
        if not llms:
            raise ValueError("llms_for_routing needs at least one LLM, e.g. {'primary': llm}")
        return llms

    @abstractmethod
    def select_llm(self, messages: list[Message]) -> str:
        """The name (a key of `llms_for_routing`) of the LLM to answer `messages`."""

    def completion(
        self,
        messages: ChatMessages,
        tools: ToolsArg | None = None,
        on_token: TokenCallbackType | None = None,
        cancel: threading.Event | None = None,
        call_context: LLMCallContext | None = None,
        **kwargs: Any,
    ) -> LLMResponse:
        """Ask the LLM `select_llm` names (see `LLM.completion`)."""
        chosen = self._choose(messages)
        return chosen.completion(messages, tools, on_token, cancel, call_context, **kwargs)

    def responses(
        self,
        messages: ChatMessages,
        tools: ToolsArg | None = None,
        cancel: threading.Event | None = None,
        call_context: LLMCallContext | None = None,
        **kwargs: Any,
    ) -> LLMResponse:
        """Ask the LLM `select_llm` names through the Responses API (see `LLM.responses`)."""
        chosen = self._choose(messages)
        return chosen.responses(messages, tools, cancel, call_context, **kwargs)

    @property
    def context_window(self) -> int | None:
        """The smallest window of the routed LLMs: a request that fits goes anywhere."""
        windows = [w for llm in self.llms_for_routing.values() if (w := llm.context_window)]
        return min(windows) if windows else None

    def vision_is_active(self) -> bool:
        """Whether some routed LLM reads images."""
        return any(llm.vision_is_active() for llm in self.llms_for_routing.values())

    def _choose(self, messages: ChatMessages) -> LLM:
        given = [
            m if isinstance(m, Message) else Message.from_llm_chat_message(m) for m in messages
        ]
        name = self.select_llm(given)
        chosen = self.llms_for_routing.get(name)
        if chosen is None:
            known = ", ".join(self.llms_for_routing)
            raise ValueError(f"{self.router_name} chose '{name}', which is not one of: {known}")
        logger.info("%s routes this call to %s (%s)", self.router_name, name, chosen.model)
        self.active_llm = chosen
        return chosen

    def __str__(self) -> str:
        return f"{type(self).__name__}(llms={list(self.llms_for_routing)})"
