"""Opening a conversation as the user's settings say: new, resumed by id, or the latest of a
workspace. Shared by the TUI and headless runs; blocking (it reads the database).

`start` is the whole opening sequence both front ends run: open (read-only when another ohtui
has it), mask the secrets in logs, install the safety (analyzers, policy, rules), and collect
what to tell the user (sandbox, missing key, rules file)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ohtui.settings import paths
from ohtui.settings.profile import Profile
from ohtui.settings.secrets import NO_KEY

if TYPE_CHECKING:
    from ohtui.sdk import (
        Agent,
        BaseConversation,
        ConfirmationPolicyBase,
        Event,
        LocalConversation,
        PluginSource,
        RemoteConversation,
    )
    from ohtui.sdk.context import AgentContext
    from ohtui.sdk.conversation import ConversationSummary, LeaseHolder, StorageReadOnlyError
    from ohtui.sdk.llm import LLMStreamChunk
    from ohtui.sdk.plugins import PluginCheck
    from ohtui.sdk.sandbox import SandboxConfig
    from ohtui.settings.approval_rules import ApprovalRuleStore
    from ohtui.settings.plugins import PluginEntry


class SetupError(Exception):
    """The conversation cannot start as configured; the message says what to do."""


class NoModelError(SetupError):
    """No model is configured anywhere: the user has to choose one first."""


ProjectMcp = Callable[[Path], Mapping[str, Any]]
"""The trusted MCP servers of a workspace's .mcp.json, given the folder the conversation
opens in (a resumed one's own, wherever ohtui was started); it may ask the user."""


@dataclass(frozen=True, slots=True)
class Target:
    """Which conversation to open."""

    resume_id: str | None = None
    """A saved conversation's id, or a unique prefix of it."""
    continue_latest: bool = False
    """The workspace's most recently updated conversation."""
    new_id: str | None = None
    """A fixed id for a new conversation (tests); None picks a random one."""


@dataclass(frozen=True, slots=True)
class Opened:
    """A conversation ready to run, and whether it has history already."""

    conversation: LocalConversation | RemoteConversation
    model: str
    resumed: bool
    key_source: str
    """Where the API key came from: a variable's name, "keyring", "memory" or "none"."""
    sandbox_notice: str | None = None
    """Why commands run without the sandbox the settings ask for (None: as asked)."""


@dataclass(frozen=True, slots=True)
class Callbacks:
    """What the engine calls back: events, streamed tokens, LLM attempts and retries."""

    on_event: Callable[[Event], None] | None = None
    on_token: Callable[[LLMStreamChunk], None] | None = None
    on_retry: Callable[[int, float, Exception], None] | None = None
    on_attempt: Callable[[int], None] | None = None
    """An LLM call's attempt (1, 2, ...) starts: its connection is being made."""
    on_connection: Callable[[str, str], None] | None = None
    """A remote conversation's link to its server changed: ("reconnecting…", why), or
    ("connected", "")..."""


@dataclass(frozen=True, slots=True)
class Started:
    """What `start` gives: the opened conversation, and what to tell the user."""

    opened: Opened
    notices: tuple[str, ...] = ()
    """Warnings to show, in order (sandbox, missing key, rules file)."""
    held_by: LeaseHolder | None = None
    """Who runs the conversation when another ohtui does: it is open read-only here."""
    read_only_reason: str | None = None
    """Why it is open read-only when no other ohtui has it (its folder cannot be written)."""

    @property
    def conversation(self) -> LocalConversation | RemoteConversation:
        """The conversation."""
        return self.opened.conversation


def start(
    profile: Profile,
    workspace: Path,
    persistence_dir: Path,
    target: Target = Target(),
    callbacks: Callbacks = Callbacks(),
    *,
    rules: ApprovalRuleStore | None = None,
    api_key: str | None = None,
    stream: bool = True,
    read_only_fallback: bool = False,
    project_mcp: ProjectMcp | None = None,
    defer_mcp: bool = False,
    plugin_check: PluginCheck | None = None,
) -> Started:
    """The whole opening sequence: open the conversation, mask its secrets in logs, install
    the safety (the saved policy of a resumed conversation, unless this run chose one) and
    collect the warnings to show.

    `project_mcp`: the MCP servers of the trusted `.mcp.json` of the folder the conversation
    opens in, asked once (config.toml's servers of the same name win); `defer_mcp`: they
    start on the conversation's `start_mcp()`, not at once. `plugin_check` says which of
    the plugins to use (the user's trust; it may raise PluginTrustError, which becomes a
    SetupError).
    `read_only_fallback`: when another ohtui runs the saved conversation, or its folder
    cannot be written, open it read-only instead of raising ConversationLockedError or
    SetupError. Raises as `open_conversation` does; a folder that cannot be written is a
    SetupError naming the setting that moves it.
    """
    from ohtui.logs import mask_in_logs
    from ohtui.sdk import ConversationLockedError, LocalConversation, StorageReadOnlyError

    if profile.settings.server.url:
        from ohtui.remote_opening import start_remote

        return start_remote(
            profile, workspace, target, callbacks, rules=rules, api_key=api_key, stream=stream
        )

    project_servers = _once(project_mcp) if project_mcp is not None else None

    def open_it(read_only: bool) -> Opened:
        return open_conversation(
            profile,
            workspace,
            persistence_dir,
            target,
            callbacks,
            api_key=api_key,
            stream=stream,
            read_only=read_only,
            project_mcp=project_servers,
            defer_mcp=defer_mcp,
            plugin_check=plugin_check,
        )

    held_by = None
    read_only_reason = None
    try:
        opened = open_it(read_only=False)
    except ConversationLockedError as exc:
        if not read_only_fallback:
            raise
        opened = open_it(read_only=True)
        held_by = exc.holder
    except StorageReadOnlyError as exc:
        advice = storage_advice(profile, exc)
        resuming = bool(target.resume_id or target.continue_latest)
        if not (resuming and read_only_fallback):
            what = (
                "this conversation cannot run" if resuming else "a new conversation cannot be saved"
            )
            raise SetupError(f"{exc} So {what} there. {advice}") from exc
        opened = open_it(read_only=True)
        read_only_reason = f"Read-only: {exc} {advice}"
    conversation = opened.conversation
    assert isinstance(conversation, LocalConversation)  # a remote one opened above
    mask_in_logs(conversation)
    if held_by is not None or read_only_reason is not None:
        # Its policy and rules stay as they were saved.
        return Started(opened, (), held_by, read_only_reason)
    notices = [opened.sandbox_notice, missing_key(profile, opened), skill_notice(conversation)]
    chosen = ("confirmation", "policy") in profile.overrides
    saved = policy_name(conversation.state.confirmation_policy)
    policy = saved if opened.resumed and not chosen else profile.settings.confirmation.policy
    notices.append(install_safety(conversation, policy, rules))
    return Started(opened, tuple(n for n in notices if n))


def open_conversation(
    profile: Profile,
    workspace: Path,
    persistence_dir: Path,
    target: Target = Target(),
    callbacks: Callbacks = Callbacks(),
    *,
    api_key: str | None = None,
    stream: bool = True,
    read_only: bool = False,
    project_mcp: ProjectMcp | None = None,
    defer_mcp: bool = False,
    plugin_check: PluginCheck | None = None,
) -> Opened:
    """Build the agent from the settings and open its conversation (`read_only`: a saved one,
    to read whoever runs it).

    `api_key` (tests) wins over the environment and the keyring. Raises SetupError
    (NoModelError on a first run), ConversationNotFoundError, or ConversationLockedError
    when another ohtui has the conversation open, saying what to do.
    """
    from ohtui.sdk import LocalConversation
    from ohtui.sdk.plugins import PluginFetchError, PluginLoadError
    from ohtui.settings.plugin_trust import PluginTrustError, outside_workspace

    settings = profile.settings
    conversation_id, saved_model, saved_workspace = _find(persistence_dir, workspace, target)
    if not read_only:
        check_workspace(saved_workspace or workspace, saved=saved_workspace is not None)
    model = settings.llm.model or saved_model
    if not model:
        raise NoModelError(
            "No model is set. Choose one in /settings, or start ohtui with --model (e.g. "
            "--model openai/gpt-4o, and --base-url for an OpenAI-compatible server), or set "
            "OHTUI_MODEL."
        )
    opened_in = saved_workspace or workspace
    project = project_mcp(opened_in) if project_mcp is not None else None
    agent, key_source = build_agent(
        profile, model, callbacks, api_key=api_key, stream=stream, project_mcp=project
    )
    agent_settings = settings.agent
    checked = None if plugin_check is None else outside_workspace(opened_in, plugin_check)
    try:
        conversation = LocalConversation(
            agent=agent,
            workspace=opened_in,
            plugins=plugin_sources(settings.agent.plugins),
            persistence_dir=persistence_dir,
            conversation_id=conversation_id,
            callbacks=[callbacks.on_event] if callbacks.on_event else None,
            token_callbacks=[callbacks.on_token] if callbacks.on_token else None,
            max_iteration_per_run=agent_settings.max_iteration_per_run,
            stuck_detection=agent_settings.stuck_detection,
            stuck_detection_thresholds=agent_settings.stuck_thresholds,
            secrets=profile.user_secrets() or None,
            cipher=profile.cipher(),
            visualizer=None,
            read_only=read_only,
            defer_mcp=True,  # started below, once the sandbox they may run in is set
            checkpoints=True,
            plugin_check=None if read_only else checked,
            mcp_check=_project_check(settings.mcp.mcp_config(), project, opened_in),
        )
    except PluginTrustError as exc:
        raise SetupError(str(exc)) from exc
    except (PluginFetchError, PluginLoadError) as exc:
        raise SetupError(
            f"{str(exc).rstrip('.')}. Fix or remove it in /settings (Plugins), or in the "
            "plugins list of the [agent] table of config.toml."
        ) from exc
    resumed = len(conversation.state.events) > 0
    if not read_only and conversation.state.stuck_detection != agent_settings.stuck_detection:
        conversation.state.stuck_detection = agent_settings.stuck_detection  # the setting rules
    notice = (
        None
        if read_only
        else install_sandbox(conversation, settings.sandbox.config(), profile.config_path)
    )
    if not (read_only or defer_mcp):
        conversation.start_mcp()
    return Opened(conversation, model, resumed, key_source, notice)


def _once(project_mcp: ProjectMcp) -> ProjectMcp:
    """`project_mcp`, asked once per folder (a read-only retry opens the same one)."""
    answers: dict[Path, Mapping[str, Any]] = {}

    def servers(workspace: Path) -> Mapping[str, Any]:
        if workspace not in answers:
            answers[workspace] = project_mcp(workspace)
        return answers[workspace]

    return servers


def build_agent(
    profile: Profile,
    model: str,
    callbacks: Callbacks = Callbacks(),
    *,
    api_key: str | None = None,
    stream: bool = True,
    project_mcp: Mapping[str, Any] | None = None,
) -> tuple[Agent, str]:
    """The agent the settings describe, and where its API key came from (`api_key`, from
    tests, wins over the environment and the keyring; `project_mcp`: the workspace's trusted
    .mcp.json servers, under those of the settings)."""
    from ohtui.context_strategy import agent_context_options
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


def _project_check(
    own: Mapping[str, Any], project: Mapping[str, Any] | None, workspace: Path
) -> Callable[[str], str | None] | None:
    """The check, before each start of a project server, that what it runs is still what the
    user trusted (None without project servers; the user's own of the same name win)."""
    servers = {name: spec for name, spec in (project or {}).items() if name not in own}
    if not servers:
        return None
    from ohtui.settings.mcp_recheck import unchanged_since_trusted

    return unchanged_since_trusted(servers, workspace)


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


def skill_notice(conversation: LocalConversation) -> str | None:
    """One warning for the skill files that could not be read, naming each and its fault."""
    warnings = conversation.skill_warnings
    if not warnings:
        return None
    return f"Skipped {len(warnings)} skill file(s): " + "; ".join(warnings)


def storage_advice(profile: Profile, error: StorageReadOnlyError) -> str:
    """Which setting moves the conversations to a folder that can be written."""
    if profile.settings.storage.conversations_dir is not None:
        where = "conversations_dir in the [storage] table of config.toml"
        if ("storage", "conversations_dir") in profile.overrides:
            where = profile.overrides[("storage", "conversations_dir")].origin
        return (
            f"Set {where} to a folder you can write (or make '{error.base_dir}' writable); "
            "saved conversations still open read-only (/resume, ohtui --resume)."
        )
    return (
        "Set OHTUI_DATA_DIR (or conversations_dir in the [storage] table of config.toml) to "
        f"a folder you can write, or make '{error.base_dir}' writable; saved conversations "
        "still open read-only (/resume, ohtui --resume)."
    )


def check_workspace(path: Path, *, saved: bool = False) -> None:
    """Raise SetupError naming `path` unless it is an existing folder (`saved`: the one a
    resumed conversation works in) whose path is text. ohtui never creates a workspace the
    user mistyped."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:  # a byte that is not UTF-8: the conversation could not be saved
        from ohtui.terminal_text import shell_quoted

        raise SetupError(
            f"ohtui cannot work in {shell_quoted(str(path))}: its name is not UTF-8 text, so a "
            "conversation there could not be saved. Rename the folder, or pass another with -w."
        ) from None
    if path.is_dir():
        return
    if path.exists():
        raise SetupError(f"The workspace '{path}' is a file, not a folder. Pass a folder with -w.")
    if saved:
        raise SetupError(
            f"The folder this conversation works in, '{path}', no longer exists. Restore it "
            f"(mkdir -p '{path}'), or start a new conversation in another folder."
        )
    raise SetupError(
        f"The workspace folder '{path}' does not exist. Create it (mkdir -p '{path}') or pass "
        "an existing folder with -w."
    )


def install_sandbox(
    conversation: BaseConversation, config: SandboxConfig, config_file: Path | None = None
) -> str | None:
    """Confine the conversation's tools as `config` says, where the sandbox starts; else run
    with `off` and return what to tell the user (what is missing or failed, how to fix it).

    The sandbox is tried with the agent's real shell first, so the mode shown is the mode in
    force. ohtui's own files (`config_file`: the config.toml in use) are out of the agent's
    reach whatever the mode.
    """
    from ohtui.sdk.sandbox import SandboxMode, probe

    def install(chosen: SandboxConfig) -> None:
        conversation.set_sandbox(
            chosen,
            private_paths=paths.private_paths(config_file),
            protected_paths=paths.protected_paths(),
        )

    off = config.model_copy(update={"mode": SandboxMode.OFF})
    if config.mode is not SandboxMode.OFF:
        availability = probe()
        if not availability.available:
            install(off)
            return availability.message
    install(config)
    problem = conversation.check_sandbox()
    if problem:
        install(off)
        return (
            f"No sandbox: {problem}. Commands run unconfined; /sandbox tries again, and "
            "`ohtui --sandbox off` runs without one on purpose."
        )
    own_code = _own_code_in_reach(conversation, config)
    if own_code:
        return (
            f"ohtui itself runs from {own_code}, which sandboxed commands may change: the "
            "next ohtui run would run what they wrote, unconfined. Install ohtui outside the "
            "workspace (pipx install ohtui) for the sandbox to hold."
        )
    if config.mode is not SandboxMode.OFF and config.network:
        from ohtui.sdk.sandbox import landlock

        if landlock.abi_version() < landlock.SCOPE_ABI:
            return (
                "With the network on, sandboxed commands can reach abstract sockets (an X "
                "server, some D-Bus buses): this kernel cannot refuse them (Landlock scopes "
                "need Linux 6.12). Without `network = true` they are out of reach."
            )
    return None


def _own_code_in_reach(conversation: BaseConversation, config: SandboxConfig) -> str | None:
    """Where ohtui's code or its Python environment lies in a path the sandbox lets commands
    write (a virtual environment in the workspace), if it does."""
    import os
    import sys

    from ohtui.sdk.sandbox import SandboxMode
    from ohtui.sdk.sandbox.boundary import within

    if config.mode is not SandboxMode.WORKSPACE_WRITE:
        return None
    workspace = conversation.workspace.working_dir
    writable = [
        os.path.realpath(os.path.join(workspace, os.path.expanduser(p)))
        for p in (workspace, *config.writable)
    ]
    code = [sys.prefix, os.path.dirname(os.path.abspath(__file__))]  # the ohtui package
    for path in map(os.path.realpath, code):
        if within(path, writable):
            return path
    return None


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


def _find(
    persistence_dir: Path, workspace: Path, target: Target
) -> tuple[uuid.UUID | None, str | None, Path | None]:
    """(id, its model, its workspace) of the conversation to open; (new id, None, None)."""
    summary = find_target(persistence_dir, workspace, target)
    if summary is None:
        return (uuid.UUID(target.new_id) if target.new_id else None), None, None
    saved_workspace = Path(summary.workspace) if summary.workspace else None
    return uuid.UUID(summary.id), summary.model, saved_workspace


def find_target(
    persistence_dir: Path, workspace: Path, target: Target
) -> ConversationSummary | None:
    """The saved conversation `target` names (None: a new one). Raises SetupError or
    ConversationNotFoundError, saying what to do."""
    from ohtui.sdk.conversation import find_conversation, list_conversations

    if target.resume_id:
        return find_conversation(persistence_dir, target.resume_id)
    if not target.continue_latest:
        return None
    said = [s for s in list_conversations(persistence_dir, str(workspace)) if s.event_count]
    if not said:
        raise SetupError(
            f"No saved conversation in {workspace} to continue. Start a new one with "
            "`ohtui`, or pick one from every workspace with `ohtui --resume`."
        )
    return said[0]


def install_safety(
    conversation: BaseConversation, policy: str, store: ApprovalRuleStore | None
) -> str | None:
    """Rate actions with the model and pattern rules; apply `policy` ("always", "risky",
    "never") with the conversation's rules and the saved ones. Returns a problem to tell."""
    from ohtui.sdk import (
        ApprovalRulesPolicy,
        EnsembleSecurityAnalyzer,
        LLMSecurityAnalyzer,
        PatternSecurityAnalyzer,
    )

    conversation.set_security_analyzer(
        EnsembleSecurityAnalyzer(analyzers=[LLMSecurityAnalyzer(), PatternSecurityAnalyzer()])
    )
    current = conversation.state.confirmation_policy
    rules = current.rules if isinstance(current, ApprovalRulesPolicy) else []
    rules_policy = ApprovalRulesPolicy(rules=rules, fallback=fallback_policy(policy))
    if store is not None:
        # Lasting rules come from the store as they are now, not as the conversation saw them.
        lasting = store.rules_for(conversation.workspace.working_dir)
        rules_policy = rules_policy.with_scope("user", lasting).with_scope("workspace", lasting)
    conversation.set_confirmation_policy(rules_policy)
    return store.problem if store is not None else None


def policy_name(policy: ConfirmationPolicyBase) -> str:
    """ "always", "risky" or "never" for an engine policy (rules policies: their fallback)."""
    from ohtui.sdk import AlwaysConfirm, ApprovalRulesPolicy, NeverConfirm

    if isinstance(policy, ApprovalRulesPolicy):
        policy = policy.fallback
    if isinstance(policy, AlwaysConfirm):
        return "always"
    if isinstance(policy, NeverConfirm):
        return "never"
    return "risky"


def fallback_policy(name: str) -> ConfirmationPolicyBase:
    """The engine policy for a name ("risky" for anything unknown): "risky" asks for
    MEDIUM risk and up, and for actions no analyzer could rate."""
    from ohtui.sdk import AlwaysConfirm, ConfirmRisky, NeverConfirm, SecurityRisk

    if name == "always":
        return AlwaysConfirm()
    if name == "never":
        return NeverConfirm()
    return ConfirmRisky(threshold=SecurityRisk.MEDIUM)
