"""Hooks: commands, LLM prompts or small agents run before and after tools, on prompts, on
stop, and per session; they may block what they are run for."""

from ohtui.sdk.hooks.config import (
    HookConfig,
    HookConfigError,
    HookDefinition,
    HookMatcher,
    HookType,
)
from ohtui.sdk.hooks.processes import AsyncProcessManager
from ohtui.sdk.hooks.result import HookResult
from ohtui.sdk.hooks.runner import HookExecutor, HookManager
from ohtui.sdk.hooks.types import HookDecision, HookEvent, HookEventType

__all__ = [
    "AsyncProcessManager",
    "HookConfig",
    "HookConfigError",
    "HookDecision",
    "HookDefinition",
    "HookEvent",
    "HookEventType",
    "HookExecutor",
    "HookManager",
    "HookMatcher",
    "HookResult",
    "HookType",
]
