"""Workspaces: the directory the agent works in, here or on an agent server."""

from ohtui.sdk.workspace.local import BaseWorkspace, LocalWorkspace, WorkspaceError
from ohtui.sdk.workspace.models import CommandResult
from ohtui.sdk.workspace.remote import RemoteWorkspace
from ohtui.sdk.workspace.workspace import Workspace

__all__ = [
    "BaseWorkspace",
    "CommandResult",
    "LocalWorkspace",
    "RemoteWorkspace",
    "Workspace",
    "WorkspaceError",
]
