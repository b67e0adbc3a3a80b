"""`ohtui -p "task"`: the same engine with no UI. Prints the agent's final response, or with
--json one JSON object per event on stdout (and nothing else there); diagnostics go to stderr.

`ohtui --undo` and `ohtui --checkpoints` (with `--resume ID` or `--continue`) restore or list
a saved conversation's checkpoints of its workspace, and run no agent turn.

The conversation tree: `--fork ID` runs the task in a new fork of a saved conversation (at its
HEAD, or with `--at EVENT_ID` at that event); `--resume ID --at EVENT_ID` moves the
conversation's HEAD to that event first, so the task starts a sibling branch there.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum, IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ohtui.settings.overrides import Key, Override

if TYPE_CHECKING:
    from ohtui.sdk import (
        ActionEvent,
        CheckpointRestoreEvent,
        Event,
        LocalConversation,
        RemoteConversation,
    )
    from ohtui.sdk.conversation import SecretRegistry

    AnyConversation = LocalConversation | RemoteConversation

Origin = tuple[str, "str | None"]
"""Where a fork comes from: the source conversation's id and the event (None: its HEAD)."""

REJECTED = (
    "Not approved: ohtui runs without a user here (headless, without --yes), so actions that "
    "need approval are rejected. Find a way that needs no approval, or finish and say what "
    "you would need."
)
MAX_REJECTED_BATCHES = 10
"""An agent that keeps asking for rejected actions is stopped after this many batches."""


class ExitCode(IntEnum):
    """What `ohtui -p` exits with."""

    FINISHED = 0
    RUN_ERROR = 1
    USAGE = 2
    CONFIGURATION = 3
    LLM_PROVIDER = 4
    STOPPED = 5
    IN_USE = 6
    """The conversation is open in another ohtui: trying again later may work."""
    NOTHING_TO_UNDO = 7
    """`--undo`: no action of the conversation changed the workspace, or all are undone."""
    REFUSED = 8
    """Actions that need approval were refused (no user here, no --yes): the run ended, but
    the task may not be done. Each refused action was reported on stderr (and in --json)."""
    INTERRUPTED = 130


class Command(Enum):
    """What a headless invocation does with its conversation."""

    RUN = "run"
    """Send the task and run the agent (-p)."""
    UNDO = "undo"
    """Restore the workspace to before the newest action not undone yet (--undo)."""
    CHECKPOINTS = "checkpoints"
    """List the workspace's checkpoints (--checkpoints)."""
    RESTORE = "restore"
    """Restore the workspace to one checkpoint (--restore ID), e.g. to undo a restore."""


@dataclass
class HeadlessOptions:
    """One headless run: the task and how to report it."""

    task: str
    workspace: Path
    config_file: Path | None
    overrides: dict[Key, Override] = field(default_factory=dict)
    json_output: bool = False
    yes: bool = False
    resume_id: str | None = None
    continue_latest: bool = False
    environ: Mapping[str, str] | None = None
    use_keyring: bool = True
    persistence_dir: Path | None = None
    command: Command = Command.RUN
    checkpoint_id: str | None = None
    """With Command.RESTORE: the checkpoint (an id or a prefix of 4+ characters)."""
    fork_id: str | None = None
    """Run the task in a new fork of this saved conversation (an id or a unique prefix)."""
    at_event_id: str | None = None
    """With `fork_id`: fork at this event; with `resume_id`: move HEAD here before the run."""


