"""AgentBase: an LLM plus tools, serializable, resolved against a conversation at run time."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field, PrivateAttr

from ohtui.sdk.llm.llm import LLM
from ohtui.sdk.llm.streaming import TokenCallbackType
from ohtui.sdk.tool.builtins import BUILT_IN_TOOLS
from ohtui.sdk.tool.registry import resolve_tool
from ohtui.sdk.tool.spec import Tool
from ohtui.sdk.tool.tool import ToolDefinition
from ohtui.sdk.utils.models import DiscriminatedUnionMixin

if TYPE_CHECKING:
    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
    from ohtui.sdk.conversation.state import ConversationState
    from ohtui.sdk.event.base import Event

EventCallback = Callable[["Event"], None]


class AgentBase(DiscriminatedUnionMixin, ABC):
    """An agent: the LLM it thinks with and the tools it may call."""

    model_config = ConfigDict(
        defer_build=True, frozen=True, extra="forbid", arbitrary_types_allowed=True
    )

    llm: LLM = Field(description="The model the agent thinks with.")
    tools: list[Tool] = Field(
        default_factory=list,
        description="Tools by registered name; finish and think are always on.",
    )
    system_prompt_extra: str | None = Field(
        default=None, description="Extra instructions appended to the system prompt."
    )

    _tools: dict[str, ToolDefinition[Any, Any]] | None = PrivateAttr(default=None)
    _tools_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _bound_to: object = PrivateAttr(default=None)

    @property
    def tools_map(self) -> dict[str, ToolDefinition[Any, Any]]:
        """The resolved tools by name (after `init_state`)."""
        if self._tools is None:
            raise RuntimeError("the agent's tools are resolved by init_state() first")
        return self._tools

    def resolve_tools(self, state: ConversationState) -> dict[str, ToolDefinition[Any, Any]]:
        """Create this agent's tools for a conversation (once); ValueError for unknown tools.

        Tools hold per-conversation resources (a shell, edit history), so an agent serves
        one conversation at a time: give each conversation its own Agent.
        """
        with self._tools_lock:
            if self._tools is not None and self._bound_to != state.id:
                raise ValueError(
                    f"this Agent already runs conversation {self._bound_to}; create a separate "
                    "Agent for each conversation"
                )
            if self._tools is None:
                tools: dict[str, ToolDefinition[Any, Any]] = {}
                for spec in self.tools:
                    for tool in resolve_tool(spec, state):
                        if tool.name in tools:
                            raise ValueError(f"two tools are named '{tool.name}'")
                        tools[tool.name] = tool
                for builtin in BUILT_IN_TOOLS:
                    tool = builtin()
                    tools.setdefault(tool.name, tool)
                self._tools = tools
                self._bound_to = state.id
            return self._tools

    def close(self) -> None:
        """Close every resolved tool (processes, files); the agent may serve another
        conversation afterwards. Subclasses holding more resources extend this."""
        with self._tools_lock:
            tools, self._tools, self._bound_to = self._tools, None, None
        for tool in (tools or {}).values():
            tool.close()

    @abstractmethod
    def init_state(self, state: ConversationState, on_event: EventCallback) -> None:
        """Prepare a conversation: resolve tools and record the system prompt if new."""

    @abstractmethod
    def step(
        self,
        conversation: LocalConversation,
        on_event: EventCallback,
        on_token: TokenCallbackType | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        """Take one step: at most one LLM call and the actions it asks for."""
