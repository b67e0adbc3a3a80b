"""Opening a conversation for a front end (the TUI, headless runs): one call, `start`, that
opens it here (`local`) or on the agent server the settings name (`remote`), installs its
safety (`safety`, `sandbox`) and says what to tell the user.

`local` and `remote` never import each other: what both need (the records, the errors, the
agent built from the settings, the safety) lives in the modules beside them. Both are
imported on first use, with the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.opening.errors import NoModelError, SetupError
from ohtui.opening.records import NEW_CONVERSATION, NO_CALLBACKS, Callbacks, Opened, Started, Target

if TYPE_CHECKING:
    from pathlib import Path

    from ohtui.opening.local import ProjectMcp
    from ohtui.sdk.plugins import PluginCheck
    from ohtui.settings.approval_rules import ApprovalRuleStore
    from ohtui.settings.profile import Profile

__all__ = [
    "Callbacks",
    "NoModelError",
    "Opened",
    "SetupError",
    "Started",
    "Target",
    "start",
]


def start(
    profile: Profile,
    workspace: Path,
    persistence_dir: Path,
    target: Target = NEW_CONVERSATION,
    callbacks: Callbacks = NO_CALLBACKS,
    *,
    rules: ApprovalRuleStore | None = None,
    api_key: str | None = None,
    stream: bool = True,
    read_only_fallback: bool = False,
    project_mcp: ProjectMcp | None = None,
    defer_mcp: bool = False,
    plugin_check: PluginCheck | None = None,
) -> Started:
    """Open the conversation on the agent server the settings name (`[server] url`), else
    here: see `remote.start_remote` and `local.start_local` (the arguments after `stream`
    apply to a conversation opened here only)."""
    if profile.settings.server.url:
        from ohtui.opening.remote import start_remote

        return start_remote(
            profile, workspace, target, callbacks, rules=rules, api_key=api_key, stream=stream
        )
    from ohtui.opening.local import start_local

    return start_local(
        profile,
        workspace,
        persistence_dir,
        target,
        callbacks,
        rules=rules,
        api_key=api_key,
        stream=stream,
        read_only_fallback=read_only_fallback,
        project_mcp=project_mcp,
        defer_mcp=defer_mcp,
        plugin_check=plugin_check,
    )