class _Output:
    """Writes events (--json) or the final response to stdout; problems to stderr.

    Everything it prints goes through `_write`: JSON with every character a terminal could
    act on escaped, text with each such character shown by a stand-in (see terminal_text).
    """

    def __init__(self, json_output: bool, out: TextIO, err: TextIO) -> None:
        self.json_output = json_output
        self.out = out
        self.err = err
        self._lock = threading.Lock()
        self._mask: Callable[[str], str] | None = None

    def mask_with(self, registry: SecretRegistry) -> None:
        """From now on, hide this registry's secrets (the LLM key among them) in problems:
        a provider's error message may quote the key it rejected."""
        self._mask = registry.mask_secrets_in_output

    def event(self, event: Event) -> None:
        if self.json_output:
            self._line(event.model_dump_json())

    def run_info(
        self,
        conversation: AnyConversation,
        model: str,
        notice: str | None,
        origin: Origin | None = None,
    ) -> None:
        """With --json, one line saying what runs: conversation, model and sandbox (and for
        a fork, where it comes from)."""
        if not self.json_output:
            return
        config = conversation.sandbox
        sandbox = config.model_dump(mode="json") if config is not None else {"mode": "off"}
        info: dict[str, Any] = {
            "kind": "HeadlessRun",
            "conversation_id": conversation.id.hex,
            "model": model,
            "sandbox": {**sandbox, "problem": notice},
        }
        if origin is not None:
            info["forked_from"], info["forked_at"] = origin
        self._line(json.dumps(info))

    def json_object(self, data: dict[str, Any]) -> None:
        """One JSON object on stdout (--json)."""
        self._line(json.dumps(data))

    def _line(self, line: str) -> None:
        self._write(self.out, line, json_line=True)

    def response(self, text: str) -> None:
        """The agent's final response, on stdout."""
        self._write(self.out, text)

    def refused(self, action: ActionEvent, reason: str) -> None:
        """One line on stderr for an action refused for want of approval; with --json, also
        one `HeadlessRefused` object on stdout."""
        words = _action_words(action)
        if self._mask is not None:
            words = self._mask(words)
        if self.json_output:
            refusal = {
                "kind": "HeadlessRefused",
                "action_id": action.id,
                "tool_name": action.tool_name,
                "action": words,
                "security_risk": action.security_risk.value,
                "reason": reason,
            }
            self._line(json.dumps(refusal))
        self.problem(f"refused ({reason}; needs approval): {action.tool_name}: {words}")

    def problem(self, text: str) -> None:
        if self._mask is not None:
            text = self._mask(text)
        self._write(self.err, f"ohtui: {text}")

    def _write(self, stream: TextIO, text: str, json_line: bool = False) -> None:
        """Print one line: the only way anything reaches stdout or stderr."""
        from ohtui.terminal_text import json_safe, terminal_safe

        safe = json_safe(text) if json_line else terminal_safe(text.replace("\r\n", "\n"))
        with self._lock:
            stream.write(safe + "\n")
            stream.flush()


