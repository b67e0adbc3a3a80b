"""Tool: a serializable reference to a registered tool, by name, with its parameters."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Tool(BaseModel):
    """A tool spec the agent resolves at run time, e.g. `Tool(name="terminal")`."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    name: str = Field(min_length=1, description="The name the tool is registered under.")
    params: dict[str, Any] = Field(
        default_factory=dict, description="Keyword arguments for the tool's create()."
    )
