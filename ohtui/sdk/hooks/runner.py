"""Running hooks: HookExecutor runs one hook, HookManager a conversation's hooks by event."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ohtui.sdk.event.hook import NO_EXIT_CODE, HookExecutionEvent
from ohtui.sdk.hooks.agent_runner import AgentHookRunner, provided_agent_hook_runner
from ohtui.sdk.hooks.config import HookConfig, HookDefinition, HookType
from ohtui.sdk.hooks.llm_hooks import fall_open, hook_llm, run_prompt_hook
from ohtui.sdk.hooks.processes import (
    AsyncProcessManager,
    hook_environment,
    run_command,
    start_command,
)
from ohtui.sdk.hooks.result import HookResult
from ohtui.sdk.hooks.types import HookDecision, HookEvent, HookEventType

if TYPE_CHECKING:
    from ohtui.sdk.conversation.stats import ConversationStats
    from ohtui.sdk.conversation.visualizer.base import ConversationVisualizerBase
    from ohtui.sdk.event.base import Event
    from ohtui.sdk.llm.llm import LLM
    from ohtui.sdk.llm.metrics import Metrics
    from ohtui.sdk.sandbox import Sandbox

# The runner's callers handle its events, decisions and results: they are exported with it.
__all__ = [
    "AsyncProcessManager",
    "HookDecision",
    "HookEvent",
    "HookExecutor",
    "HookManager",
    "HookResult",
    "hook_execution_event",
]

logger = logging.getLogger(__name__)


class HookExecutor:
    """Runs one hook at a time: commands as processes, prompt and agent hooks on an LLM.

    Prompt and agent hooks use `llm_getter()` when given (so they follow the
    conversation's current LLM), else `llm`; their cost goes into `conversation_stats`.
    An agent hook's tools run in the sandbox `sandbox_getter()` gives (the conversation's),
    and a command hook in the one `command_sandbox()` gives: a hook may run what the agent
    wrote in the workspace (a lint script, a package.json script), so never with more
    rights than the agent's own commands. An agent hook runs through `agent_runner`, by
    default the one the conversation provides (see `agent_runner`); without one it allows.
    """

    def __init__(
        self,
        working_dir: str | None = None,
        async_process_manager: AsyncProcessManager | None = None,
        llm: LLM | None = None,
        llm_getter: Callable[[], LLM | None] | None = None,
        visualizer: type[ConversationVisualizerBase] | ConversationVisualizerBase | None = None,
        conversation_stats: ConversationStats | None = None,
        sandbox_getter: Callable[[], Sandbox | None] | None = None,
        command_sandbox: Callable[[], Sandbox | None] | None = None,
        agent_runner: AgentHookRunner | None = None,
    ) -> None:
        self.working_dir = working_dir or os.getcwd()
        self.async_process_manager = async_process_manager or AsyncProcessManager()
        self._llm = llm
        self._llm_getter = llm_getter
        self.visualizer = visualizer
        self.conversation_stats = conversation_stats
        self._sandbox_getter = sandbox_getter
        self._command_sandbox = command_sandbox
        self._agent_runner = agent_runner

    @property
    def llm(self) -> LLM | None:
        """The LLM prompt and agent hooks ask (None: they allow, with an error)."""
        return self._llm_getter() if self._llm_getter is not None else self._llm

    def execute(
        self, hook: HookDefinition, event: HookEvent, env: dict[str, str] | None = None
    ) -> HookResult:
        """Run one hook on `event`; never raises. `env` adds variables for a command."""
        if hook.type is HookType.PROMPT:
            return self._execute_prompt_hook(hook, event)
        if hook.type is HookType.AGENT:
            return self._execute_agent_hook(hook, event)
        self.async_process_manager.cleanup_expired()
        full_env = {**hook_environment(event, self.working_dir), **(env or {})}
        sandbox = self._command_sandbox() if self._command_sandbox is not None else None
        if not hook.async_:
            return run_command(hook, event, self.working_dir, full_env, sandbox)
        try:
            process = start_command(hook, event, self.working_dir, full_env, sandbox)
        except OSError as exc:
            return HookResult(
                hook=hook, success=False, exit_code=None, error=f"could not start: {exc}"
            )
        self.async_process_manager.add_process(process, hook.timeout)
        return HookResult(hook=hook, async_started=True)

    def execute_all(
        self,
        hooks: list[HookDefinition],
        event: HookEvent,
        env: dict[str, str] | None = None,
        stop_on_block: bool = True,
    ) -> list[HookResult]:
        """Run hooks in order; with `stop_on_block`, none after the first that blocks."""
        results: list[HookResult] = []
        for hook in hooks:
            result = self.execute(hook, event, env)
            results.append(result)
            if stop_on_block and result.blocked:
                break
        return results

    def _execute_prompt_hook(self, hook: HookDefinition, event: HookEvent) -> HookResult:
        llm = self.llm
        if llm is None:
            return fall_open(hook, "no LLM to ask, so the event was allowed")
        return run_prompt_hook(hook, event, hook_llm(llm, hook), self._record_usage)

    def _execute_agent_hook(self, hook: HookDefinition, event: HookEvent) -> HookResult:
        llm = self.llm
        if llm is None:
            return fall_open(hook, "no LLM for the hook's agent, so the event was allowed")
        runner = self._agent_runner or provided_agent_hook_runner()
        if runner is None:
            return fall_open(hook, "nothing to run the hook's agent, so the event was allowed")
        return runner(
            hook,
            event,
            hook_llm(llm, hook),
            self.working_dir,
            self.visualizer,
            self._sandbox_getter() if self._sandbox_getter is not None else None,
            self._record_usage,
        )

    def _record_usage(self, usage: dict[str, Metrics]) -> None:
        """Add what hooks' LLM calls cost to the conversation's stats, by usage_id."""
        if self.conversation_stats is None:
            return
        known = self.conversation_stats.usage_to_metrics
        for usage_id, metrics in usage.items():
            if usage_id not in known:
                known[usage_id] = metrics.model_copy(deep=True)
            elif known[usage_id] is not metrics:
                known[usage_id].merge(metrics)


def hook_execution_event(
    event_type: HookEventType,
    result: HookResult,
    *,
    tool_name: str | None = None,
    action_id: str | None = None,
    message_id: str | None = None,
    hook_input: dict[str, Any] | None = None,
) -> HookExecutionEvent:
    """The record of one hook's run (its output already bounded by the runner)."""
    return HookExecutionEvent(
        hook_event_type=event_type.value,
        hook_command=result.hook.display_command if result.hook is not None else "",
        tool_name=tool_name,
        success=result.success,
        blocked=result.blocked,
        exit_code=result.exit_code if result.exit_code is not None else NO_EXIT_CODE,
        stdout=result.stdout,
        stderr=result.stderr,
        reason=result.reason,
        additional_context=result.additional_context,
        error=result.error,
        action_id=action_id,
        message_id=message_id,
        hook_input=hook_input,
    )


