"""Opening a conversation saved here as the user's settings say: new, resumed by id, or the
latest of a workspace. Shared by the TUI and headless runs; blocking (it reads the database).

`start_local` is the whole opening sequence both front ends run: open (read-only when another
ohtui has it), mask the secrets in logs, install the safety (analyzers, policy, rules), and
collect what to tell the user (sandbox, missing key, rules file)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ohtui.opening.agent import build_agent, missing_key, plugin_sources
from ohtui.opening.errors import NoModelError, SetupError
from ohtui.opening.records import NEW_CONVERSATION, NO_CALLBACKS, Callbacks, Opened, Started, Target
from ohtui.opening.safety import install_safety, policy_for
from ohtui.opening.sandbox import install_sandbox
from ohtui.settings.profile import Profile

if TYPE_CHECKING:
    from ohtui.sdk import LocalConversation
    from ohtui.sdk.conversation import ConversationSummary, StorageReadOnlyError
    from ohtui.sdk.plugins import PluginCheck
    from ohtui.settings.approval_rules import ApprovalRuleStore


ProjectMcp = Callable[[Path], Mapping[str, Any]]
"""The trusted MCP servers of a workspace's .mcp.json, given the folder the conversation
opens in (a resumed one's own, wherever ohtui was started); it may ask the user."""


def start_local(
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
    """The whole opening sequence of a conversation saved here: open the conversation, mask
    its secrets in logs, install the safety (the saved policy of a resumed conversation,
    unless this run chose one) and collect the warnings to show.

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
    policy = policy_for(profile, opened.resumed, conversation.state.confirmation_policy)
    notices.append(install_safety(conversation, policy, rules))
    return Started(opened, tuple(n for n in notices if n))


def open_conversation(
    profile: Profile,
    workspace: Path,
    persistence_dir: Path,
    target: Target = NEW_CONVERSATION,
    callbacks: Callbacks = NO_CALLBACKS,
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
    from ohtui.sdk.conversation.callbacks import logging_failures
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
            # The front end's listener is ours: its failure is logged, never stops a run.
            callbacks=[logging_failures(callbacks.on_event)] if callbacks.on_event else None,
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
    from ohtui.sdk.conversation import LocalCatalog

    catalog = LocalCatalog(persistence_dir)
    if target.resume_id:
        return catalog.find(target.resume_id)
    if not target.continue_latest:
        return None
    latest = catalog.latest(str(workspace))
    if latest is None:
        raise SetupError(
            f"No saved conversation in {workspace} to continue. Start a new one with "
            "`ohtui`, or pick one from every workspace with `ohtui --resume`."
        )
    return latest
