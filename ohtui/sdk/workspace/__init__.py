"""Workspaces: the directory the agent works in."""

from ohtui.sdk.workspace.local import BaseWorkspace, LocalWorkspace, WorkspaceError

__all__ = ["BaseWorkspace", "LocalWorkspace", "WorkspaceError"]
