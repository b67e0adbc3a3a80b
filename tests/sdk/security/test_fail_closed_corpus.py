"""Issue 25's bar: "read-only" is proven from an allowlist, so new spellings fail closed.

Every try in `fail_closed_corpus` writes, runs or evaluates something in a spelling the
old deny list did not foresee. None may be proven read-only, and allow rules for the
programs it names must not wave it through. Everyday reading commands must stay both.
"""

from __future__ import annotations

import pytest
from fail_closed_corpus import CLASSES, EVERYDAY

from ohtui.sdk import (
    ActionEvent,
    AlwaysConfirm,
    ApprovalRule,
    ApprovalRulesPolicy,
    MessageToolCall,
    SecurityRisk,
)
from ohtui.sdk.security.shell import is_read_only, parse_command
from ohtui.sdk.tools.terminal import TerminalAction

WS = "/work/project"
_ALLOWED_PROGRAMS = (
    "ls cat head tail wc grep rg jq diff du cut echo printf test [ awk gawk mawk nawk sed tar "
    "ssh less find fd git sort uniq xargs tree xxd file date hostname yq shuf iconv man env "
    "sudo timeout read declare typeset local export readonly mapfile readarray compgen "
    "complete jobs wait trap bind enable fc unset getopts alias unalias set shopt hash "
    "builtin command let stat df pwd which basename realpath tr nl ps uname sha256sum"
)
ALLOWED_PROGRAMS = _ALLOWED_PROGRAMS.split()


def terminal(command: str) -> ActionEvent:
    return ActionEvent(
        action=TerminalAction(command=command),
        tool_name="terminal",
        tool_call_id="c1",
        tool_call=MessageToolCall(id="c1", name="terminal", arguments="{}"),
        llm_response_id="r1",
        security_risk=SecurityRisk.LOW,
    )


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
    return POLICY.decide(terminal(command), WS).verdict == "allow"


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
    decision = POLICY.decide(terminal(command), WS)
    assert decision.verdict != "allow", (kind, decision.reason)


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_commands_stay_proven_read_only(command: str) -> None:
    line = parse_command(command)
    assert proven_read_only(command), (line.unresolved, line.writes_files, line.commands)


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_commands_stay_covered_by_their_allow_rules(command: str) -> None:
    decision = POLICY.decide(terminal(command), WS)
    assert decision.verdict == "allow", decision.reason
