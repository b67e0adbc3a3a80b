"""What a command line would run, as the analyzer reads it.

A package of its own: the reader and the options table (`shell.options`) both build on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
"""The only files a redirection may write and still count as not writing."""
_READS = frozenset({"<", "<<", "<<-", "<<<"})
_DUPLICATES = frozenset({">&", "<&"})
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
SYSTEM_BIN_DIRS = frozenset(
    {"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"}
)
"""Where a program named by an absolute path still counts as the program of that name."""


@dataclass(frozen=True, slots=True)
class Command:
    """One program a command line runs, with its arguments as bash would pass them.

    A word known only at run time (a variable, command output, a file name from a glob
    that may start with `-`) keeps its source text and its index is in `unknown`.
    """

    words: tuple[str, ...]
    unknown: frozenset[int] = frozenset()

    @property
    def program(self) -> str:
        """The program as written (`ls`, `/usr/bin/ls`, `./ls`); "" for an empty command."""
        return self.words[0] if self.words else ""

    @property
    def name(self) -> str:
        """The program's file name (`/bin/rm` -> `rm`), for checks that must not be dodged."""
        return command_name(self.words)

    @property
    def dynamic(self) -> bool:
        """Whether the program itself is only known at run time."""
        return 0 in self.unknown

    @property
    def literal(self) -> bool:
        """Whether every word is known before it runs."""
        return not self.unknown

    @property
    def on_path(self) -> str | None:
        """The program's name when bash finds it on PATH (`ls`, `/usr/bin/ls`), else None.

        `./ls`, `bin/ls` or `/tmp/ls` are other programs that happen to share a name.
        """
        program = self.program
        if self.dynamic or not program:
            return None
        if "/" not in program:
            return program
        directory, _, name = program.rpartition("/")
        return name if directory in SYSTEM_BIN_DIRS else None

    @property
    def args(self) -> tuple[str, ...]:
        """The words after the program."""
        return self.words[1:]


@dataclass(frozen=True, slots=True)
class Redirection:
    """One redirection: its operator, its target, and whether the target is known."""

    operator: str
    target: str
    literal: bool = True

    @property
    def writes(self) -> bool:
        """Whether it may write a file: true unless it reads (`<`, here-docs and strings),
        duplicates or closes a descriptor (`2>&1`, `>&-`), or writes /dev/null, /dev/stdout
        or /dev/stderr. Every other form (`<>`, `>|`, `&>2`, `>&file`) writes."""
        op, target = self.operator, self.target
        if op in _READS or op in (">&-", "<&-"):
            return False
        if op in _DUPLICATES and self.literal and (target.isdigit() or target == "-"):
            return False
        return not (op in _WRITES and self.literal and target in HARMLESS_TARGETS)


@dataclass
class CommandLine:
    """Every program a command line would run, and what the analyzer could not pin down."""

    commands: list[Command] = field(default_factory=list)
    redirections: list[Redirection] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    """Why parts of it cannot be resolved before it runs (eval, `$x` as a program, ...)."""
    unvetted: list[str] = field(default_factory=list)
    """Lesser reasons no allow rule may cover it (run-time values, assignments, writes)."""
    open_ended: list[str] = field(default_factory=list)
    """Why it could run any program at all (so every deny rule applies)."""
    code: list[str] = field(default_factory=list)
    """Code in other languages it runs (`python -c`, remote commands), searched by deny rules."""
    fed_code: list[str] = field(default_factory=list)
    """How it runs code that another command produces (`curl … | sh`, `eval "$(…)"`)."""
    changes_shell: list[str] = field(default_factory=list)
    """Why the line may change the persistent shell's own state for later commands
    (functions, aliases, options, variables that steer programs, `source`, `eval`). An
    allowlist: only programs and builtins known to leave the shell alone (and `cd`, whose
    effect is tracked) keep it empty."""

    @property
    def opaque(self) -> bool:
        """Whether no allow rule may wave it through."""
        return bool(self.unresolved or self.unvetted)

    @property
    def opaque_reasons(self) -> list[str]:
        """Why no allow rule may wave it through."""
        return [*self.unresolved, *self.unvetted]

    @property
    def parts(self) -> list[list[str]]:
        """The words of every command, wrappers and what they run as separate parts."""
        return [list(c.words) for c in self.commands]

    @property
    def writes_files(self) -> list[str]:
        """Files written through redirections."""
        return [r.target for r in self.redirections if r.writes]

    def add(self, other: CommandLine) -> None:
        """Take in what a nested command line (a substitution, `bash -c`, eval) runs."""
        self.commands.extend(other.commands)
        self.redirections.extend(other.redirections)
        self.unresolved.extend(r for r in other.unresolved if r not in self.unresolved)
        self.unvetted.extend(r for r in other.unvetted if r not in self.unvetted)
        self.open_ended.extend(r for r in other.open_ended if r not in self.open_ended)
        self.code.extend(other.code)
        self.fed_code.extend(other.fed_code)
        self.changes_shell.extend(r for r in other.changes_shell if r not in self.changes_shell)

    def change(self, reason: str) -> None:
        """Record a way the line may change the shell for later commands (no rule covers it)."""
        if reason not in self.changes_shell:
            self.changes_shell.append(reason)
        self.not_vetted(reason)

    def resolve_fail(self, reason: str, *, open_ended: bool = False) -> None:
        """Record something that cannot be resolved (and, if so, that it could run anything)."""
        if reason not in self.unresolved:
            self.unresolved.append(reason)
        if open_ended and reason not in self.open_ended:
            self.open_ended.append(reason)

    def feed(self, reason: str) -> None:
        """Record code that comes from another command's output or run-time values."""
        self.resolve_fail(reason, open_ended=True)
        if reason not in self.fed_code:
            self.fed_code.append(reason)

    def not_vetted(self, reason: str) -> None:
        """Record a lesser reason no allow rule may cover this line."""
        if reason not in self.unvetted:
            self.unvetted.append(reason)


def command_name(words: list[str] | tuple[str, ...]) -> str:
    """The file name of a simple command's program (`/bin/rm` -> `rm`)."""
    return words[0].rsplit("/", 1)[-1] if words else ""
