"""Opening a conversation on an agent server ([server] url, `--server`): the remote half of
`ohtui.opening.start`, for the TUI and headless runs alike.

The agent is built from the settings as for a local run and sent to the server, which runs
it there; `-w` names the folder on the server. Conversations are found on the server (a
resume id, or an id prefix, is looked up there), never in the local store.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from ohtui.opening.agent import build_agent, missing_key
from ohtui.opening.errors import NoModelError, SetupError
from ohtui.opening.records import Callbacks, Opened, Started, Target
from ohtui.opening.safety import install_safety, policy_for

if TYPE_CHECKING:
    from ohtui.sdk import ConfirmationPolicyBase, RemoteConversation, RemoteWorkspace
    from ohtui.settings.approval_rules import ApprovalRuleStore
    from ohtui.settings.choices import ConfirmationPolicy
    from ohtui.settings.profile import Profile

logger = logging.getLogger(__name__)


def start_remote(
    profile: Profile,
    workspace: Path,
    target: Target | None = None,
    callbacks: Callbacks | None = None,
    *,
    rules: ApprovalRuleStore | None = None,
    api_key: str | None = None,
    stream: bool = True,
) -> Started:
    """Open the conversation on the server, mask its secrets in logs, install the safety
    (ohtui's rules where the server takes them, else the plain policy) and collect notices."""
    from ohtui.logs import mask_in_logs
    from ohtui.sdk import RemoteConversation

    opened = open_remote(profile, workspace, target, callbacks, api_key=api_key, stream=stream)
    conversation = opened.conversation
    assert isinstance(conversation, RemoteConversation)
    mask_in_logs(conversation)
    policy = policy_for(profile, opened.resumed, saved_policy(conversation))
    notices = [
        missing_key(profile, opened),
        use_settings_llm(conversation) if opened.resumed else None,
        install_remote_safety(conversation, policy, rules),
        _sandbox_notice(conversation),
    ]
    return Started(opened, tuple(n for n in notices if n))


def _sandbox_notice(conversation: RemoteConversation) -> str | None:
    """What to tell when the server runs this conversation's commands unconfined against
    its settings, and why."""
    problem = conversation.state.reported_sandbox_problem
    if problem is None:
        return None
    return f"The server runs this conversation's commands without a sandbox: {problem}"


def use_settings_llm(conversation: RemoteConversation) -> str | None:
    """Have the server go on with the model these settings give (`--model`, `--base-url`,
    the key), as a local resume does; what to tell when it cannot (None: it does)."""
    from ohtui.sdk import RemoteServerError

    host = conversation.workspace.display_host
    try:
        conversation.switch_llm(conversation.agent.llm)
    except RemoteServerError as exc:
        logger.info("the server did not switch the conversation's LLM: %s", exc)
        if exc.status_code == 409:
            return (
                f"The conversation is running on the agent server at {host}: it goes on with "
                "the model it had; reopen it once it stops to use this one."
            )
        if exc.status_code in (404, 405):
            return (
                f"The agent server at {host} cannot switch a conversation's model: this one "
                "goes on with the model (and address) it was started with."
            )
        return f"{exc} The conversation goes on with the model it had."
    return None


def server_workspace(profile: Profile, workspace: Path) -> RemoteWorkspace:
    """The workspace on the configured server, with its session key."""
    from ohtui.sdk import RemoteWorkspace

    url = profile.settings.server.url
    if not url:
        raise SetupError("No agent server is set: give --server URL or [server] url.")
    key = profile.server_key(url)
    remote = RemoteWorkspace(host=url, api_key=key.value, working_dir=str(workspace))
    from ohtui.settings.local_server import LOCAL_SERVER, listener_check

    if key.source == LOCAL_SERVER:
        remote.check_connections(listener_check(url))
    return remote


def open_remote(
    profile: Profile,
    workspace: Path,
    target: Target | None = None,
    callbacks: Callbacks | None = None,
    *,
    api_key: str | None = None,
    stream: bool = True,
) -> Opened:
    """Create or attach to the conversation on the server. Raises SetupError (NoModelError
    without a model), ConversationNotFoundError for an id the server lacks, and the
    RemoteServerError family when the server refuses or cannot be reached."""
    from ohtui.sdk import LLMSecurityAnalyzer, RemoteConversation

    target = target or Target()
    callbacks = callbacks or Callbacks()
    settings = profile.settings
    model = settings.llm.model
    if not model:
        raise NoModelError(
            "No model is set. Choose one in /settings, or start ohtui with --model (the agent "
            "server calls the model with the settings and key given here)."
        )
    remote = server_workspace(profile, workspace)
    conversation_id = find_remote_target(remote, target)
    agent, key_source = build_agent(profile, model, callbacks, api_key=api_key, stream=stream)
    on_connection = callbacks.on_connection
    conversation = RemoteConversation(
        agent=agent,
        workspace=remote,
        conversation_id=conversation_id,
        callbacks=[callbacks.on_event] if callbacks.on_event else None,
        token_callbacks=[callbacks.on_token] if callbacks.on_token else None,
        max_iteration_per_run=settings.agent.max_iteration_per_run,
        stuck_detection=settings.agent.stuck_detection,
        stuck_detection_thresholds=settings.agent.stuck_thresholds,
        secrets=profile.user_secrets() or None,
        visualizer=None,
        autotitle=False,  # ohtui titles its conversations itself ([ui] auto_title)
        # A new one is created with the policy the server is to keep (start_remote then
        # adds ohtui's rules where the server takes them).
        confirmation_policy=settings.confirmation.policy.to_engine(),
        security_analyzer=LLMSecurityAnalyzer(),
        connection_callbacks=(
            [lambda status, why: on_connection(status.label, why)] if on_connection else None
        ),
    )
    resumed = len(conversation.state.events) > 0
    return Opened(conversation, model, resumed, key_source)


def find_remote_target(workspace: RemoteWorkspace, target: Target) -> uuid.UUID | None:
    """The server conversation `target` names (None: a new one)."""
    from ohtui.sdk.conversation.impl.remote_catalog import RemoteCatalog

    catalog = RemoteCatalog(workspace)
    if target.resume_id:
        return uuid.UUID(catalog.find(target.resume_id).id)
    if target.continue_latest:
        latest = catalog.latest(workspace.working_dir)
        if latest is None:
            raise SetupError(
                f"No conversation in {workspace.working_dir} on the agent server at "
                f"{workspace.display_host} to continue. Start a new one."
            )
        return uuid.UUID(latest.id)
    return uuid.UUID(target.new_id) if target.new_id else None


def saved_policy(conversation: RemoteConversation) -> ConfirmationPolicyBase:
    """The policy the conversation was last given: the latest one its history records
    (the OpenHands server, restarted, silently goes back to the policy a conversation was
    created with, yet keeps the later change in its history), else the server's."""
    from ohtui.sdk import ConversationStateUpdateEvent
    from ohtui.sdk.wire.state_in import policy_from_wire

    for event in reversed(conversation.state.events):
        if isinstance(event, ConversationStateUpdateEvent) and event.key == "confirmation_policy":
            return policy_from_wire(event.value)
    return conversation.state.confirmation_policy


def install_remote_safety(
    conversation: RemoteConversation, policy: ConfirmationPolicy, rules: ApprovalRuleStore | None
) -> str | None:
    """ohtui's safety (analyzers, rules) where the server takes it (`ohtui serve`); on a
    server that does not (OpenHands'), the plain policy, saying that rules stay unused."""
    from ohtui.sdk import LLMSecurityAnalyzer, RemoteServerError

    try:
        return install_safety(conversation, policy, rules)
    except RemoteServerError as exc:
        logger.info("the server refused ohtui's safety settings: %s", exc)
    try:
        conversation.set_security_analyzer(LLMSecurityAnalyzer())
    except RemoteServerError as exc:
        logger.info("the server refused the LLM security analyzer: %s", exc)
    conversation.set_confirmation_policy(policy.to_engine())
    return (
        f"The agent server at {conversation.workspace.display_host} does not take ohtui's "
        f"approval rules: it asks as the '{policy}' policy says, without them."
    )


def resume_command(conversation_id: str, server_url: str | None = None) -> str:
    """The shell command that resumes a conversation: `ohtui --resume ID`, with `--server
    URL` for one on an agent server (the URL without any user name or password in it)."""
    import shlex
    from urllib.parse import urlsplit, urlunsplit

    if not server_url:
        return f"ohtui --resume {conversation_id}"
    parts = urlsplit(server_url)
    netloc = parts.netloc.rpartition("@")[2]
    url = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return f"ohtui --server {shlex.quote(url)} --resume {conversation_id}"
