"""Opening a conversation for an ACP session, as `ohtui -p` opens one: the settings (with
this run's overrides), the key from the environment or the keyring, the approval rules, the
workspace's trusted MCP servers plus the client's, the plugins the user trusted, the
sandbox. Blocking: called on a thread of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ohtui.settings.overrides import Key, Override

if TYPE_CHECKING:
    from ohtui.opening import Callbacks, Started, Target
    from ohtui.settings.approval_rules import ApprovalRuleStore
    from ohtui.settings.profile import Profile

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AcpOptions:
    """What `ohtui acp` was started with."""

    config_file: Path
    overrides: dict[Key, Override] = field(default_factory=dict)
    environ: Mapping[str, str] | None = None
    use_keyring: bool = True


class MissingKeyError(Exception):
    """No API key for the model: the message says which variable or keyring entry."""


@dataclass(frozen=True)
class Opening:
    """An opened conversation, and what it was opened with."""

    started: Started
    profile: Profile
    rules: ApprovalRuleStore


def load_profile(options: AcpOptions) -> Profile:
    """The settings, read now (a key saved since the last session is seen)."""
    from ohtui.settings.profile import Profile

    profile = Profile(
        options.config_file,
        options.overrides,
        use_keyring=options.use_keyring,
        environ=options.environ,
    ).load()
    if profile.loaded.error is not None:
        logger.warning("config: %s", profile.loaded.error)
    for warning in profile.loaded.warnings:
        logger.warning("config: %s", warning)
    return profile


def key_problem(profile: Profile) -> str | None:
    """Why the configured model cannot be called for want of a key (None: it can, or no
    model is set: opening says so)."""
    from ohtui.settings.secrets import needs_api_key, provider_env_var, provider_of

    llm = profile.settings.llm
    if not llm.model or llm.base_url:
        return None
    provider = provider_of(llm.model)
    if not needs_api_key(provider) or profile.api_key(llm.model).value is not None:
        return None
    keyring = profile.keyring
    why = "" if keyring.available else f" (the OS keyring cannot be read: {keyring.problem})"
    return (
        f"No API key for {llm.model}. Set {provider_env_var(provider)} or OHTUI_API_KEY in the "
        "environment the client starts `ohtui acp` in, or save the key in the OS keyring "
        f'(service "ohtui", entry "api-key:{provider}") from /settings in ohtui{why}.'
    )


def open_session(
    options: AcpOptions,
    workspace: Path,
    target: Target,
    callbacks: Callbacks,
    client_mcp: Mapping[str, Any],
) -> Opening:
    """Open the conversation `target` names in `workspace` (a resumed one: in its own).
    Raises MissingKeyError, and as `opening.start` does."""
    from ohtui.opening import SetupError, start
    from ohtui.settings import paths
    from ohtui.settings.approval_rules import ApprovalRuleStore
    from ohtui.settings.mcp_trust import TrustStore, read_project_servers, trusted_servers
    from ohtui.settings.plugin_trust import refuse_untrusted

    profile = load_profile(options)
    if profile.override_problem:
        raise SetupError(profile.override_problem)
    problem = key_problem(profile)
    if problem is not None:
        raise MissingKeyError(problem)
    rules = ApprovalRuleStore(paths.approval_rules_file(), profile if profile.config_path else None)

    def project_mcp(folder: Path) -> dict[str, Any]:
        """The client's servers, then the trusted ones of the folder's .mcp.json."""
        servers, notice = trusted_servers(
            read_project_servers(folder), folder, TrustStore(paths.mcp_trust_file())
        )
        if notice:
            logger.warning("MCP: %s", notice)
        return {**servers, **client_mcp}

    started = start(
        profile,
        workspace,
        profile.conversations_dir,
        target,
        callbacks,
        rules=rules,
        stream=True,
        project_mcp=project_mcp,
        plugin_check=refuse_untrusted(TrustStore(paths.plugin_trust_file())),
    )
    for notice in started.notices:
        logger.warning("%s", notice)
    return Opening(started, profile, rules)
