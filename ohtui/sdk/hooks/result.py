"""HookResult: how one hook went."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ohtui.sdk.hooks.config import HookDefinition
from ohtui.sdk.hooks.types import HookDecision


class HookResult(BaseModel):
    """How one hook went.

    A command hook's exit code 0 is success (its stdout may hold a JSON decision), 2 blocks
    (stderr says why), any other code is an error that blocks nothing. Prompt and agent
    hooks that cannot reach a verdict allow, with `success` False and the `error` set.
    """

    model_config = ConfigDict(defer_build=True)

    hook: HookDefinition | None = Field(default=None, description="The hook that ran.")
    success: bool = True
    blocked: bool = False
    exit_code: int | None = Field(default=0, description="None: it never exited by itself.")
    stdout: str = ""
    stderr: str = ""
    decision: HookDecision | None = None
    reason: str | None = None
    additional_context: str | None = Field(
        default=None, description="Text the hook adds for the model (its additionalContext)."
    )
    error: str | None = None
    async_started: bool = Field(default=False, description="Started in the background.")

    @property
    def should_continue(self) -> bool:
        """Whether what the hook was asked about may go ahead."""
        return not self.blocked and self.decision is not HookDecision.DENY

    @property
    def label(self) -> str:
        """Which hook this was, for messages (`hook ./check.sh`)."""
        return f"hook `{self.hook.display_command}`" if self.hook is not None else "a hook"
