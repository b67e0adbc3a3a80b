"""Workspace: the factory that gives a LocalWorkspace, or a RemoteWorkspace for a host."""

from __future__ import annotations

from pathlib import Path

from ohtui.sdk.workspace.local import BaseWorkspace, LocalWorkspace
from ohtui.sdk.workspace.remote import DEFAULT_REMOTE_WORKING_DIR, RemoteWorkspace


class Workspace:
    """`Workspace(working_dir=...)` is a LocalWorkspace; `Workspace(host=..., working_dir=...,
    api_key=...)` a RemoteWorkspace on that agent server."""

    def __new__(  # type: ignore[misc]  # a factory: it returns another class
        cls,
        *,
        host: str | None = None,
        working_dir: str | Path = DEFAULT_REMOTE_WORKING_DIR,
        api_key: str | None = None,
    ) -> BaseWorkspace:
        if host:
            return RemoteWorkspace(host=host, working_dir=str(working_dir), api_key=api_key)
        return LocalWorkspace(working_dir=str(working_dir))
