"""What an entry of the table is (`Options`), what a command's words were found to do
(`Findings`), and the generic scan of a program's options against its entry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ohtui.sdk.security.shell.model import Command


@dataclass
class Findings:
    """What a command's words do beyond reading (`risky`) and what the table does not know."""

    risky: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Options:
    """What one program's options are and do (see the module docstring)."""

    read_only: bool = True
    flags: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()
    writes: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    cluster: bool = True
    numeric: bool = False
    any_option: bool = False
    enumerated: bool = True
    exact: bool = False
    """For entries not enumerated: options are whole words (`find -delete`)."""
    discards: frozenset[str] = frozenset()
    """Write options that take a value and write nothing when it is a discard target
    (`curl -o /dev/null`, `-o -`): see `DISCARDED_OUTPUTS`."""
    check: Callable[[Command], list[str]] | None = field(default=None, compare=False)
    """Extra risks read from the operands (`uniq in out` writes `out`)."""
    parse: Callable[[Command], Findings] | None = field(default=None, compare=False)
    """A program-specific reader replacing the option scan."""


def opts(
    flags: str = "",
    values: str = "",
    writes: str = "",
    runs: str = "",
    *,
    short: str = "",
    short_values: str = "",
    **kwargs: object,
) -> Options:
    """An entry from space-separated option lists; `short`/`short_values` are letters."""
    return Options(
        flags=frozenset(flags.split()) | {"-" + c for c in short},
        values=frozenset(values.split()) | {"-" + c for c in short_values},
        writes=tuple(writes.split()),
        runs=tuple(runs.split()),
        **kwargs,  # type: ignore[arg-type]
    )


def long_match(name: str, longs: frozenset[str]) -> str | None:
    """The long option `name` spells: itself, or the one option it is a unique prefix of."""
    if name in longs:
        return name
    matches = [o for o in longs if o.startswith(name)]
    return matches[0] if len(matches) == 1 else None


def scan(command: Command, spec: Options, words: tuple[str, ...] | None = None) -> Findings:
    """Read options GNU-style (clusters, abbreviations, `=` values) against the entry."""
    found = Findings()
    risky = set(spec.writes) | set(spec.runs)
    known = spec.flags | spec.values | risky
    longs = frozenset(o for o in known if o.startswith("--"))
    args = command.args if words is None else words
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            break
        if not word.startswith("-") or word == "-":
            continue
        if word.startswith("--"):
            name, eq, _ = word.partition("=")
            match = long_match(name, longs)
            if match is None:
                found.unknown.append(word)
            elif match in spec.discards and _discarded(
                word.partition("=")[2] if eq else _at(args, i)
            ):
                i += not eq
            elif match in risky:
                found.risky.append(f"{word} ({what(spec, match)})")
            elif match in spec.values and not eq:
                i += 1
            continue
        if spec.numeric and word[1:].isdigit():
            continue
        if not spec.cluster:
            option = word if word in known else word[:2]
            if option in risky:
                found.risky.append(f"{word} ({what(spec, option)})")
            elif word in spec.flags or word in spec.values:
                i += word in spec.values
            elif not (option in spec.values and len(word) > 2):
                found.unknown.append(word)
            continue
        for j, letter in enumerate(word[1:], 1):
            option = "-" + letter
            if option in spec.discards and _discarded(word[j + 1 :] or _at(args, i)):
                i += j == len(word) - 1
                break
            if option in risky:
                found.risky.append(f"{word} ({what(spec, option)})")
                break
            if option in spec.values:
                i += j == len(word) - 1
                break
            if option not in spec.flags:
                found.unknown.append(word)
                break
    return found


DISCARDED_OUTPUTS = frozenset({"-", "/dev/null", "/dev/stdout", "/dev/stderr"})
"""Where output goes without writing a file: standard output (`-o -`) or a discard device,
spelled exactly (`/dev/null/../x`, `/dev/nullx` and `$OUT` are files; a word known only at
run time keeps its source text, so it never equals one of these)."""


def _at(args: tuple[str, ...], index: int) -> str:
    return args[index] if index < len(args) else ""


def _discarded(value: str) -> bool:
    return value in DISCARDED_OUTPUTS


def what(spec: Options, option: str) -> str:
    return "writes files" if option in spec.writes else "runs other programs"


def operand_words(command: Command, value_options: frozenset[str] = frozenset()) -> list[str]:
    """The words that are not options (after `--`, everything)."""
    found: list[str] = []
    words = iter(command.args)
    for word in words:
        if word == "--":
            found.extend(words)
            break
        if word.startswith("-") and word != "-":
            if word in value_options:
                next(words, None)
            continue
        found.append(word)
    return found


def second_operand_writes(value_options: str) -> Callable[[Command], list[str]]:
    """A check for programs whose second operand is a file they write (`uniq in out`)."""
    takes_value = frozenset(value_options.split())

    def check(command: Command) -> list[str]:
        operands = operand_words(command, takes_value)
        return [f"{operands[1]} (the output file)"] if len(operands) > 1 else []

    return check


def any_operand_writes(command: Command) -> list[str]:
    operands = operand_words(command)
    return [f"{operands[0]} (sets it)"] if operands else []


def matching(
    command: Command,
    options: tuple[str, ...],
    what: str,
    exact: bool = False,
    discards: frozenset[str] = frozenset(),
) -> list[str]:
    """The words of `command` that spell one of `options`, less those that only send output
    to a discard target (`discards`: `-o /dev/null`, `--output=-`)."""
    if not options:
        return []
    found: list[str] = []
    longs = [o for o in options if o.startswith("--")]
    shorts = {o[1] for o in options if not o.startswith("--") and len(o) == 2}
    args = command.args
    for index, word in enumerate(args):
        if word == "--" and not exact:
            break
        name, eq, value = word.partition("=")
        following = _at(args, index + 1)
        if exact:
            hit = name in options
        elif word.startswith("--"):
            spelled = (
                ([name] if name in longs else [o for o in longs if o.startswith(name)])
                if len(word) > 2
                else []
            )
            hit = bool(spelled) and not (
                all(o in discards for o in spelled) and _discarded(value if eq else following)
            )
        else:
            letters = [j for j, c in enumerate(word[1:], 1) if c in shorts]
            hit = word.startswith("-") and (name in options or bool(letters))
            if hit and letters and "-" + word[letters[0]] in discards:
                hit = not _discarded(word[letters[0] + 1 :] or following)
        if hit:
            found.append(f"{word} ({what})")
    return found
