"""What a simple command runs: builtins, wrappers (`sudo`, `env`, `xargs`, `timeout`),
shells and interpreters given code, `find -exec` and `ssh`: the reader's half that knows
programs (`reader` walks the syntax and hands each simple command here)."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod

from ohtui.sdk.security.shell import programs
from ohtui.sdk.security.shell.grammar import (
    Input,
    excerpt,
)
from ohtui.sdk.security.shell.model import Command, CommandLine, command_name
from ohtui.sdk.security.shell.words import (
    has_control,
)

_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?)\+?=(.*)$", re.DOTALL)
_IDENTIFIER = re.compile(r"[A-Za-z_]")


class CommandRunner(ABC):
    """Adds what a simple command runs to `line`, unwrapping wrappers and reading the code
    given to shells and interpreters (`read_nested`)."""

    line: CommandLine

    @abstractmethod
    def read_nested(self, code: str) -> CommandLine:
        """What code a command runs would run, read one shell deeper."""

    @abstractmethod
    def _assign(self, name: str, value: str | None, *, standalone: bool = True) -> None:
        """Record a variable assignment."""

    @abstractmethod
    def _problem(self, problem: str) -> None:
        """Note why the line cannot be read reliably."""

    def run(self, words: list[str], unknown: set[int], stdin: Input | None) -> None:
        """Add a simple command, unwrapping what it runs."""
        if 0 in unknown:
            self.line.commands.append(Command(tuple(words), frozenset(unknown)))
            self.line.resolve_fail(
                f"its program `{excerpt(words[0])}` is only known at run time", open_ended=True
            )
            return
        if has_control(words[0]):
            self.line.commands.append(Command(tuple(words), frozenset(unknown)))
            self.line.resolve_fail(
                f"its program {words[0]!r} holds a NUL or control character "
                "(bash cuts or keeps it where the analyzer cannot follow)",
                open_ended=True,
            )
            return
        name = command_name(words)
        spec = programs.WRAPPERS.get(name)
        if spec is not None and (spec.subcommand is None or words[1:2] == [spec.subcommand]):
            self._wrapper(name, spec, words, unknown, stdin)
            return
        command = Command(tuple(words), frozenset(unknown))
        self.line.commands.append(command)
        args = words[1:]
        self._builtin(name, args)
        if name in programs.EVAL_BUILTINS:
            self.line.resolve_fail("it runs `eval`, which builds a command at run time")
            self._shell_code(" ".join(args), literal=len(unknown) == 0, what="eval")
        elif name in programs.FILE_RUNNERS:
            if 1 in unknown:
                self.line.feed(f"it runs commands another command produces (`{name}`)")
            self.line.resolve_fail(f"it runs the commands in a file (`{name}`)", open_ended=True)
        elif name in programs.OPEN_ENDED_BUILTINS:
            self.line.resolve_fail(programs.OPEN_ENDED_BUILTINS[name], open_ended=True)
        elif name == "hash" and any(a.startswith("-") and "p" in a for a in args):
            self.line.resolve_fail("it points a command name at another program", open_ended=True)
        elif name == "alias":
            self.line.resolve_fail("it defines an alias")
            for arg in args:
                if "=" in arg:
                    self._shell_code(arg.split("=", 1)[1], literal=True, what="alias")
        elif name == "trap":
            self.line.resolve_fail("it sets a trap, which runs a command later")
            action = next((a for a in args if not a.startswith("-")), None)
            if action is not None:
                self._shell_code(action, literal=1 not in unknown, what="trap")
        elif name == "let":
            if any(_IDENTIFIER.search(a) for a in args):
                self.line.resolve_fail(
                    "it does arithmetic on run-time values, which can run commands"
                )
        elif name in programs.ASSIGNING_BUILTINS:
            self._assigning_builtin(name, args)
        elif name in programs.SHELLS:
            self._shell(words, unknown, stdin)
        elif name in programs.STDIN_RUNNERS:
            self._stdin_code(stdin, shell=True, what=name)
        elif name in ("find", "fd", "fdfind"):
            self._find_exec(words, unknown)
        elif name == "ssh":
            self._ssh(words)
        elif name == "parallel":
            self.line.resolve_fail(
                "it runs commands built from its input (`parallel`)", open_ended=True
            )
        elif programs.interpreter(name) is not None:
            self._interpreter(programs.interpreter(name) or name, words, unknown, stdin)

    def _builtin(self, name: str, args: list[str]) -> None:
        """Builtins that evaluate strings, run commands given as strings, or change the shell."""
        if name not in programs.BASH_BUILTINS:
            return
        options = "".join(a[1:] for a in args if a.startswith("-") and a != "--")
        evaluates = (
            (name in ("test", "[") and _test_evaluates(args))
            or (name in ("mapfile", "readarray") and "C" in options)
            or (name in ("compgen", "complete") and set(options) & set("CFW"))
            or (name == "jobs" and "x" in options)
            or (name == "bind" and "x" in options)
            or (name == "wait" and "p" in options)
            or (name == "printf" and args[:1] and args[0].startswith("-v"))
            or (name in ("declare", "typeset", "local", "export", "readonly") and "i" in options)
        )
        if evaluates:
            self.line.resolve_fail(
                f"`{name}` evaluates a string as code or a subscript, which can run commands",
                open_ended=name in ("jobs", "compgen", "complete", "mapfile", "readarray"),
            )
        stateful = name not in programs.STATELESS_BUILTINS or (
            (name == "printf" and args[:1] and args[0].startswith("-v"))
            or (name in ("jobs", "wait") and set(options) & set("xp"))
        )
        if stateful:
            self.line.change(f"it runs `{name}`, which can change the shell for later commands")

    def _wrapper(
        self,
        name: str,
        spec: programs.Wrapper,
        words: list[str],
        unknown: set[int],
        stdin: Input | None,
    ) -> None:
        start = 2 if spec.subcommand else 1
        split = _split_wrapper(name, spec, words, start)
        if isinstance(split, str):
            self.line.commands.append(Command(tuple(words), frozenset(unknown)))
            self.line.resolve_fail(split, open_ended=True)
            return
        index, shell_code, joined = split
        self.line.commands.append(
            Command(tuple(words[:index]), frozenset(i for i in unknown if i < index))
        )
        for word in words[1:index]:
            match = _ASSIGNMENT.match(word)
            if name == "env" and match:
                self._assign(match.group(1), match.group(2))
        if name == "exec":
            self.line.resolve_fail("it uses `exec`, which replaces the shell")
        if name in ("exec", "builtin") or (name == "command" and inner_is_builtin(words, index)):
            self.line.change(f"it runs `{name}`, which can change the shell for later commands")
        if shell_code is not None:
            code_index, code = shell_code
            self._shell_code(code, literal=code_index not in unknown, what=name)
            return
        inner = words[index:]
        inner_unknown = {i - index for i in unknown if i >= index}
        if name == "command" and any(w in ("-v", "-V") for w in words[1:index]):
            return  # `command -v x` only looks x up
        if joined:
            if inner:
                self._shell_code(" ".join(inner), literal=not inner_unknown, what=name)
            elif name in ("sudo",):
                self._stdin_code(stdin, shell=True, what=name)
            return
        if name == "xargs":
            inner, inner_unknown = _xargs_command(words[:index], inner, inner_unknown)
        if inner:
            self.run(inner, inner_unknown, stdin)

    def _shell(self, words: list[str], unknown: set[int], stdin: Input | None) -> None:
        index = 1
        runs_code = False
        while index < len(words):
            word = words[index]
            if word in ("--", "-"):
                index += 1
                break
            if word in programs.SHELL_VALUE_OPTIONS:
                if word in programs.SHELL_RUNS_FILE_OPTIONS:
                    self.line.resolve_fail(
                        f"the shell runs a start-up file ({word})", open_ended=True
                    )
                index += 2
                continue
            if word.startswith("--"):
                index += 1
                continue
            if word[:1] in "-+" and len(word) > 1:
                runs_code = runs_code or (word[0] == "-" and "c" in word[1:])
                index += 1
                continue
            break
        if runs_code:
            if index < len(words):
                self._shell_code(words[index], literal=index not in unknown, what=words[0])
            return
        if index < len(words):
            self.line.resolve_fail(
                f"the shell runs the script `{excerpt(words[index])}`", open_ended=True
            )
            return
        self._stdin_code(stdin, shell=True, what=words[0])

    def _shell_code(self, code: str, *, literal: bool, what: str) -> None:
        if not literal:
            self.line.feed(f"{what} runs a command built at run time")
            return
        self.line.add(self.read_nested(code))

    def _stdin_code(self, stdin: Input | None, *, shell: bool, what: str) -> None:
        if stdin is None:
            return
        if stdin.kind == "pipe":
            self.line.feed(f"{what} runs what another command prints")
        elif stdin.kind == "file":
            self.line.resolve_fail(f"{what} runs code read from a file", open_ended=shell)
        elif not stdin.literal:
            self.line.feed(f"{what} runs code built at run time")
        elif shell:
            self._shell_code(stdin.text, literal=True, what=what)
        else:
            self.line.code.append(stdin.text)

    def _interpreter(
        self, family: str, words: list[str], unknown: set[int], stdin: Input | None
    ) -> None:
        options = programs.INTERPRETER_CODE_OPTIONS.get(family, frozenset())
        index = 1
        while index < len(words):
            word = words[index]
            option = word.split("=", 1)[0]
            if word in options and index + 1 < len(words):
                self._code(words[index + 1], index + 1 not in unknown)
                return
            if option in options and "=" in word:
                self._code(word.split("=", 1)[1], index not in unknown)
                return
            short = next(
                (o for o in options if len(o) == 2 and word.startswith(o) and len(word) > 2), None
            )
            if short is not None:
                self._code(word[2:], index not in unknown)
                return
            if family == "deno" and word == "eval" and index + 1 < len(words):
                self._code(words[index + 1], index + 1 not in unknown)
                return
            if word in ("-m", "-") or not word.startswith("-"):
                break
            index += 1
        if index >= len(words) or words[index] == "-":
            self._stdin_code(stdin, shell=False, what=words[0])

    def _code(self, code: str, literal: bool) -> None:
        if literal:
            self.line.code.append(code)
        else:
            self.line.feed("it runs code built at run time")

    def _assigning_builtin(self, name: str, args: list[str]) -> None:
        names: list[str] = []
        if name == "printf":
            for index, arg in enumerate(args):
                if arg == "-v" and index + 1 < len(args):
                    names.append(args[index + 1])
                elif arg.startswith("-v") and len(arg) > 2:
                    names.append(arg[2:])
        elif name == "getopts":
            names = args[1:2]
        else:
            names = [a for a in args if not a.startswith("-")]
        for variable in names:
            self._assign(variable, None)

    def _find_exec(self, words: list[str], unknown: set[int]) -> None:
        markers = (
            {"-exec", "-execdir", "-ok", "-okdir"}
            if words[0].endswith("find")
            else {"-x", "--exec", "-X", "--exec-batch"}
        )
        index = 0
        while index < len(words):
            if words[index] not in markers:
                index += 1
                continue
            end = next(
                (i for i in range(index + 1, len(words)) if words[i] in (";", "+")), len(words)
            )
            inner = words[index + 1 : end]
            inner_unknown = {i - index - 1 for i in unknown if index < i < end}
            inner_unknown |= {i for i, w in enumerate(inner) if "{}" in w}
            if inner:
                self.run(inner, inner_unknown, None)
            else:
                self._problem(f"`{words[index]}` without a command")
            index = end + 1

    def _ssh(self, words: list[str]) -> None:
        takes_value = set("bcDEeFIiJLlmOopQRSWwB")
        index = 1
        while index < len(words) and words[index].startswith("-"):
            word = words[index]
            index += 2 if len(word) == 2 and word[1] in takes_value else 1
        remote = words[index + 1 :]
        if remote:
            self.line.code.append(" ".join(remote))


def inner_is_builtin(words: list[str], index: int) -> bool:
    """Whether `command` runs a builtin (which may change the shell) rather than a program."""
    return index < len(words) and command_name(words[index:]) in programs.BASH_BUILTINS


_INTEGER = re.compile(r"\s*[-+]?\d+\s*")
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def _test_evaluates(args: list[str]) -> bool:
    """Whether `test`/`[` evaluates a name or subscript: `-v`, or an arithmetic comparison
    with an operand that is not a plain integer."""
    for i, arg in enumerate(args):
        if arg == "-v" and i + 1 < len(args):
            return True
        operands = (args[i - 1], args[i + 1]) if 0 < i < len(args) - 1 else ()
        if arg in _ARITHMETIC_TESTS and not all(_INTEGER.fullmatch(a) for a in operands):
            return True
    return False


def _split_wrapper(
    name: str, spec: programs.Wrapper, words: list[str], start: int
) -> tuple[int, tuple[int, str] | None, bool] | str:
    """(where the wrapped command starts, shell code given by option, joins into a shell),
    or why the wrapper's words cannot be split."""
    for index, word in enumerate(words[start:], start):
        option, has_value, value = word.partition("=")
        if option in spec.shell_options:
            if has_value:
                return len(words), (index, value), False
            if index + 1 < len(words):
                return len(words), (index + 1, words[index + 1]), False
        if len(option) > 2 and option[:2] in spec.shell_options and not option.startswith("--"):
            return len(words), (index, word[2:]), False
    joined = spec.joins_into_shell
    index = start
    while index < len(words):
        word = words[index]
        if word == "--":
            index += 1
            break
        if name == "env" and _ASSIGNMENT.match(word):
            index += 1
            continue
        if not word.startswith("-") or (word == "-" and name not in ("su", "runuser")):
            break
        option = word.split("=", 1)[0]
        if name == "sudo" and word in ("-s", "-i", "--shell", "--login"):
            joined = True
            index += 1
        elif name == "watch" and word in ("-x", "--exec"):
            joined = False
            index += 1
        elif word in spec.takes_value:
            index += 2
        elif (
            option in spec.takes_value
            or option in spec.flags
            or (
                not word.startswith("--")
                and len(word) > 2
                and (word[:2] in spec.takes_value or all("-" + c in spec.flags for c in word[1:]))
            )
            or (name == "nice" and word[1:].isdigit())
        ):
            index += 1
        else:
            return f"`{name}` has an option the analyzer does not know ({word})"
    return min(index + spec.positionals, len(words)), None, joined


def _xargs_command(
    options: list[str], inner: list[str], unknown: set[int]
) -> tuple[list[str], set[int]]:
    """The command xargs runs, its input-dependent words marked unknown."""
    if not inner:
        inner = ["echo"]
    replace = None
    for index, word in enumerate(options):
        if word in ("-I", "--replace") and index + 1 < len(options):
            replace = options[index + 1]
        elif word.startswith("-I") and len(word) > 2:
            replace = word[2:]
        elif word.startswith(("-i", "--replace")):
            replace = word.split("=", 1)[1] if "=" in word else (word[2:] or "{}")
    if replace:
        return inner, unknown | {i for i, w in enumerate(inner) if replace in w}
    return [*inner, "$(xargs input)"], unknown | {len(inner)}
