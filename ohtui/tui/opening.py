"""Opening a conversation from the app's options: new, resumed, or continued by id."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ohtui.tui.options import AppOptions

if TYPE_CHECKING:
    from ohtui.sdk import Event, LocalConversation
    from ohtui.sdk.llm import LLMStreamChunk

TOOLS = ("terminal", "file_editor", "task_tracker")
NO_KEY = "no-key-needed"


class SetupError(Exception):
    """The conversation cannot start as configured; the message says what to do."""


@dataclass(frozen=True)
class Opened:
    """A conversation ready to run, and whether it has history already."""

    conversation: LocalConversation
    model: str
    resumed: bool


def open_conversation(
    options: AppOptions,
    *,
    on_event: Callable[[Event], None],
    on_token: Callable[[LLMStreamChunk], None],
    on_retry: Callable[[int, float, Exception], None],
) -> Opened:
    """Build the agent and open its conversation (blocking: reads the database)."""
    from ohtui.sdk import LLM, Agent, LocalConversation, Tool
    from ohtui.sdk.conversation import find_conversation

    conversation_id: uuid.UUID | None = None
    workspace = options.workspace
    model = options.model
    if options.resume_id:
        summary = find_conversation(options.persistence_dir, options.resume_id)
        conversation_id = uuid.UUID(summary.id)
        model = model or summary.model
        if summary.workspace:
            workspace = type(workspace)(summary.workspace)
    elif options.conversation_id:
        conversation_id = uuid.UUID(options.conversation_id)
    if not model:
        raise SetupError(
            "No model is set. Start ohtui with --model (e.g. --model openai/gpt-4o, and "
            "--base-url for an OpenAI-compatible server), or set OHTUI_MODEL."
        )
    api_key = options.api_key
    if api_key is None and options.base_url and not provider_key_set(model):
        api_key = NO_KEY  # local OpenAI-compatible servers rarely want one; a 401 says so
    llm = LLM(
        model=model,
        base_url=options.base_url,
        api_key=api_key,
        stream=options.stream,
        usage_id="agent",
    )
    llm.add_retry_listener(on_retry)
    agent = Agent(llm=llm, tools=[Tool(name=name) for name in TOOLS])
    conversation = LocalConversation(
        agent=agent,
        workspace=workspace,
        persistence_dir=options.persistence_dir,
        conversation_id=conversation_id,
        callbacks=[on_event],
        token_callbacks=[on_token],
        visualizer=None,
    )
    return Opened(conversation, model, resumed=len(conversation.state.events) > 0)


def provider_key_set(model: str) -> bool:
    """Whether the provider's usual API key variable is set (litellm reads it itself)."""
    provider = model.split("/", 1)[0].upper() if "/" in model else "OPENAI"
    return bool(os.environ.get(f"{provider}_API_KEY"))
