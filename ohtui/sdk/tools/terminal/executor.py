"""TerminalExecutor: runs terminal actions in the conversation's bash session."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ohtui.sdk.tool.context import running_action_id
from ohtui.sdk.tool.tool import ToolExecutor
from ohtui.sdk.tools.terminal.integrity import ShellIntegrity, ShellView, line_problem
from ohtui.sdk.tools.terminal.output import (
    CapturedOutput,
    OutputCapture,
    format_size,
    output_file_name,
)
from ohtui.sdk.tools.terminal.schema import TerminalAction, TerminalObservation
from ohtui.sdk.tools.terminal.session import BashSession, RunResult, SessionClosedError

if TYPE_CHECKING:
    from collections.abc import Callable

    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
    from ohtui.sdk.conversation.secret_registry import SecretRegistry
    from ohtui.sdk.conversation.state import ConversationState
    from ohtui.sdk.sandbox import Sandbox

DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_OUTPUT_CHARS = 30_000
CLOSED_MESSAGE = "The terminal is closed (the conversation is shutting down); no command was run."


class TerminalExecutor(ToolExecutor[TerminalAction, TerminalObservation]):
    """Runs commands one at a time in one persistent bash, started on the first command.

    Outputs too long or binary to show are saved under `output_dir`, or under a private
    temporary directory (removed on close) when the conversation is not persisted.
    """

    def __init__(
        self,
        *,
        working_dir: str,
        output_dir: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
        shell: str = "bash",
        secrets: SecretRegistry | None = None,
        sandbox: Callable[[], Sandbox | None] | None = None,
        no_change_timeout_seconds: float | None = None,
    ) -> None:
        """`secrets`: exported to the commands that name them, masked in what they print.
        `sandbox`: the current sandbox, asked before each command (it may change).
        `no_change_timeout_seconds`: a command that prints nothing new for that long is
        stopped, as on timeout (None: only the timeout stops it)."""
        if timeout <= 0:
            raise ValueError(f"terminal timeout must be positive, got {timeout}")
        if no_change_timeout_seconds is not None and not no_change_timeout_seconds > 0:
            raise ValueError(
                "no_change_timeout_seconds must be a positive number of seconds (or None), "
                f"got {no_change_timeout_seconds!r}"
            )
        self.no_change_timeout_seconds = no_change_timeout_seconds
        if max_output_chars < 100:
            raise ValueError(f"max_output_chars must be at least 100, got {max_output_chars}")
        self.working_dir = working_dir
        self.timeout = timeout
        self.max_output_chars = max_output_chars
        self._output_dir = output_dir
        self._private_dir: str | None = None
        self._files = itertools.count(1)
        self._files_lock = threading.Lock()
        self._shell = shell
        self._sandbox_of = sandbox or (lambda: None)
        self._sandbox_given = sandbox is not None
        self._session = BashSession(
            shell=shell, working_dir=working_dir, sandbox=self._sandbox_of()
        )
        self._running: BashSession | None = None  # the session running a command, if any
        self._secrets = secrets
        # Set when bash died or was killed, so the next command says its state was reset.
        self._shell_lost = False
        self._layout: tuple[tuple[int, int] | None, ...] = ()  # its sandbox's, at its start
        self._integrity = ShellIntegrity()

    def attach(self, conv_state: ConversationState) -> None:
        """Give a terminal made outside a conversation (e.g. shared by several tools) what
        the conversation's own terminal has: its secrets, its sandbox, and where long
        outputs are saved. What was given at creation is kept."""
        if self._secrets is None:
            self._secrets = getattr(conv_state, "secret_registry", None)
        if self._output_dir is None:
            self._output_dir = conv_state.env_observation_persistence_dir
        if not self._sandbox_given:
            self._sandbox_of = lambda: getattr(conv_state, "sandbox", None)
            self._sandbox_given = True
            if not self._session.started:
                self._session = BashSession(
                    shell=self._shell, working_dir=self.working_dir, sandbox=self._sandbox_of()
                )

    @property
    def session(self) -> BashSession:
        """The bash session commands run in."""
        return self._session

    def __call__(
        self, action: TerminalAction, conversation: LocalConversation | None = None
    ) -> TerminalObservation:
        """Run the action's command (or reset the shell) and describe the outcome."""
        if self._session.closed:
            return self._error(action, CLOSED_MESSAGE)
        if action.reset:
            return self._reset(action)
        if not action.command.strip():
            return self._error(
                action,
                "No command given: pass a bash command in `command`, or set `reset` to true "
                "to restart the shell.",
            )
        notes = self._follow_sandbox()
        outside = (
            conversation is not None
            and self._session.sandbox is not None
            and conversation.state.runs_outside_sandbox(running_action_id.get())
        )
        session = (
            BashSession(shell=self._shell, working_dir=self._session.working_dir)
            if outside
            else self._session
        )
        if outside:
            notes.append(
                "[The user approved this command to run outside the sandbox: it ran in a fresh, "
                f"unconfined shell in {session.working_dir}, without the sandboxed shell's "
                "exported variables. The next command runs in the sandbox again.]"
            )
        timeout = action.timeout or self.timeout
        capture = OutputCapture(self.max_output_chars, self._open_output_file)
        cwd_before = session.working_dir
        env = self._secrets.get_secrets_as_env_vars(action.command) if self._secrets else {}
        self._running = session
        try:
            result = session.run(
                action.command, timeout, capture.feed, env, self.no_change_timeout_seconds
            )
        except SessionClosedError:
            return self._error(action, CLOSED_MESSAGE)
        except OSError as exc:
            return self._error(action, f"Could not start the shell in {self.working_dir}: {exc}")
        finally:
            self._running = None
            if outside:
                session.close()
        if not outside:
            self._integrity.record(
                (session, session.generation),
                action.command,
                stopped=result.interrupted or result.timed_out or result.closed,
            )
        secrets = self._secrets if self._secrets is not None and self._secrets.has_values else None
        output = capture.finish(secrets.mask_fragment if secrets else None)
        if secrets is not None and output.full_output_path is not None:
            mask_file(Path(output.full_output_path), secrets)
        if not outside:
            notes += blocked_by_sandbox(self._session.sandbox, result, output.text)
        return self._observe(action.command, timeout, result, output, cwd_before, notes)

    def vouch(self, command: str) -> str | None:
        """None when the live shell would run exactly what the analyzer reads in `command`:
        no earlier command changed this bash, none left a process running, every program
        resolves to a file commands cannot have written, and git reads only harmless
        settings. Else why not, in words. Starts no process; call while no command runs."""
        from ohtui.sdk.sandbox.bwrap import TEMP_ROOTS
        from ohtui.sdk.security.shell import parse_command

        session = self._session
        if session.started:
            preparation = self._integrity.preparation((session, session.generation))
            if preparation is not None:
                return preparation.describe()
            if session.background():
                return "a process an earlier command started is still running"
        unsafe = [self.working_dir, *TEMP_ROOTS]
        unsafe += [os.path.dirname(self._output_dir)] if self._output_dir else []
        unsafe += [self._private_dir] if self._private_dir else []
        for sandbox in (session.sandbox, self._sandbox_of()):
            unsafe += sandbox.writable if sandbox is not None and sandbox.active else ()
        env = session.environment
        if self._secrets is not None:
            env = {**env, **self._secrets.get_secrets_as_env_vars(command)}
        view = ShellView(
            env,
            session.working_dir if session.started else self.working_dir,
            tuple(dict.fromkeys(os.path.realpath(p) for p in unsafe)),
        )
        return line_problem(parse_command(command), view)

    def _follow_sandbox(self) -> list[str]:
        """Restart the shell in the conversation's current sandbox if it changed, or if what
        its mounts were made from did (a repository or a hidden path appeared, or was made
        again): what the new shell sees is covered and protected as the sandbox says."""
        current = self._sandbox_of()
        current = current if current is not None and current.active else None
        layout = current.layout() if current is not None else ()
        if current == self._session.sandbox:
            if layout == self._layout or not self._session.started:
                self._layout = layout
                return []
            appeared = self._layout[:1] == (None,) and layout[:1] != (None,)
            self._layout = layout
            old, self._session = (
                self._session,
                BashSession(shell=self._shell, working_dir=self.working_dir, sandbox=current),
            )
            old.close()
            what = (
                "A git repository appeared in the workspace: this command runs in a new shell, "
                "where the sandbox keeps the repository's configuration and hooks read-only"
                if appeared
                else "Files the sandbox hides or protects changed on disk: this command runs "
                "in a new shell, where they are covered again"
            )
            return [
                f"[{what}, started in {self.working_dir}; the working directory and exported "
                "variables were reset.]"
            ]
        self._layout = layout
        old, self._session = (
            self._session,
            BashSession(shell=self._shell, working_dir=self.working_dir, sandbox=current),
        )
        old.close()
        where = f"in the sandbox ({current.config.describe()})" if current else "without a sandbox"
        return [
            f"[The sandbox changed: this command runs in a new shell {where}, started in "
            f"{self.working_dir}; the working directory and exported variables were reset.]"
        ]

    def interrupt(self) -> None:
        """Stop the running command line; the blocked call returns with `interrupted`."""
        (self._running or self._session).interrupt()

    def close(self) -> None:
        """Kill the shell and everything it started; remove the private output directory."""
        running = self._running
        if running is not None:
            running.close()
        self._session.close()
        with self._files_lock:
            private, self._private_dir = self._private_dir, None
        if private is not None:
            shutil.rmtree(private, ignore_errors=True)

    def _reset(self, action: TerminalAction) -> TerminalObservation:
        try:
            self._session.restart()
        except SessionClosedError:
            return self._error(action, CLOSED_MESSAGE)
        except OSError as exc:
            return self._error(action, f"Could not restart the shell in {self.working_dir}: {exc}")
        self._shell_lost = False
        text = (
            f"The terminal was reset: a new shell started in {self.working_dir}. The working "
            "directory and exported variables were reset, and processes the old shell started "
            "were killed."
        )
        if action.command.strip():
            text += " The command was not run; send it again without `reset`."
        return TerminalObservation.from_text(
            text, command=action.command, working_dir=self.working_dir
        )

    def _observe(
        self,
        command: str,
        timeout: float,
        result: RunResult,
        output: CapturedOutput,
        cwd_before: str,
        notes: list[str] | None = None,
    ) -> TerminalObservation:
        lines: list[str] = list(notes or [])
        if result.new_shell and self._shell_lost:
            lines.append(
                f"[A new shell was started in {self.working_dir} because the previous one "
                "ended: the working directory and exported variables were reset.]"
            )
        self._shell_lost = result.shell_exited or result.shell_killed
        body = self._body(output)
        if body:
            lines.append(body)
        lines.extend(self._status(result, timeout))
        if result.working_dir != cwd_before and not result.closed:
            lines.append(f"[cwd: {result.working_dir}]")
        failed = result.exit_code != 0 or result.timed_out or result.interrupted
        return TerminalObservation.from_text(
            "\n".join(lines),
            is_error=failed or result.closed,
            command=command,
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            interrupted=result.interrupted,
            truncated=output.truncated,
            full_output_path=output.full_output_path,
            working_dir=result.working_dir,
            timeout=timeout,
        )

    def _body(self, output: CapturedOutput) -> str:
        if output.binary:
            size = format_size(output.total_bytes)
            if output.full_output_path is None:
                where = f"it could not be saved: {output.save_error}"
            elif output.saved_bytes < output.total_bytes:
                where = (
                    f"its first {format_size(output.saved_bytes)} were saved to "
                    f"{output.full_output_path}"
                )
            else:
                where = f"it was saved to {output.full_output_path}"
            return (
                f"[The command printed binary output ({size}), not shown; {where}. "
                "Inspect it with tools such as file, xxd or od.]"
            )
        return output.text.removesuffix("\n")

    def _status(self, result: RunResult, timeout: float) -> list[str]:
        home = self.working_dir
        if result.closed:
            return ["[The terminal was closed while the command ran, and the command was killed.]"]
        stopped = result.interrupted or result.timed_out
        if result.shell_exited and not stopped:
            code = "an unknown code" if result.exit_code is None else f"code {result.exit_code}"
            return [
                f"[The shell exited with {code}. The next command runs in a new shell in "
                f"{home}: the working directory and exported variables will be reset.]"
            ]
        lines: list[str] = []
        if result.interrupted:
            lines.append(
                "[The user interrupted the command. It was stopped: every process it started "
                "was killed, and the rest of the command line did not run.]"
            )
        elif result.idle:
            lines.append(
                f"[The command printed nothing new for {self.no_change_timeout_seconds:g} s "
                "and was stopped, with every process it started; the rest of the command line "
                "did not run. This shell has no terminal and its stdin is /dev/null, so "
                "programs waiting for input (REPLs, prompts, pagers) cannot be answered: pass "
                "the input in the command (e.g. `python3 -c '...'`, a heredoc, `yes |`), or "
                "run long quiet jobs in the background with their output redirected.]"
            )
        elif result.timed_out:
            lines.append(
                f"[The command timed out after {timeout:g} s and was killed, with every "
                "process it started; the rest of the command line did not run. Run long jobs "
                "in the background with their output redirected (e.g. `make > build.log 2>&1 "
                "&`) and check the log later, or pass a larger `timeout`.]"
            )
        else:
            code = "unknown" if result.exit_code is None else str(result.exit_code)
            lines.append(f"[exit code {code}]")
        reset = (
            f"The next command runs in a new shell in {home}: the working directory and "
            "exported variables will be reset."
        )
        if result.shell_exited:
            lines.append(
                f"[The shell exited as the command was stopped (e.g. under `set -e`). {reset}]"
            )
        if result.shell_killed:
            lines.append(
                "[The command ignored the stop while running inside the shell itself, so the "
                f"shell had to be killed too. {reset}]"
            )
        return lines

    def _error(self, action: TerminalAction, message: str) -> TerminalObservation:
        return TerminalObservation.from_text(
            message,
            is_error=True,
            command=action.command,
            working_dir=self._session.working_dir,
        )

    def _open_output_file(self, binary: bool) -> tuple[Path, BinaryIO]:
        """Create a new file for a command's full output (called from the reader thread)."""
        directory = Path(self._output_dir or self._ensure_private_dir())
        directory.mkdir(parents=True, exist_ok=True)
        while True:
            with self._files_lock:
                path = directory / output_file_name(next(self._files), binary)
            try:
                return path, path.open("xb")
            except FileExistsError:  # another process wrote the same name; try the next
                continue

    def _ensure_private_dir(self) -> str:
        with self._files_lock:
            if self._private_dir is None:
                self._private_dir = tempfile.mkdtemp(prefix="ohtui-terminal-")
            return self._private_dir


