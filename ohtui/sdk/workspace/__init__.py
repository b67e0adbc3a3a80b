"""Workspaces: the directory the agent works in, here or on an agent server."""

from ohtui.sdk.workspace.local import BaseWorkspace, LocalWorkspace, WorkspaceError
from ohtui.sdk.workspace.remote import RemoteWorkspace

__all__ = ["BaseWorkspace", "LocalWorkspace", "RemoteWorkspace", "WorkspaceError"]
