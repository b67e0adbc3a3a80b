"""A small bash reader for safety decisions: the simple commands a command line runs.

It is not a shell. It reads quoting, escapes, comments, operators, redirections and
heredocs well enough to answer two questions: which simple commands would run (wrappers
such as `sudo`, `env`, `xargs`, `timeout` or `bash -c` unwrapped into separate parts), and
whether anything it cannot vet is present (command substitution, writes to files, loops).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_OPERATORS = sorted(
    [
        "&&",
        "||",
        ";;",
        "|&",
        ">>",
        "<<<",
        "<<-",
        "<<",
        ">&",
        "<&",
        "&>>",
        "&>",
        ">|",
        "|",
        "&",
        ";",
        "<",
        ">",
        "(",
        ")",
        "\n",
    ],
    key=len,
    reverse=True,
)
_SEPARATORS = {"&&", "||", ";;", "|&", "|", "&", ";", "(", ")", "\n"}
_REDIRECTIONS = {">>", ">&", "<&", "&>>", "&>", ">|", "<", ">", "<<<"}
_HEREDOCS = {"<<", "<<-"}
_HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr"}
_LEADING_KEYWORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time"}
_CLOSING_KEYWORDS = {"fi", "done", "esac", "}"}
_OPAQUE_KEYWORDS = {"for", "case", "select", "function", "coproc"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")

# Wrappers run another command: (options that take a value, number of leading positionals).
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "env": (frozenset({"-u", "-C", "-S", "--unset", "--chdir"}), 0),
    "xargs": (
        frozenset(
            {
                "-n",
                "-I",
                "-P",
                "-d",
                "-a",
                "-E",
                "-L",
                "-s",
                "-i",
                "--max-args",
                "--max-procs",
                "--delimiter",
                "--arg-file",
                "--replace",
            }
        ),
        0,
    ),
    "nohup": (frozenset(), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "time": (frozenset({"-f", "-o"}), 0),
    "watch": (frozenset({"-n", "-d", "--interval"}), 0),
    "strace": (frozenset({"-e", "-o", "-p", "-s"}), 0),
    "unbuffer": (frozenset(), 0),
    "chroot": (frozenset(), 1),
    "caffeinate": (frozenset(), 0),
}
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "fish"}
_EXEC_FLAGS = {"-exec", "-execdir", "-ok", "-okdir"}


class ShellSyntaxError(ValueError):
    """The command line could not be read (e.g. an unclosed quote)."""


@dataclass(frozen=True, slots=True)
class Token:
    """A word or an operator of a command line."""

    text: str
    operator: bool = False


@dataclass
class CommandLine:
    """What a command line would run, as far as it can be told without running it."""

    parts: list[list[str]] = field(default_factory=list)
    """Every simple command, wrappers and what they wrap as separate parts."""
    redirections: list[tuple[str, str]] = field(default_factory=list)
    """(operator, target) of every redirection."""
    opaque_reasons: list[str] = field(default_factory=list)
    """Why parts of it cannot be vetted; empty when every part is visible."""
    substitutions: list[str] = field(default_factory=list)
    """The text inside `$(...)` and backticks, for best-effort deny checks."""

    @property
    def opaque(self) -> bool:
        """Whether something in it cannot be vetted, so no allow rule may wave it through."""
        return bool(self.opaque_reasons)

    @property
    def writes_files(self) -> list[str]:
        """Files written by output redirections (not /dev/null or fd duplication)."""
        return [
            target
            for op, target in self.redirections
            if op not in {"<", "<<<"}
            and target not in _HARMLESS_TARGETS
            and not (op in (">&", "<&") and (target.isdigit() or target == "-"))
        ]


def tokenize(command: str) -> list[Token]:
    """Split a command line into words and operators; heredoc bodies are skipped."""
    tokens: list[Token] = []
    word: list[str] = []
    in_word = False
    pending_heredocs: list[str] = []
    i, n = 0, len(command)

    def flush() -> None:
        nonlocal in_word
        if in_word:
            text = "".join(word)
            tokens.append(Token(text))
            if pending_heredocs and pending_heredocs[-1] == "":
                pending_heredocs[-1] = text  # the word after `<<` is its delimiter
            word.clear()
            in_word = False

    while i < n:
        c = command[i]
        if c in " \t":
            flush()
            i += 1
        elif c == "\\" and i + 1 < n:
            if command[i + 1] != "\n":  # a backslash-newline joins lines
                word.append(command[i + 1])
                in_word = True
            i += 2
        elif c == "#" and not in_word:
            while i < n and command[i] != "\n":
                i += 1
        elif c == "'":
            end = command.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError("unclosed single quote")
            word.append(command[i + 1 : end])
            in_word = True
            i = end + 1
        elif c == '"':
            i += 1
            while i < n and command[i] != '"':
                if command[i] == "\\" and i + 1 < n and command[i + 1] in '"\\$`\n':
                    i += 1
                word.append(command[i])
                i += 1
            if i >= n:
                raise ShellSyntaxError("unclosed double quote")
            in_word = True
            i += 1
        else:
            op = next((o for o in _OPERATORS if command.startswith(o, i)), None)
            if op is None:
                word.append(c)
                in_word = True
                i += 1
                continue
            if op[0] in "<>" and in_word and "".join(word).isdigit():
                word.clear()  # "2>" is a redirection of fd 2: the number belongs to it
                in_word = False
            flush()
            tokens.append(Token(op, operator=True))
            i += len(op)
            if op in _HEREDOCS:
                pending_heredocs.append("")  # its delimiter is the next word
            elif op == "\n" and any(pending_heredocs):
                i = _skip_heredoc_bodies(command, i, pending_heredocs)
                pending_heredocs.clear()
    flush()
    return tokens


def _skip_heredoc_bodies(command: str, i: int, delimiters: list[str]) -> int:
    lines = command[i:].split("\n")
    consumed = 0
    index = 0
    for delimiter in delimiters:
        while index < len(lines):
            line = lines[index]
            consumed += len(line) + 1
            index += 1
            if line.strip() == delimiter:
                break
    return min(len(command), i + consumed)


def parse_command(command: str) -> CommandLine:
    """Read a command line into its simple commands, redirections and unvettable parts."""
    result = CommandLine()
    for inner in _substitutions(command):
        result.substitutions.append(inner)
    if result.substitutions or "`" in command:
        result.opaque_reasons.append("it runs command substitutions ($(...) or backticks)")
    if re.search(r"[<>]\(", command):
        result.opaque_reasons.append("it uses process substitution")
    try:
        tokens = tokenize(command)
    except ShellSyntaxError as exc:
        result.opaque_reasons.append(f"it cannot be read ({exc})")
        return result
    words: list[str] = []
    expecting_target: str | None = None
    for token in [*tokens, Token("\n", operator=True)]:
        if expecting_target is not None:
            if not token.operator:
                result.redirections.append((expecting_target, token.text))
                expecting_target = None
                continue
            expecting_target = None
        if not token.operator:
            words.append(token.text)
        elif token.text in _REDIRECTIONS or token.text in _HEREDOCS:
            expecting_target = token.text
        elif token.text in _SEPARATORS:
            _add_simple_command(words, result)
            words = []
    for op, target in result.redirections:
        if op in _HEREDOCS:
            continue
        if target in result.writes_files:
            result.opaque_reasons.append(f"it writes to {target}")
    return result


def _add_simple_command(words: list[str], result: CommandLine) -> None:
    while words and words[0] in _LEADING_KEYWORDS:
        words = words[1:]
    while words and _ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words or words[0] in _CLOSING_KEYWORDS:
        return
    if words[0] in _OPAQUE_KEYWORDS:
        result.opaque_reasons.append(f"it uses `{words[0]}`, which is not vetted part by part")
        result.parts.append(words)
        return
    _unwrap(words, result, depth=0)


def _unwrap(words: list[str], result: CommandLine, depth: int) -> None:
    """Add `words` as parts, splitting wrappers from the commands they run."""
    if depth > 8 or not words:
        return
    name = command_name(words)
    script_flag = next(
        (i for i, w in enumerate(words[1:], 1) if re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", w)), None
    )
    if name in _SHELLS and script_flag is not None:  # bash -c, bash -lc, sh -ec ...
        index = script_flag
        result.parts.append(words[: index + 1])
        if index + 1 < len(words):
            inner = parse_command(words[index + 1])
            result.parts.extend(inner.parts)
            result.redirections.extend(inner.redirections)
            result.opaque_reasons.extend(inner.opaque_reasons)
            result.substitutions.extend(inner.substitutions)
        return
    if name in ("find", "fd") and any(w in _EXEC_FLAGS or w in ("-x", "--exec") for w in words):
        start = next(i for i, w in enumerate(words) if w in _EXEC_FLAGS or w in ("-x", "--exec"))
        end = next((i for i in range(start + 1, len(words)) if words[i] in (";", "+")), len(words))
        result.parts.append(words[: start + 1])
        _unwrap(words[start + 1 : end], result, depth + 1)
        return
    wrapper = _WRAPPERS.get(name)
    if wrapper is None:
        result.parts.append(words)
        return
    takes_value, positionals = wrapper
    index = 1
    while index < len(words):
        word = words[index]
        if word == "--":
            index += 1
            break
        if name == "env" and _ASSIGNMENT.match(word):
            index += 1
        elif word.startswith("-") and word != "-":
            index += 2 if word in takes_value else 1
        else:
            break
    index += positionals
    result.parts.append(words[: min(index, len(words))])
    _unwrap(words[index:], result, depth + 1)


def command_name(words: list[str]) -> str:
    """The command a simple command runs, without its directory (`/bin/rm` -> `rm`)."""
    return words[0].rsplit("/", 1)[-1] if words else ""


def _substitutions(command: str) -> list[str]:
    """The bodies of `$(...)` (not `$((...))` arithmetic) and of backtick pairs."""
    found: list[str] = []
    i = 0
    while True:
        start = command.find("$(", i)
        if start < 0:
            break
        if command.startswith("$((", start):
            i = start + 3
            continue
        depth, j = 1, start + 2
        while j < len(command) and depth:
            depth += {"(": 1, ")": -1}.get(command[j], 0)
            j += 1
        found.append(command[start + 2 : j - 1])
        i = j
    found.extend(re.findall(r"`([^`]*)`", command))
    return found
