"""The agent the settings describe (its LLM, tools, skills, context strategy and MCP
servers), built the same way for a conversation opened here or on an agent server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ohtui.opening.records import NO_CALLBACKS, Callbacks, Opened
from ohtui.settings import paths
from ohtui.settings.profile import Profile
from ohtui.settings.secrets import NO_KEY

if TYPE_CHECKING:
    from ohtui.sdk import Agent, PluginSource
    from ohtui.sdk.context import AgentContext
    from ohtui.settings.plugins import PluginEntry


def build_agent(
    profile: Profile,
    model: str,
    callbacks: Callbacks = NO_CALLBACKS,
    *,
    api_key: str | None = None,
    stream: bool = True,
    project_mcp: Mapping[str, Any] | None = None,
) -> tuple[Agent, str]:
    """The agent the settings describe, and where its API key came from (`api_key`, from
    tests, wins over the environment and the keyring; `project_mcp`: the workspace's trusted
    .mcp.json servers, under those of the settings)."""
    from ohtui.opening.context import agent_context_options
    from ohtui.sdk import LLM, Agent, Tool

    settings = profile.settings
    key_source = "argument"
    if api_key is None:
        resolved = profile.api_key(model)
        api_key, key_source = resolved.value, resolved.source
    if api_key is None and settings.llm.base_url:
        api_key = NO_KEY
    llm_settings = settings.llm
    llm = LLM(
        model=model,
        base_url=llm_settings.base_url,
        api_version=llm_settings.api_version,
        api_key=api_key,
        temperature=llm_settings.temperature,
        max_output_tokens=llm_settings.max_output_tokens,
        timeout=llm_settings.timeout,
        connect_timeout=llm_settings.connect_timeout,
        num_retries=llm_settings.num_retries,
        reasoning_effort=llm_settings.reasoning_effort,
        max_input_tokens=settings.context.max_input_tokens,
        stream=stream,
        usage_id="agent",
    )
    if callbacks.on_retry is not None:
        llm.add_retry_listener(callbacks.on_retry)
    if callbacks.on_attempt is not None:
        llm.add_attempt_listener(callbacks.on_attempt)
    agent = Agent(
        llm=llm,
        tools=[Tool(name=name) for name in settings.agent.tools],
        agent_context=skills_context(),
        **agent_context_options(settings.context, llm),
        mcp_config=merged_mcp(settings.mcp.mcp_config(), project_mcp or {}),
    )
    return agent, key_source


def merged_mcp(own: Mapping[str, Any], project: Mapping[str, Any]) -> dict[str, Any]:
    """The user's MCP servers, then the project's that do not share a name with one of them
    (the user's come first where tool names meet, see MCPClientManager)."""
    return {**own, **{name: spec for name, spec in project.items() if name not in own}}


def plugin_sources(entries: list[PluginEntry]) -> list[PluginSource] | None:
    """The engine's plugin sources for `[agent] plugins` (None when there are none: a
    resumed conversation then loads the plugins it was pinned to)."""
    from ohtui.sdk import PluginSource

    if not entries:
        return None
    return [
        PluginSource(source=entry.source, ref=entry.ref, repo_path=entry.repo_path)
        for entry in entries
    ]


def skills_context() -> AgentContext:
    """Skills from the project (AGENTS.md, .ohtui/skills...) and the user's dirs: ohtui's
    own (beside config.toml), then those other OpenHands tools share."""
    from ohtui.sdk.context import AgentContext
    from ohtui.sdk.context.skills.loader import default_user_skill_dirs

    dirs = [paths.skills_dir(), *default_user_skill_dirs()]
    return AgentContext(
        load_project_skills=True, load_user_skills=True, user_skills_dirs=[str(d) for d in dirs]
    )


def missing_key(profile: Profile, opened: Opened) -> str | None:
    """What to tell when no API key was found for a model that needs one (None: all is
    well): where the key could come from, and why the keyring did not give one."""
    from ohtui.settings.secrets import needs_api_key, provider_env_var, provider_of

    provider = provider_of(opened.model)
    if opened.key_source != "none" or profile.settings.llm.base_url:
        return None
    if not needs_api_key(provider):
        return None
    keyring = profile.keyring
    why = "" if keyring.available else f" {keyring.problem}"
    return (
        f"No API key for {opened.model}.{why} Set {provider_env_var(provider)} (or "
        "OHTUI_API_KEY), or enter the key in /settings."
    )
