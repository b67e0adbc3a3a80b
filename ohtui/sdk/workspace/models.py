"""Results of operations on a workspace."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CommandResult(BaseModel):
    """What a command run in a workspace did."""

    model_config = ConfigDict(defer_build=True)

    command: str = Field(description="The command that was run.")
    exit_code: int = Field(description="Its exit code (-1 when it was stopped at its timeout).")
    stdout: str = Field(description="Its standard output.")
    stderr: str = Field(description="Its standard error.")
    timeout_occurred: bool = Field(description="Whether it was stopped at its timeout.")
