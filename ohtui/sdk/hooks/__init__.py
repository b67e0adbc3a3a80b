"""Hooks: commands, LLM prompts or small agents run before and after tools, on prompts, on
stop, and per session; they may block what they are run for.

The names load on first use: a conversation loads the hook runner only when it has hooks
to run, and importing the agent hook's port (`agent_runner`) loads nothing else.
"""

from typing import TYPE_CHECKING

from ohtui.sdk.utils.lazy import lazy_exports

if TYPE_CHECKING:
    from ohtui.sdk.hooks.config import (
        HookConfig,
        HookConfigError,
        HookDefinition,
        HookMatcher,
        HookType,
    )
    from ohtui.sdk.hooks.conversation_hooks import HookEventProcessor, create_hook_callback
    from ohtui.sdk.hooks.processes import AsyncProcessManager
    from ohtui.sdk.hooks.result import HookResult
    from ohtui.sdk.hooks.runner import HookExecutor, HookManager
    from ohtui.sdk.hooks.types import HookDecision, HookEvent, HookEventType

_LAZY_HOMES = {
    "HookConfig": "ohtui.sdk.hooks.config",
    "HookConfigError": "ohtui.sdk.hooks.config",
    "HookDefinition": "ohtui.sdk.hooks.config",
    "HookMatcher": "ohtui.sdk.hooks.config",
    "HookType": "ohtui.sdk.hooks.config",
    "HookEventProcessor": "ohtui.sdk.hooks.conversation_hooks",
    "create_hook_callback": "ohtui.sdk.hooks.conversation_hooks",
    "AsyncProcessManager": "ohtui.sdk.hooks.processes",
    "HookResult": "ohtui.sdk.hooks.result",
    "HookExecutor": "ohtui.sdk.hooks.runner",
    "HookManager": "ohtui.sdk.hooks.runner",
    "HookDecision": "ohtui.sdk.hooks.types",
    "HookEvent": "ohtui.sdk.hooks.types",
    "HookEventType": "ohtui.sdk.hooks.types",
}

__getattr__ = lazy_exports(__name__, _LAZY_HOMES)

__all__ = [
    "AsyncProcessManager",
    "HookConfig",
    "HookConfigError",
    "HookDecision",
    "HookDefinition",
    "HookEvent",
    "HookEventProcessor",
    "HookEventType",
    "HookExecutor",
    "HookManager",
    "HookMatcher",
    "HookResult",
    "HookType",
    "create_hook_callback",
]
