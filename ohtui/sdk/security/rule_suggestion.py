"""The "always allow" rules to suggest for an action: the smallest that cover it and are useful.

A terminal command gets one rule per part it runs (`cd build && npm test`: `cd`, `npm test`),
each the program plus its subcommand where the program has them (`git status`), or none at
all when any part cannot be covered usefully: a destructive or privileged program (`rm`,
`sudo`), an interpreter without a script or module (`python -c …`), a program not on PATH,
or a line no allow rule may cover (it writes files, runs unknown code). A rule that covers
only some parts would never allow the action again, so it is not offered.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ohtui.sdk.mcp.definition import MCPToolAction
from ohtui.sdk.security.approval_rules import (
    FILE_EDITOR,
    TERMINAL,
    ApprovalRule,
    RuleScope,
    resolve_path,
)
from ohtui.sdk.security.risk import SecurityRisk
from ohtui.sdk.security.shell import Command, parse_command
from ohtui.sdk.security.shell.programs import SHELLS

if TYPE_CHECKING:
    from ohtui.sdk.event.llm_convertible.action import ActionEvent

SUBCOMMAND_TOOLS = frozenset(
    {
        "git",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "cargo",
        "go",
        "docker",
        "kubectl",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "pdm",
        "hatch",
        "make",
        "just",
        "gh",
        "brew",
        "apt",
        "apt-get",
        "dotnet",
        "mvn",
        "gradle",
        "terraform",
        "helm",
        "conda",
        "rustup",
        "deno",
        "composer",
        "bundle",
    }
)
"""Commands whose second word picks what they do: a rule covers that subcommand only."""


def _each(names: str, why: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), why)


NEVER_SUGGESTED: dict[str, str] = {
    **_each(
        "rm rmdir unlink shred srm wipefs blkdiscard dd truncate fdisk sfdisk parted mkswap "
        "chmod chown chgrp chattr kill killall pkill reboot shutdown halt poweroff crontab",
        "deletes or changes what it cannot undo",
    ),
    **_each("sudo doas su pkexec runuser sg chroot", "runs commands with other rights"),
    **_each("eval exec source . xargs watch", "runs whatever it is given"),
}
"""Programs no suggested rule names, and why (a user may still type such a rule)."""
INTERPRETERS = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|node|perl|ruby|php|lua|Rscript)$")
_SUBCOMMAND = re.compile(r"[a-z][a-z0-9_:-]*")


@dataclass(frozen=True)
class RuleSuggestion:
    """The suggested rules, or none and why."""

    rules: tuple[ApprovalRule, ...] = ()
    reason: str = ""
    """Why nothing is suggested ("" when there are rules)."""


def suggest_rules(
    action: ActionEvent, working_dir: str, scope: RuleScope = "session"
) -> RuleSuggestion:
    """The allow rules a user most likely means by "always allow this"."""
    arguments = action.action.model_dump(exclude={"kind"}) if action.action is not None else {}
    workspace = working_dir if scope == "workspace" else None
    if action.tool_name == TERMINAL and isinstance(arguments.get("command"), str):
        high = action.security_risk is SecurityRisk.HIGH
        prefixes = command_prefixes(arguments["command"], allow_broad=not high)
        if isinstance(prefixes, str):
            return RuleSuggestion(reason=prefixes)
        rules = tuple(
            ApprovalRule(tool=TERMINAL, command_prefix=p, scope=scope, workspace=workspace)
            for p in prefixes
        )
        return RuleSuggestion(rules)
    if action.tool_name == FILE_EDITOR and isinstance(arguments.get("path"), str):
        path = resolve_path(arguments["path"], working_dir)
        try:
            relative = path.relative_to(working_dir).parent.as_posix()
            glob = "**" if relative == "." else f"{relative}/**"
        except ValueError:
            glob = path.as_posix()  # outside the workspace: exactly this file
        rule = ApprovalRule(tool=FILE_EDITOR, path_glob=glob, scope=scope, workspace=workspace)
        return RuleSuggestion((rule,))
    if isinstance(action.action, MCPToolAction):  # this server's tool, not any of that name
        name = action.action.rule_names[0]
        return RuleSuggestion((ApprovalRule(tool=name, scope=scope, workspace=workspace),))
    return RuleSuggestion((ApprovalRule(tool=action.tool_name, scope=scope, workspace=workspace),))


def command_prefixes(command: str, *, allow_broad: bool = True) -> list[str] | str:
    """One prefix per distinct part of the command line, or why there is none.

    `allow_broad=False` (a HIGH-risk action) drops prefixes that are a program alone.
    """
    line = parse_command(command)
    if line.open_ended or line.opaque:
        reasons = "; ".join(dict.fromkeys([*line.open_ended, *line.opaque_reasons]))
        return f"no rule can cover this command ({reasons})"
    if not line.commands:
        return "the command runs no program"
    prefixes: list[str] = []
    for part in line.commands:
        words = _prefix(part)
        if isinstance(words, str):
            return words
        if len(words) == 1 and not allow_broad:
            return f"a HIGH-risk action gets no rule for all of `{words[0]}`"
        prefix = shlex.join(words)
        if prefix not in prefixes:
            prefixes.append(prefix)
    return prefixes


def _prefix(command: Command) -> list[str] | str:
    """The smallest useful prefix covering one part, or why there is none."""
    name = command.on_path
    if name is None:
        return f"`{command.program}` is not a program on PATH, so no rule can cover it"
    if name in NEVER_SUGGESTED:
        return f"`{name}` {NEVER_SUGGESTED[name]}"
    words = list(command.words)
    words[0] = name
    if name in SUBCOMMAND_TOOLS and len(words) > 1:
        if not _SUBCOMMAND.fullmatch(words[1]):
            return f"`{name}` is followed by `{words[1]}`, not a subcommand a rule could name"
        return words[:2]  # a subcommand: `git status`, `npm test`
    if name in SHELLS or INTERPRETERS.match(name):
        return _script_prefix(words)
    # A wrapper (`timeout`, `env`) too: what it runs is a part of its own, with its own rule.
    return [name]


def _script_prefix(words: list[str]) -> list[str] | str:
    """An interpreter with its module or script (`python -m pytest`, `bash build.sh`)."""
    if len(words) >= 3 and words[1] == "-m":
        return words[:3]
    if len(words) >= 2 and not words[1].startswith("-"):
        return words[:2]
    return f"`{words[0]}` without a script or module runs any code"
