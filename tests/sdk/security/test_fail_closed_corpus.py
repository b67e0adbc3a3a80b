"""Issue 25's bar: "read-only" is proven from an allowlist, so new spellings fail closed.

Every try in `fail_closed_corpus` writes, runs or evaluates something in a spelling the
old deny list did not foresee. None may be proven read-only, and allow rules for the
programs it names must not wave it through. Everyday reading commands must stay both.
"""

from __future__ import annotations

import pytest
from fail_closed_corpus import CLASSES, EVERYDAY
from terminal_actions import terminal_call

from ohtui.sdk import (
    AlwaysConfirm,
    ApprovalRule,
    ApprovalRulesPolicy,
)
from ohtui.sdk.security.shell import is_read_only, parse_command

WS = "/work/project"
_ALLOWED_PROGRAMS = (
    "ls cat head tail wc grep rg jq diff du cut echo printf test [ awk gawk mawk nawk sed tar "
    "ssh less find fd git sort uniq xargs tree xxd file date hostname yq shuf iconv man env "
    "sudo timeout read declare typeset local export readonly mapfile readarray compgen "
    "complete jobs wait trap bind enable fc unset getopts alias unalias set shopt hash "
    "builtin command let stat df pwd which basename realpath tr nl ps uname sha256sum"
)
ALLOWED_PROGRAMS = _ALLOWED_PROGRAMS.split()


POLICY = ApprovalRulesPolicy(
    rules=[ApprovalRule(tool="terminal", command_prefix=p) for p in ALLOWED_PROGRAMS],
    fallback=AlwaysConfirm(),
)


def proven_read_only(command: str) -> bool:
    """Whether the analyzer can show the line only reads (what rates it LOW)."""
    line = parse_command(command)
    return (
        bool(line.commands)
        and not line.unresolved
        and not line.writes_files
        and all(map(is_read_only, line.commands))
    )


def allowed(command: str) -> bool:
    """Whether allow rules for every program in the line wave it through."""
    return POLICY.decide(terminal_call(command), WS).verdict == "allow"


def got_through(command: str) -> bool:
    """Whether a try counts as read-only or is covered by allow rules."""
    return proven_read_only(command) or allowed(command)


TRIES = [(name, c) for name, tries in CLASSES.items() for c in tries]


def test_corpus_is_large_enough() -> None:
    assert len(TRIES) >= 200
    assert len(EVERYDAY) >= 60
    assert len(set(TRIES)) == len(TRIES)


@pytest.mark.parametrize(("kind", "command"), TRIES)
def test_a_try_is_not_proven_read_only(kind: str, command: str) -> None:
    assert not proven_read_only(command), kind


@pytest.mark.parametrize(("kind", "command"), TRIES)
def test_a_try_is_not_covered_by_allow_rules(kind: str, command: str) -> None:
    decision = POLICY.decide(terminal_call(command), WS)
    assert decision.verdict != "allow", (kind, decision.reason)


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_commands_stay_proven_read_only(command: str) -> None:
    line = parse_command(command)
    assert proven_read_only(command), (line.unresolved, line.writes_files, line.commands)


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_commands_stay_covered_by_their_allow_rules(command: str) -> None:
    decision = POLICY.decide(terminal_call(command), WS)
    assert decision.verdict == "allow", decision.reason


@pytest.mark.parametrize(
    "command",
    [
        "ls() { id; }",
        "alias ls=id",
        "export PAGER=id",
        "PATH=.:$PATH",
        "LESSOPEN='|id %s'",
        "declare -p x",
        "set -k",
        "shopt -s expand_aliases",
        "hash -r",
        "trap 'id' EXIT",
        "read x <<< y",
        "printf -v x %s 1",
        "mapfile -t a < f",
        "unset x",
        "source ./env.sh",
        "eval ls",
        "let x=1",
        "exec 3>f",
        "builtin cd /",
        "for PATH in /tmp; do :; done",
    ],
)
def test_lines_that_change_the_shell_say_so(command: str) -> None:
    assert parse_command(command).changes_shell


@pytest.mark.parametrize(
    "command",
    ["ls -la", "cd src && git status", "x=1; echo $x", "echo hi | grep h", "test -f x", "pwd"],
)
def test_lines_that_leave_the_shell_alone(command: str) -> None:
    assert not parse_command(command).changes_shell


def test_unknown_options_names_what_the_table_does_not_know() -> None:
    from ohtui.sdk.security.shell.options import unknown_options

    (command,) = parse_command("ls --zzz -la").commands
    assert unknown_options(command) == ["--zzz"]
    (command,) = parse_command("sort --out=x f").commands
    assert unknown_options(command) == []
    (command,) = parse_command("grep --co x f").commands  # --count, --color, --colour
    assert unknown_options(command) == ["--co"]


def test_checking_the_corpus_stays_fast() -> None:
    import time

    from ohtui.sdk.security.shell.reader import read_command_line

    commands = [c for _, c in TRIES] + list(EVERYDAY)
    read_command_line("ls")  # loads the grammar
    start = time.perf_counter()
    for command in commands:
        all(map(is_read_only, read_command_line(command).commands))
    assert (time.perf_counter() - start) / len(commands) < 0.005


# Tried after the fix, in the same classes, written without looking at how it works.
TRIED_AFTER = [
    "sed -n '1p;w out' notes.txt",
    "awk 'BEGIN { while ((\"id\" | getline l) > 0) print l }'",
    "git --no-pager log --ext-diff -p",
    "find . -newer a.txt -fprint out.txt",
    "sort --compress-prog=sh -S 1 data.csv",
    "ls >| listing.txt",
    "cat notes.txt 3<>out.txt",
    "printf -vx '%s' y",
    "rg --pre=./x.sh pattern",
    "git diff --outp=patch.diff",
    "xxd notes.txt out.bin",
    "env -S 'rm notes.txt'",
    "tree -o listing.txt",
    "grep -r pattern --exclude-from=<(id) .",
    "$'\\143at' notes.txt > /etc/x",
]


@pytest.mark.parametrize("command", TRIED_AFTER)
def test_a_later_try_is_neither_read_only_nor_allowed(command: str) -> None:
    assert not proven_read_only(command)
    assert POLICY.decide(terminal_call(command), WS).verdict != "allow"


@pytest.mark.parametrize(
    "command",
    [
        "function cat { id; }",
        "ls () ( id )",
        "builtin alias ls=id",
        "command alias ls=id",
        "exec 3>f",
        "complete -C id ls",
        "enable -n echo",
        "typeset -fx f",
        "PROMPT_COMMAND=id",
        "IFS=/",
        "readonly PATH",
        "$(printf alias) ls=id",
    ],
)
def test_a_later_way_to_prepare_the_shell_is_seen(command: str) -> None:
    line = parse_command(command)
    assert line.changes_shell or line.unresolved
