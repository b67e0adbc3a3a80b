"""SummarizingConversationManager: replace the oldest messages with a summary of them."""

from __future__ import annotations

import logging
from typing import Any

from ohtui.sdk.context.conversation_manager._messages import has_tool_calls, is_tool_result
from ohtui.sdk.context.conversation_manager.conversation_manager import (
    ContextWindowOverflowException,
    ConversationManager,
    ProactiveCompression,
)
from ohtui.sdk.context.conversation_manager.hooks import ManagedAgent
from ohtui.sdk.llm.message import Message, TextContent

logger = logging.getLogger(__name__)

SUMMARY_REQUEST = "Please summarize this conversation."
DEFAULT_SUMMARIZATION_PROMPT = """You summarize conversations between a user and an AI agent.

Rules:
- Write a concise, structured summary in bullet points, in the third person.
- Do not reply conversationally, do not address the user, do not comment on tools.
- Do not assume a tool call failed unless the conversation says so.

Cover:
- the topics, requests and questions raised, and the user's standing instructions;
- every significant tool call and what it returned;
- code, file names, commands and other technical facts;
- the key insights and the state of the work.

Format:

## Conversation Summary
* Topic: key information

## Tools Executed
* Tool: result"""
"""The system prompt of a summary request, unless another is given."""


