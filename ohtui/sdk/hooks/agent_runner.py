"""The agent hook's runner, a port: the hooks say what they need, the conversation gives it.

An agent hook runs a small conversation, which the hooks cannot build: the conversation is
above them (and loads them only when it has hooks to run). `ohtui.sdk.conversation`
provides the runner when it is imported, as `import ohtui.sdk` does; a HookExecutor given
no runner of its own uses that one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ohtui.sdk.conversation.visualizer.base import ConversationVisualizerBase
    from ohtui.sdk.hooks.config import HookDefinition
    from ohtui.sdk.hooks.result import HookResult
    from ohtui.sdk.hooks.types import HookEvent
    from ohtui.sdk.llm.llm import LLM
    from ohtui.sdk.llm.metrics import Metrics
    from ohtui.sdk.sandbox import Sandbox

UsageSink = Callable[[dict[str, "Metrics"]], None]
"""Told the metrics a hook's LLM calls ran up, by usage_id."""


class AgentHookRunner(Protocol):
    """Runs an agent hook: a small agent with the hook's tools looks into the event and
    decides."""

    def __call__(
        self,
        hook: HookDefinition,
        event: HookEvent,
        llm: LLM,
        working_dir: str,
        visualizer: type[ConversationVisualizerBase] | ConversationVisualizerBase | None,
        sandbox: Sandbox | None,
        record_usage: UsageSink,
    ) -> HookResult:
        """The hook's result; never raises (a hook that cannot decide allows)."""
        ...


_provided: AgentHookRunner | None = None


def provide_agent_hook_runner(runner: AgentHookRunner) -> None:
    """Make `runner` the one agent hooks run with (the conversation's, on its import)."""
    global _provided
    _provided = runner


def provided_agent_hook_runner() -> AgentHookRunner | None:
    """The runner the conversation provided, if it has been imported."""
    return _provided
