"""Conversation: the factory that picks the conversation implementation for a workspace."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ohtui.sdk.agent.base import AgentBase
from ohtui.sdk.conversation.impl.local_conversation import DEFAULT_WORKSPACE, LocalConversation
from ohtui.sdk.workspace.local import BaseWorkspace, LocalWorkspace
from ohtui.sdk.workspace.remote import RemoteWorkspace

if TYPE_CHECKING:
    from ohtui.sdk.conversation.impl.remote_conversation import RemoteConversation


class Conversation:
    """`Conversation(agent=..., workspace=...)`: a LocalConversation for a local workspace (a
    path or a LocalWorkspace), a RemoteConversation for a RemoteWorkspace."""

    def __new__(  # type: ignore[misc]  # a factory: it returns another class
        cls,
        agent: AgentBase,
        workspace: str | Path | BaseWorkspace = DEFAULT_WORKSPACE,
        **kwargs: Any,
    ) -> LocalConversation | RemoteConversation:
        if isinstance(workspace, RemoteWorkspace):
            from ohtui.sdk.conversation.impl.remote_conversation import RemoteConversation

            return RemoteConversation(agent=agent, workspace=workspace, **kwargs)
        if isinstance(workspace, BaseWorkspace) and not isinstance(workspace, LocalWorkspace):
            raise NotImplementedError(
                f"{type(workspace).__name__} is not supported: ohtui runs conversations locally"
            )
        return LocalConversation(agent=agent, workspace=workspace, **kwargs)