class SummarizingConversationManager(ConversationManager):
    """On an overflow, summarizes the oldest `summary_ratio` of the messages (keeping the
    newest `preserve_recent_messages`) into one user message that replaces them.

    The summary comes from the agent's LLM with no tools offered, or from
    `summarization_agent`'s LLM (and its `system_prompt`, when it has one as text).
    """

    def __init__(
        self,
        summary_ratio: float = 0.3,
        preserve_recent_messages: int = 10,
        summarization_agent: Any | None = None,
        summarization_system_prompt: str | None = None,
        *,
        proactive_compression: ProactiveCompression = None,
    ) -> None:
        """`summary_ratio` is clamped to 0.1-0.8. ValueError when both a summarization agent
        and a summarization system prompt are given."""
        super().__init__(proactive_compression=proactive_compression)
        if summarization_agent is not None and summarization_system_prompt is not None:
            raise ValueError(
                "Cannot provide both summarization_agent and summarization_system_prompt. "
                "Agents come with their own system prompt."
            )
        if summarization_agent is not None and getattr(summarization_agent, "llm", None) is None:
            raise ValueError(
                "summarization_agent must have an `llm` to write summaries with (an Agent, or "
                f"any object with an llm attribute), got {type(summarization_agent).__name__}"
            )
        if isinstance(summary_ratio, bool) or not isinstance(summary_ratio, int | float):
            raise ValueError(f"summary_ratio must be a number, got {summary_ratio!r}")
        if isinstance(preserve_recent_messages, bool) or not isinstance(
            preserve_recent_messages, int
        ):
            raise ValueError(
                f"preserve_recent_messages must be an integer, got {preserve_recent_messages!r}"
            )
        self.summary_ratio = max(0.1, min(0.8, float(summary_ratio)))
        self.preserve_recent_messages = preserve_recent_messages
        self.summarization_agent = summarization_agent
        self.summarization_system_prompt = summarization_system_prompt
        self._summary_message: Message | None = None

    @property
    def summary_message(self) -> Message | None:
        """The latest summary, heading the messages since it was made."""
        return self._summary_message

    def restore_from_session(self, state: dict[str, Any]) -> list[Message] | None:
        """Take back the saved state; return the saved summary to put first, if any."""
        super().restore_from_session(state)
        saved = state.get("summary_message")
        self._summary_message = Message.model_validate(saved) if saved else None
        return [self._summary_message] if self._summary_message else None

    def get_state(self) -> dict[str, Any]:
        """The base state plus the summary (as a JSON dict)."""
        summary = self._summary_message.model_dump(mode="json") if self._summary_message else None
        return {"summary_message": summary, **super().get_state()}

    def to_config(self) -> dict[str, Any]:
        """The constructor arguments (without the summarization agent), with `kind`."""
        return {
            **super().to_config(),
            "summary_ratio": self.summary_ratio,
            "preserve_recent_messages": self.preserve_recent_messages,
            "summarization_system_prompt": self.summarization_system_prompt,
        }

    def apply_management(self, agent: ManagedAgent, **kwargs: Any) -> None:
        """Nothing: this manager summarizes only when the context must shrink."""

    def reduce_context(
        self, agent: ManagedAgent, e: Exception | None = None, **kwargs: Any
    ) -> None:
        """Summarize the oldest messages. A failure is raised on an overflow (`e`), and only
        logged otherwise (proactive compression is best effort)."""
        try:
            self._summarize_oldest(agent)
        except Exception as error:
            if e is not None:
                logger.error("summarization failed: %s", error)
                raise error from e
            logger.warning("proactive summarization failed, continuing: %s", error)

    def _summarize_oldest(self, agent: ManagedAgent) -> None:
        messages = agent.messages
        count = max(1, int(len(messages) * self.summary_ratio))
        count = min(count, len(messages) - self.preserve_recent_messages)
        model = getattr(agent.llm, "model", None)
        if count <= 0:
            raise ContextWindowOverflowException(
                f"Cannot summarize: insufficient messages for summarization ({len(messages)} "
                f"messages, {self.preserve_recent_messages} of them kept as recent). Lower "
                "preserve_recent_messages or use a model with a larger context window.",
                model=model,
            )
        count = self._adjust_split_point_for_tool_pairs(messages, count, model)
        if count <= 0:
            raise ContextWindowOverflowException(
                "Cannot summarize: insufficient messages for summarization", model=model
            )
        oldest, rest = messages[:count], messages[count:]
        summary = self._generate_summary(oldest, agent)
        self.removed_message_count += len(oldest) - (1 if self._summary_message else 0)
        self._summary_message = summary
        messages[:] = [summary, *rest]

    def _generate_summary(self, messages: list[Message], agent: ManagedAgent) -> Message:
        """Ask the summarizing model (with no tools) for a summary; return it as a user message."""
        if self.summarization_agent is not None:
            llm = self.summarization_agent.llm
            own_prompt = getattr(self.summarization_agent, "system_prompt", None)
            prompt = own_prompt if isinstance(own_prompt, str) else DEFAULT_SUMMARIZATION_PROMPT
        else:
            llm = agent.llm
            prompt = self.summarization_system_prompt or DEFAULT_SUMMARIZATION_PROMPT
        request = [
            Message(role="system", content=[TextContent(text=prompt)]),
            *messages,
            Message(role="user", content=[TextContent(text=SUMMARY_REQUEST)]),
        ]
        # The engine's agent view carries the run's cancel event: an interrupt abandons it.
        cancel = getattr(agent, "cancel", None)
        response = llm.completion(request, tools=None, stream=False, cancel=cancel)
        text = response.message.text.strip()
        if not text:
            raise RuntimeError(
                "Failed to generate summary: the model answered the summary request without text"
            )
        return Message(role="user", content=[TextContent(text=text)])

    @staticmethod
    def _adjust_split_point_for_tool_pairs(
        messages: list[Message], split_point: int, model: str | None = None
    ) -> int:
        """Move the split forward so the kept part never starts with a tool result or with a
        tool call whose results do not follow."""
        if split_point > len(messages):
            raise ContextWindowOverflowException(
                "Split point exceeds message array length", model=model
            )
        if split_point == len(messages):
            return split_point
        while split_point < len(messages):
            message = messages[split_point]
            orphan_call = (
                has_tool_calls(message)
                and split_point + 1 < len(messages)
                and not is_tool_result(messages[split_point + 1])
            )
            if is_tool_result(message) or orphan_call:
                split_point += 1
            else:
                return split_point
        raise ContextWindowOverflowException(
            "Unable to trim conversation context! Every cut would separate a tool call from its "
            "result. Start a new conversation or use a model with a larger context window.",
            model=model,
        )
