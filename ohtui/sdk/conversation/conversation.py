"""Conversation: the factory that picks the conversation implementation for a workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ohtui.sdk.agent.base import AgentBase
from ohtui.sdk.conversation.impl.local_conversation import DEFAULT_WORKSPACE, LocalConversation
from ohtui.sdk.workspace.local import BaseWorkspace, LocalWorkspace


class Conversation:
    """`Conversation(agent=..., workspace=...)` returns a LocalConversation for local work."""

    def __new__(  # type: ignore[misc]  # a factory: it returns another class
        cls,
        agent: AgentBase,
        workspace: str | Path | BaseWorkspace = DEFAULT_WORKSPACE,
        **kwargs: Any,
    ) -> LocalConversation:
        if isinstance(workspace, BaseWorkspace) and not isinstance(workspace, LocalWorkspace):
            raise NotImplementedError(
                f"{type(workspace).__name__} is not supported: ohtui runs conversations locally"
            )
        return LocalConversation(agent=agent, workspace=workspace, **kwargs)