_SANDBOX_ERRORS = re.compile(
    r"Read-only file system|Network is unreachable|Could not resolve host|"
    r"Temporary failure in name resolution|Name or service not known|"
    r"No address associated with hostname|getaddrinfo|Failed to establish a new connection|"
    r"unable to access '|Could not connect to|Connection refused"
)


def blocked_by_sandbox(sandbox: Sandbox | None, result: RunResult, output: str) -> list[str]:
    """A note for the model when a failed command looks stopped by the sandbox."""
    if sandbox is None or result.exit_code in (0, None) or not _SANDBOX_ERRORS.search(output):
        return []
    config = sandbox.config
    writable = ", ".join(sandbox.writable) or "nothing"
    network = "" if config.network else " and cannot reach the network"
    return [
        f"[sandbox: this command ran in the sandbox ({config.describe()}): it may write only "
        f"{writable} and /tmp{network}. The error above looks like the sandbox stopping it. "
        "If the task needs more, ask the user: they can approve the command to run outside "
        "the sandbox, or change the sandbox mode with /sandbox.]"
    ]


def mask_file(path: Path, secrets: SecretRegistry) -> None:
    """Mask every known secret value, plain or encoded, in a saved output file (in place,
    atomically)."""
    try:
        data = path.read_bytes()
    except OSError:
        return
    # surrogateescape carries bytes that are not UTF-8 through unchanged.
    text = data.decode("utf-8", "surrogateescape")
    masked = secrets.mask_secrets_in_output(text).encode("utf-8", "surrogateescape")
    if masked != data:
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_bytes(masked)
        tmp.replace(path)
