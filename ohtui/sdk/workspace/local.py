"""LocalWorkspace: a directory on this machine where tools run and edit files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from pydantic import BeforeValidator, ConfigDict, Field, PrivateAttr

from ohtui.sdk.utils.models import DiscriminatedUnionMixin


class WorkspaceError(ValueError):
    """The workspace directory cannot be used; the message says why and what to do."""


def _path_to_str(value: object) -> object:
    return str(value) if isinstance(value, os.PathLike) else value


class BaseWorkspace(DiscriminatedUnionMixin):
    """Where the agent's tools run."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    working_dir: Annotated[str, BeforeValidator(_path_to_str)] = Field(
        description="The directory the agent works in (a str or a Path)."
    )

    _accumulated_cost: float | None = PrivateAttr(default=None)

    @property
    def accumulated_cost(self) -> float | None:
        """The LLM cost (USD) the conversation reported when it closed; None before."""
        return self._accumulated_cost

    def register_cost(self, cost: float) -> None:
        """Record what the conversation working here cost, for whoever set the workspace up."""
        self._accumulated_cost = cost


class LocalWorkspace(BaseWorkspace):
    """A workspace on the local file system."""

    def prepare(self) -> LocalWorkspace:
        """Create the directory if needed and check it is usable; return it normalised
        (itself when its path is absolute and resolved already).

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
        normalised = str(path.resolve())
        return self if normalised == self.working_dir else LocalWorkspace(working_dir=normalised)
