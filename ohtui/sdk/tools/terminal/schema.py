"""TerminalAction and TerminalObservation: the terminal tool's arguments and results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from ohtui.sdk.tool.schema import Action, Observation

if TYPE_CHECKING:
    from rich.text import Text


class TerminalAction(Action):
    """A bash command to run in the conversation's persistent shell."""

    command: str = Field(
        description=(
            "The bash command to run. It may span several lines and use heredocs, pipes, "
            "&& and ;. It runs in the current shell, so `cd` and `export` persist. Ignored "
            "(may be empty) when `reset` is true."
        )
    )
    timeout: float | None = Field(
        default=None,
        gt=0,
        description=(
            "Seconds before the command is killed. Omit it for the default; raise it for "
            "builds or test suites known to be slow."
        ),
    )
    reset: bool = Field(
        default=False,
        description=(
            "Kill the shell and everything it started, and start a fresh one in the "
            "workspace (cwd and exported variables are lost). Use it when the shell is stuck."
        ),
    )

    @property
    def visualize(self) -> Text:
        """`$ command`, or the reset request."""
        from rich.text import Text

        if self.reset:
            return Text("reset the terminal", style="bold yellow")
        text = Text("$ ", style="bold green")
        text.append(self.command)
        return text


class TerminalObservation(Observation):
    """What a terminal command printed and how it ended; `content` is what the model sees."""

    command: str = ""
    exit_code: int | None = None
    """The command's exit status (bash's own when it exited); None when it was killed."""
    timed_out: bool = False
    interrupted: bool = False
    truncated: bool = False
    """The output shown is the head and tail of a longer (or binary) output."""
    full_output_path: str | None = None
    """The file holding the whole output, when it was too long or binary to show."""
    working_dir: str = ""
    """The shell's cwd after the command."""
    timeout: float | None = None
    """The time limit the command ran under, in seconds."""

    @property
    def visualize(self) -> Text:
        """`$ command`, the output, and a coloured status line."""
        from rich.text import Text

        output, status_lines = split_status(self.text)
        text = Text()
        if self.command:
            text.append("$ ", style="bold green")
            text.append(self.command.rstrip("\n") + "\n", style="bold")
        if output:
            text.append(output + "\n")
        notes = [line for line in status_lines if not line.startswith("[exit code ")]
        for note in notes:
            text.append(note + "\n", style="dim")
        text.append(self.status, style="red" if self.is_error else "green")
        return text

    @property
    def status(self) -> str:
        """A short status: `exit 0`, `timed out after 30 s`, `interrupted`..."""
        if self.timed_out:
            limit = f" after {self.timeout:g} s" if self.timeout is not None else ""
            return f"timed out{limit}"
        if self.interrupted:
            return "interrupted"
        if self.exit_code is not None:
            return f"exit {self.exit_code}"
        return "error" if self.is_error else "done"


def split_status(text: str) -> tuple[str, list[str]]:
    """Split observation text into the output and the `[...]` status lines ending it."""
    lines = text.split("\n")
    end = len(lines)
    while end > 0 and lines[end - 1].startswith("[") and lines[end - 1].endswith("]"):
        end -= 1
    return "\n".join(lines[:end]), lines[end:]