def run_headless(
    options: HeadlessOptions, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Run the task to the end; returns the exit code (see ExitCode)."""
    from ohtui.logs import log_to_file

    log_file = log_to_file()
    output = _Output(options.json_output, out or sys.stdout, err or sys.stderr)
    try:
        origin = None
        if options.fork_id is not None:
            forked = _fork(options, output)
            if isinstance(forked, ExitCode):
                return forked
            origin = (forked.source_id, options.at_event_id)
            options = replace(options, resume_id=forked.fork_id, continue_latest=False)
        opened = _open(options, output, origin)
        if isinstance(opened, ExitCode):
            return opened
        try:
            if options.command is Command.UNDO:
                return _undo(opened, output)
            if options.command is Command.RESTORE:
                return _undo(opened, output, options.checkpoint_id)
            if options.command is Command.CHECKPOINTS:
                return _list_checkpoints(opened, output)
            if options.fork_id is None and options.at_event_id is not None:
                moved = _move_head(opened, options.at_event_id, output)
                if moved is not None:
                    return moved
            return _run(opened, options, output)
        finally:
            opened.close()
    except Exception as exc:  # a bug of ours: say so plainly, the traceback goes to the log
        logging.getLogger(__name__).exception("headless run failed")
        where = getattr(log_file, "baseFilename", "the log file")
        output.problem(f"unexpected error: {type(exc).__name__}: {exc} (details in {where})")
        return ExitCode.RUN_ERROR


def _open(
    options: HeadlessOptions,
    output: _Output,
    origin: Origin | None = None,
    *,
    fork_source: bool = False,
) -> AnyConversation | ExitCode:
    """Open the conversation the options name. `origin`: the fork's, said in the run's
    first JSON line; `fork_source`: only to fork it (no events or notices printed, no MCP
    servers: the fork, opened next, says them)."""
    running = options.command is Command.RUN and not fork_source
    from ohtui.opening import Callbacks, SetupError, Target, start
    from ohtui.sdk import (
        ConversationLockedError,
        ConversationNotFoundError,
        PersistenceError,
        RemoteServerError,
        WorkspaceError,
    )
    from ohtui.settings import paths
    from ohtui.settings.approval_rules import ApprovalRuleStore
    from ohtui.settings.profile import Profile

    profile = Profile(
        options.config_file,
        options.overrides,
        use_keyring=options.use_keyring,
        environ=options.environ,
    ).load()
    if profile.override_problem:
        output.problem(profile.override_problem)
        return ExitCode.CONFIGURATION
    if profile.loaded.error is not None:  # a broken file never stops ohtui: its valid part runs
        output.problem(f"warning: {profile.loaded.error}")
    for warning in profile.loaded.warnings:
        output.problem(f"warning: {warning}")
    rules = ApprovalRuleStore(paths.approval_rules_file(), profile if profile.config_path else None)
    from ohtui.settings.mcp_trust import TrustStore, read_project_servers, trusted_servers
    from ohtui.settings.plugin_trust import refuse_untrusted

    def project_mcp(workspace: Path) -> dict[str, Any]:
        """The trusted servers of the folder the conversation opens in."""
        servers, notice = trusted_servers(
            read_project_servers(workspace), workspace, TrustStore(paths.mcp_trust_file())
        )
        if notice:
            output.problem(f"warning: {notice}")
        return servers

    try:
        started = start(
            profile,
            options.workspace,
            options.persistence_dir or profile.conversations_dir,
            Target(options.resume_id, options.continue_latest),
            Callbacks(on_event=output.event if running else None),
            rules=rules,
            stream=False,
            project_mcp=project_mcp if running else None,
            defer_mcp=not running,  # no agent turn: no MCP servers
            plugin_check=refuse_untrusted(TrustStore(paths.plugin_trust_file())),
        )
    except ConversationNotFoundError as exc:
        output.problem(str(exc))
        return ExitCode.USAGE
    except ConversationLockedError as exc:
        output.problem(
            f"conversation {exc.conversation_id} is open in another ohtui "
            f"({exc.holder.describe()}), and only one may run it. Try again once it has "
            f"finished, or start a new conversation; `ohtui --resume {exc.conversation_id}` "
            "shows it read-only meanwhile."
        )
        return ExitCode.IN_USE
    except (SetupError, PersistenceError, WorkspaceError, OSError, RemoteServerError) as exc:
        output.problem(str(exc))  # a server refusing the key, or out of reach, too
        return ExitCode.CONFIGURATION
    conversation = started.conversation
    output.mask_with(conversation.state.secret_registry)
    for notice in () if fork_source else started.notices:
        output.problem(notice)
    if running:
        output.run_info(conversation, started.opened.model, started.opened.sandbox_notice, origin)
        _report_mcp_failures(conversation, output)
    return conversation


@dataclass(frozen=True, slots=True)
class _Forked:
    """A fork made for this run."""

    source_id: str
    fork_id: str


def _fork(options: HeadlessOptions, output: _Output) -> _Forked | ExitCode:
    """Fork the conversation `--fork` names (at `--at`, else at its HEAD), on the agent
    server when it runs there; say the fork's id (stderr; --json: the run's first line)."""
    from ohtui.sdk import RemoteServerError

    assert options.fork_id is not None
    source_options = replace(options, resume_id=options.fork_id, continue_latest=False)
    source = _open(source_options, output, fork_source=True)
    if isinstance(source, ExitCode):
        return source
    try:
        try:
            fork = source.fork(from_event_id=options.at_event_id)
        except RemoteServerError as exc:
            output.problem(f"cannot fork conversation {source.id.hex}: {exc}")
            return ExitCode.CONFIGURATION
        except ValueError:
            if options.at_event_id is None:
                raise  # not about an event: a bug of ours, said as one
            output.problem(_unknown_event(source, options.at_event_id))
            return ExitCode.USAGE
        fork.close()
    finally:
        source.close()
    forked = _Forked(source.id.hex, fork.id.hex)
    if not output.json_output:
        at = f" at event {options.at_event_id}" if options.at_event_id else ""
        output.problem(
            f"forked conversation {forked.source_id}{at} as {forked.fork_id} (go on with it: "
            f"{_resume_command(fork)})"
        )
    return forked


def _move_head(conversation: AnyConversation, event_id: str, output: _Output) -> ExitCode | None:
    """`--resume ID --at EVENT_ID`: HEAD to that event, so the task starts a branch there
    (None: moved; else the exit code)."""
    from ohtui.sdk import RemoteServerError

    try:
        conversation.navigate_to(event_id)
    except RemoteServerError as exc:
        output.problem(f"cannot move conversation {conversation.id.hex} to {event_id}: {exc}")
        return ExitCode.CONFIGURATION
    except ValueError:
        output.problem(_unknown_event(conversation, event_id))
        return ExitCode.USAGE
    return None


def _unknown_event(conversation: AnyConversation, event_id: str) -> str:
    """What to say of an `--at` naming no event of the conversation."""
    return (
        f"conversation {conversation.id.hex} has no event {event_id!r}: --at takes the full "
        'id of one of its events (the "id" of an event line its `-p ... --json` runs printed)'
    )


def _report_mcp_failures(conversation: AnyConversation, output: _Output) -> None:
    """Say on stderr, once each, which MCP servers failed and why (the run goes on)."""
    manager = conversation.agent.mcp
    if manager is None:
        return
    reported: set[tuple[str, str]] = set()

    def changed() -> None:
        for server in manager.servers():
            if server.error is None or (server.name, server.error) in reported:
                continue
            reported.add((server.name, server.error))
            output.problem(f"warning: MCP server '{server.name}' failed: {server.error}")

    manager.add_listener(changed)
    changed()


def _run(conversation: AnyConversation, options: HeadlessOptions, output: _Output) -> int:
    from ohtui.sdk import ConversationExecutionStatus as Status
    from ohtui.sdk import ConversationRunError

    conversation.send_message(options.task)
    rejected_batches = 0
    refused = 0
    while True:
        try:
            _run_interruptibly(conversation)
        except KeyboardInterrupt:
            output.problem(f"interrupted; resume with: {_resume_command(conversation)}")
            return ExitCode.INTERRUPTED
        except ConversationRunError as exc:
            output.problem(str(exc.original_exception))
            return _exit_code_for(exc.original_exception)
        status = conversation.state.execution_status
        if status is not Status.WAITING_FOR_CONFIRMATION:
            break
        if not options.yes:
            rejected_batches += 1
            if rejected_batches > MAX_REJECTED_BATCHES:
                output.problem(
                    "stopped: the agent keeps asking for actions that need approval "
                    "(run with --yes, or with --confirm never, to allow them)."
                )
                return ExitCode.REFUSED
            needing = _needing_approval(conversation)
            for action, reason in needing:
                output.refused(action, reason)
            refused += len(needing)
            conversation.reject_pending_actions(REJECTED, action_ids=[a.id for a, _ in needing])
        # The next run() executes what is still pending: with --yes, that is the approval.
    code = _finish(conversation, output)
    if refused and code == ExitCode.FINISHED:
        output.problem(
            f"{refused} action{'s' if refused != 1 else ''} needing approval "
            f"{'were' if refused != 1 else 'was'} refused, so the task may not be done. "
            "Run again with --yes (or --confirm never) to allow them, or add an allow rule."
        )
        return ExitCode.REFUSED
    return code


def _undo(conversation: AnyConversation, output: _Output, checkpoint_id: str | None = None) -> int:
    """Restore the workspace to before the newest action not undone yet (or to the
    checkpoint named); print the files changed and the checkpoint gone back to (--json:
    the restore event, one object)."""
    from ohtui.sdk import CheckpointError, RemoteConversation, RemoteServerError

    if checkpoint_id is not None:
        from ohtui.sdk.event.checkpoint import find_checkpoint

        if find_checkpoint(conversation.list_checkpoints(), checkpoint_id) is None:
            output.problem(
                f"conversation {conversation.id.hex} has no checkpoint {checkpoint_id!r} (an id "
                "or a prefix of 4+ characters naming only one): --checkpoints lists them"
            )
            return ExitCode.USAGE
        try:
            event = conversation.restore_checkpoint(checkpoint_id)
        except (CheckpointError, RemoteServerError) as exc:
            output.problem(f"cannot restore: {exc}")
            return ExitCode.RUN_ERROR
        return _restored(conversation, event, output)
    try:
        if conversation.undo_checkpoint() is None:
            if isinstance(conversation, RemoteConversation) and not (
                conversation.supports_checkpoints
            ):
                try:
                    conversation.restore_checkpoint()  # raises, saying the server keeps none
                except CheckpointError as exc:
                    output.problem(f"cannot undo: {exc}")
                    return ExitCode.CONFIGURATION
            output.problem(
                f"nothing to undo in conversation {conversation.id.hex}: no action has changed "
                "the workspace, or every one is undone already"
            )
            return ExitCode.NOTHING_TO_UNDO
        event = conversation.restore_checkpoint()
    except (CheckpointError, RemoteServerError) as exc:  # a server that fails: said, too
        output.problem(f"cannot undo: {exc}")
        return ExitCode.RUN_ERROR
    return _restored(conversation, event, output)


def _restored(conversation: AnyConversation, event: CheckpointRestoreEvent, output: _Output) -> int:
    """Say what a restore changed: each file, then the checkpoint and how to take it back."""
    if output.json_output:
        output.json_object(
            {**event.model_dump(mode="json"), "conversation_id": conversation.id.hex}
        )
        return ExitCode.FINISHED
    for change in event.changes:
        output.response(f"{change.status:<9} {change.path}")
    before = f"before `{event.label}`" if event.label else "to an earlier checkpoint"
    count = len(event.changes)
    output.response(
        f"Restored the workspace {before} (checkpoint {event.checkpoint_id[:8]}): {count} "
        f"file{'' if count == 1 else 's'} changed. To take it back: "
        f"{_resume_command(conversation)} --restore {event.undo_checkpoint_id[:8]}"
    )
    return ExitCode.FINISHED


def _list_checkpoints(conversation: AnyConversation, output: _Output) -> int:
    """Print the workspace's checkpoints, newest first: id prefix, time, files, label; the
    one `--undo` restores marked `*` (--json: one object)."""
    from ohtui.sdk import RemoteConversation

    checkpoints = conversation.list_checkpoints()
    undo = conversation.undo_checkpoint()
    undo_id = undo.checkpoint_id if undo is not None else None
    if output.json_output:
        output.json_object(
            {
                "kind": "Checkpoints",
                "conversation_id": conversation.id.hex,
                "undo_checkpoint_id": undo_id,
                "items": [c.model_dump(mode="json") for c in checkpoints],
            }
        )
        return ExitCode.FINISHED
    if not checkpoints:
        keeps = not isinstance(conversation, RemoteConversation) or (
            conversation.supports_checkpoints
        )
        output.problem(
            f"conversation {conversation.id.hex} has no checkpoints"
            + ("" if keeps else ": its server keeps none")
        )
        return ExitCode.FINISHED
    for checkpoint in checkpoints:
        mark = "*" if checkpoint.checkpoint_id == undo_id else " "
        at = checkpoint.timestamp[:19].replace("T", " ")
        output.response(
            f"{mark} {(checkpoint.checkpoint_id or '')[:8]}  {at}  "
            f"{checkpoint.files:>6} files  {checkpoint.label or '(a restore)'}"
        )
    return ExitCode.FINISHED


def _needing_approval(conversation: AnyConversation) -> list[tuple[ActionEvent, str]]:
    """The waiting actions that need approval, each with why (see actions_needing_approval)."""
    from ohtui.opening.safety import actions_needing_approval

    return actions_needing_approval(conversation)


def _action_words(action: ActionEvent) -> str:
    """What the action does, on one line: a command, an edit and its file, or a tool call."""
    from ohtui.sdk.tools.file_editor import FileEditorAction
    from ohtui.sdk.tools.terminal import TerminalAction

    inner = action.action
    if isinstance(inner, TerminalAction):
        text = inner.command
    elif isinstance(inner, FileEditorAction):
        text = f"{inner.command} {inner.path}"
    else:
        text = action.summary or action.tool_name
    line = " ".join(text.split())
    return line if len(line) <= 200 else line[:199] + "…"


def _resume_command(conversation: AnyConversation) -> str:
    """`ohtui --resume ID`, with `--server URL` for a conversation on an agent server."""
    from ohtui.opening.remote import resume_command
    from ohtui.sdk import RemoteConversation

    server = conversation.workspace.host if isinstance(conversation, RemoteConversation) else None
    return resume_command(conversation.id.hex, server)


def _exit_code_for(error: BaseException) -> ExitCode:
    """4 when the provider cannot be used (credentials, reachability, limits); else 1."""
    from ohtui.sdk.llm import (
        LLMAuthenticationError,
        LLMRateLimitError,
        LLMServiceUnavailableError,
        LLMTimeoutError,
    )

    provider = (
        LLMAuthenticationError,
        LLMServiceUnavailableError,
        LLMTimeoutError,
        LLMRateLimitError,
    )
    return ExitCode.LLM_PROVIDER if isinstance(error, provider) else ExitCode.RUN_ERROR


def _finish(conversation: AnyConversation, output: _Output) -> int:
    """The exit code for how the run ended; the final response printed (text mode)."""
    from ohtui.sdk import ConversationErrorEvent, get_agent_final_response
    from ohtui.sdk import ConversationExecutionStatus as Status

    status = conversation.state.execution_status
    events = conversation.state.active_branch()  # what this run said: not another branch
    if status in (Status.FINISHED, Status.IDLE):
        if not output.json_output:
            response = get_agent_final_response(events)
            if response:
                output.response(response)
        return ExitCode.FINISHED
    go_on = f'Continue with: {_resume_command(conversation)} -p "<what to do next>"'
    if status is Status.STUCK:
        output.problem(
            f"stopped: the agent is stuck (it repeats itself without progress). {go_on}, "
            "saying how to get unstuck."
        )
        return ExitCode.STOPPED
    last_error = next(
        (e for e in reversed(events[-20:]) if isinstance(e, ConversationErrorEvent)), None
    )
    if last_error is not None and last_error.code == "MaxIterationsReached":
        output.problem(
            f"stopped: {last_error.detail} {go_on} (OHTUI_MAX_ITERATIONS or [agent] "
            "max_iteration_per_run in config.toml raises the limit)."
        )
        return ExitCode.STOPPED
    output.problem(last_error.detail if last_error else f"the run ended as {status}.")
    return ExitCode.RUN_ERROR


def _run_interruptibly(conversation: AnyConversation) -> None:
    """run() on a thread, so Ctrl+C interrupts the agent instead of tearing the run apart."""
    failure: list[BaseException] = []

    def work() -> None:
        try:
            conversation.run()
        except BaseException as exc:  # noqa: BLE001 - handed back to the main thread
            failure.append(exc)

    worker = threading.Thread(target=work, name="ohtui-headless-run", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.2)
    except KeyboardInterrupt:
        conversation.interrupt()
        worker.join(5)
        raise
    if failure:
        raise failure[0]
