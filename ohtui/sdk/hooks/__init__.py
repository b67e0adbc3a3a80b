"""Hooks: user commands run before and after tools, on prompts, on stop, and per session."""

from ohtui.sdk.hooks.config import (
    HookConfig,
    HookConfigError,
    HookDefinition,
    HookEventType,
    HookMatcher,
)
from ohtui.sdk.hooks.runner import HookManager, HookResult, HookVerdict, run_hook

__all__ = [
    "HookConfig",
    "HookConfigError",
    "HookDefinition",
    "HookEventType",
    "HookManager",
    "HookMatcher",
    "HookResult",
    "HookVerdict",
    "run_hook",
]