class HookManager:
    """A conversation's hooks: runs those configured for each event.

    With `on_event`, every hook run is recorded there as a HookExecutionEvent (before the
    caller acts on it). No `config` means no hooks (a project's hooks file is never read
    on its own: see `HookConfig.load`).
    """

    def __init__(
        self,
        config: HookConfig | None = None,
        working_dir: str | None = None,
        session_id: str | None = None,
        *,
        llm: LLM | None = None,
        llm_getter: Callable[[], LLM | None] | None = None,
        visualizer: type[ConversationVisualizerBase] | ConversationVisualizerBase | None = None,
        conversation_stats: ConversationStats | None = None,
        sandbox_getter: Callable[[], Sandbox | None] | None = None,
        command_sandbox: Callable[[], Sandbox | None] | None = None,
        agent_runner: AgentHookRunner | None = None,
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        self.config = config if config is not None else HookConfig()
        self.executor = HookExecutor(
            working_dir=working_dir,
            llm=llm,
            llm_getter=llm_getter,
            visualizer=visualizer,
            conversation_stats=conversation_stats,
            sandbox_getter=sandbox_getter,
            command_sandbox=command_sandbox,
            agent_runner=agent_runner,
        )
        self.working_dir = self.executor.working_dir
        self.session_id = session_id
        self._on_event = on_event

    def has_hooks(self, event_type: HookEventType) -> bool:
        """Whether any hook is configured for this event."""
        return self.config.has_hooks_for_event(event_type)

    def run_pre_tool_use(
        self, tool_name: str, tool_input: dict[str, Any], *, action_id: str | None = None
    ) -> tuple[bool, list[HookResult]]:
        """Before a tool runs: (whether it may run, the results). `action_id`: the action's
        event, named in the records of the hooks' runs."""
        hooks = self.config.get_hooks_for_event(HookEventType.PRE_TOOL_USE, tool_name)
        background = sum(1 for hook in hooks if hook.async_)
        if background:
            logger.warning(
                "Async hooks in PreToolUse cannot block tool execution: %d async hook(s) "
                "for %s run in the background and are not waited for",
                background,
                tool_name,
            )
        results = self._run(
            HookEventType.PRE_TOOL_USE,
            hooks,
            _Context(action_id=action_id),
            tool_name=tool_name,
            tool_input=tool_input,
        )
        return all(r.should_continue for r in results), results

    def run_post_tool_use(
        self,
        tool_name: str,
        tool_input: dict[str, Any],
        tool_response: dict[str, Any],
        *,
        action_id: str | None = None,
    ) -> list[HookResult]:
        """After a tool ran: every hook runs (a block is feedback, the tool already ran)."""
        hooks = self.config.get_hooks_for_event(HookEventType.POST_TOOL_USE, tool_name)
        return self._run(
            HookEventType.POST_TOOL_USE,
            hooks,
            _Context(action_id=action_id),
            stop_on_block=False,
            tool_name=tool_name,
            tool_input=tool_input,
            tool_response=tool_response,
        )

    def run_user_prompt_submit(
        self, message: str, *, message_id: str | None = None
    ) -> tuple[bool, str | None, list[HookResult]]:
        """Before a user message is taken: (whether it may reach the model, context the
        hooks add to it, the results). `message_id`: the id the message's event will have."""
        hooks = self.config.get_hooks_for_event(HookEventType.USER_PROMPT_SUBMIT)
        results = self._run(
            HookEventType.USER_PROMPT_SUBMIT,
            hooks,
            _Context(message_id=message_id),
            message=message,
        )
        context = "\n".join(r.additional_context for r in results if r.additional_context)
        return all(r.should_continue for r in results), context or None, results

    def run_session_start(self) -> list[HookResult]:
        """When the conversation first runs."""
        hooks = self.config.get_hooks_for_event(HookEventType.SESSION_START)
        return self._run(HookEventType.SESSION_START, hooks, _Context(), stop_on_block=False)

    def run_session_end(self) -> list[HookResult]:
        """When the conversation closes; then background hooks still running are ended."""
        hooks = self.config.get_hooks_for_event(HookEventType.SESSION_END)
        try:
            return self._run(HookEventType.SESSION_END, hooks, _Context(), stop_on_block=False)
        finally:
            self.cleanup_async_processes()

    def run_stop(
        self, reason: str | None = None, stop_hook_active: bool = False
    ) -> tuple[bool, list[HookResult]]:
        """When the agent would stop: (whether it may, the results). A block keeps it going.

        `stop_hook_active`: a Stop hook already kept this run going (Claude Code's flag).
        """
        hooks = self.config.get_hooks_for_event(HookEventType.STOP)
        results = self._run(
            HookEventType.STOP,
            hooks,
            _Context(hook_input={"reason": reason} if reason else None),
            stop_hook_active=stop_hook_active,
            metadata={"reason": reason} if reason else {},
        )
        return all(r.should_continue for r in results), results

    def cleanup_async_processes(self) -> None:
        """End every background hook still running."""
        self.executor.async_process_manager.cleanup_all()

    def get_blocking_reason(self, results: list[HookResult]) -> str | None:
        """Why the first blocking hook blocked (None if none did)."""
        for result in results:
            if result.blocked:
                return result.reason or result.stderr.strip() or "Blocked by hook"
        return None

    @staticmethod
    def blocked_by(results: list[HookResult]) -> str:
        """Which hooks blocked and why, for the agent and the user."""
        return "; ".join(
            f"{r.label}: {r.reason or 'no reason given'}" for r in results if not r.should_continue
        )

    def _run(
        self,
        event_type: HookEventType,
        hooks: list[HookDefinition],
        context: _Context,
        stop_on_block: bool = True,
        **fields: Any,
    ) -> list[HookResult]:
        if not hooks:
            return []
        event = HookEvent(
            event_type=event_type,
            session_id=self.session_id,
            working_dir=self.working_dir,
            **fields,
        )
        results = self.executor.execute_all(hooks, event, stop_on_block=stop_on_block)
        told = {k: v for k, v in fields.items() if k not in _NOT_INPUT}
        hook_input = context.hook_input if context.hook_input is not None else told or None
        for result in results:
            if result.error:
                logger.warning("%s %s: %s", event_type.value, result.label, result.error)
            if self._on_event is not None:
                self._on_event(
                    hook_execution_event(
                        event_type,
                        result,
                        tool_name=event.tool_name,
                        action_id=context.action_id,
                        message_id=context.message_id,
                        hook_input=hook_input,
                    )
                )
        return results


_NOT_INPUT = frozenset({"stop_hook_active", "metadata"})
"""HookEvent fields that are run state, not the input a hook's record shows."""


@dataclass(frozen=True)
class _Context:
    """What a hook run's record names besides the hook: the action or message it ran for,
    and what the hook was told (default: the event's fields)."""

    action_id: str | None = None
    message_id: str | None = None
    hook_input: dict[str, Any] | None = None
