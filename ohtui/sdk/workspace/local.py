"""LocalWorkspace: a directory on this machine where tools run and edit files."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ConfigDict, Field

from ohtui.sdk.utils.models import DiscriminatedUnionMixin


class WorkspaceError(ValueError):
    """The workspace directory cannot be used; the message says why and what to do."""


class BaseWorkspace(DiscriminatedUnionMixin):
    """Where the agent's tools run."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    working_dir: str = Field(description="The directory the agent works in.")


class LocalWorkspace(BaseWorkspace):
    """A workspace on the local file system."""

    def prepare(self) -> LocalWorkspace:
        """Create the directory if needed and check it is usable; return it normalised.

        Raises WorkspaceError naming the path and the problem.
        """
        path = Path(self.working_dir).expanduser()
        if path.exists() and not path.is_dir():
            raise WorkspaceError(
                f"The workspace '{path}' is a file, not a directory. Pass a directory."
            )
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise WorkspaceError(
                f"Cannot create the workspace directory '{path}': {exc.strerror or exc}. "
                "Create it yourself or choose another workspace."
            ) from exc
        if not os.access(path, os.R_OK | os.W_OK | os.X_OK):
            raise WorkspaceError(
                f"The workspace '{path}' is not readable and writable by this user. "
                "Fix its permissions or choose another workspace."
            )
        return LocalWorkspace(working_dir=str(path.resolve()))
