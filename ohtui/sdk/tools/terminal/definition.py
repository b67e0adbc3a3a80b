"""TerminalTool: the `terminal` tool definition the model sees."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition, ToolExecutor
from ohtui.sdk.tools.terminal.executor import (
    DEFAULT_MAX_OUTPUT_CHARS,
    DEFAULT_TIMEOUT,
    TerminalExecutor,
)
from ohtui.sdk.tools.terminal.schema import TerminalAction, TerminalObservation

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState


def terminal_description(
    timeout: float, max_output_chars: int, no_change_timeout: float | None = None
) -> str:
    """The tool description, stating this tool's limits."""
    quiet = (
        f"* A command that prints nothing new for {no_change_timeout:g} s is stopped too, so "
        "run quiet long jobs in the background with their output redirected.\n"
        if no_change_timeout is not None
        else ""
    )
    return (
        "Run a bash command in a persistent shell in the workspace; stdout and stderr are "
        "returned together, followed by the exit code.\n"
        "* The shell persists for the whole conversation: the working directory, exported "
        "variables and functions carry over between calls. Run one command per call; chain "
        "steps with && or write a multi-line script (heredocs work). Avoid `exit` and "
        "`set -e` at the top level: they end the shell itself (run such scripts with "
        "`bash script.sh` or `bash -c '...'`).\n"
        "* There is no terminal and stdin is /dev/null, so interactive programs (editors, "
        "pagers, REPLs, prompts, `top`) cannot be used. Use non-interactive flags instead "
        "(`apt-get -y`, `git --no-pager`, `npm init -y`).\n"
        f"* A command is killed after {timeout:g} s unless you pass a larger `timeout`. Start "
        "servers and other long-running processes in the background with their output "
        "redirected, e.g. `python app.py > server.log 2>&1 &`, then read the log.\n"
        f"{quiet}"
        f"* Output longer than {max_output_chars:,} characters is cut to its first and last "
        "whole lines; a note between them says which lines are left out and the file that "
        "holds the full output, to read in parts with grep, head, tail or sed -n.\n"
        "* LLM provider keys and ohtui's own settings (OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, "
        "OHTUI_*...) are not in the environment. If a command needs one, ask the user to add "
        "it as a secret; it is then set for the commands that mention it by name.\n"
        "* Commands may run in a sandbox that lets them write only the workspace and /tmp and "
        "keeps them off the network; when the sandbox stops a command, the output says so. "
        "Ask the user if the task needs more.\n"
        "* Set `reset` to true to kill the shell and start a fresh one in the workspace when "
        "it is stuck."
    )


class TerminalTool(ToolDefinition[TerminalAction, TerminalObservation]):
    """The built-in `terminal` tool: bash commands in a persistent shell."""

    @classmethod
    def create(
        cls,
        conv_state: ConversationState | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
        shell: str = "bash",
        no_change_timeout_seconds: float | None = None,
        executor: ToolExecutor[Any, Any] | None = None,
        **params: Any,
    ) -> Sequence[Self]:
        """The terminal for one conversation; bash starts on its first command.

        `no_change_timeout_seconds` stops a command that prints nothing new for that long.
        `executor` runs the commands instead of a new TerminalExecutor: one executor may be
        shared by several tools. A TerminalExecutor given here gets the conversation's
        secrets and sandbox unless it was made with its own.
        """
        if conv_state is None:
            raise ValueError(
                "TerminalTool.create() needs the conversation's state (conv_state): its shell "
                "runs in that workspace. Or name it in the agent's tools: Tool(name='terminal')."
            )
        if params:
            raise ValueError(
                f"terminal takes only {', '.join(TERMINAL_PARAMS)}, got {sorted(params)}"
            )
        if executor is None:
            executor = TerminalExecutor(
                working_dir=conv_state.workspace.working_dir,
                output_dir=conv_state.env_observation_persistence_dir,
                timeout=timeout,
                max_output_chars=max_output_chars,
                shell=shell,
                secrets=getattr(conv_state, "secret_registry", None),
                sandbox=lambda: getattr(conv_state, "sandbox", None),
                no_change_timeout_seconds=no_change_timeout_seconds,
            )
        elif isinstance(executor, TerminalExecutor):
            executor.attach(conv_state)
        if isinstance(executor, TerminalExecutor):
            timeout, max_output_chars = executor.timeout, executor.max_output_chars
            no_change_timeout_seconds = executor.no_change_timeout_seconds
        return [
            cls(
                description=terminal_description(
                    timeout, max_output_chars, no_change_timeout_seconds
                ),
                action_type=TerminalAction,
                observation_type=TerminalObservation,
                annotations=ToolAnnotations(
                    title="terminal",
                    readOnlyHint=False,
                    destructiveHint=True,
                    idempotentHint=False,
                    openWorldHint=True,
                ),
                executor=executor,
            )
        ]


TERMINAL_PARAMS = ("timeout", "max_output_chars", "shell", "no_change_timeout_seconds", "executor")
"""The parameters `TerminalTool.create` takes besides the conversation's state."""
