"""Approval rules: the user's standing answers ("always allow git status", "never rm -rf").

A rule names a tool and, for the terminal, a command prefix (whole words), or, for the
file editor, a path glob. Allow rules let matching actions run without asking; deny rules
reject them.

They fail closed. An allow rule covers a command line only when the analyzer resolves
every part of it to literal words and an allow rule covers each part (wrappers such as
`sudo` or `xargs` included), with the program as found on PATH (`ls`, `/usr/bin/ls`; never
`./ls`), and never the program's write or exec options (`find -delete`, `sort -o`; see
`shell/options.py`), nor, for a program in that table, an option the table does not
know: those ask. A deny rule applies wherever its program could run: in
any part, inside `bash -c`, `eval`, substitutions and `find -exec`, in code given to an
interpreter, and in anything the analyzer cannot resolve (`$x` as a program, a parse error).
"""

from __future__ import annotations

import os
import re
import shlex
import uuid
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, model_validator

from ohtui.sdk.mcp.definition import MCPToolAction
from ohtui.sdk.security.confirmation_policy import (
    ConfirmationDecision,
    ConfirmationPolicyBase,
    ConfirmRisky,
)
from ohtui.sdk.security.risk import SecurityRisk

# The shell parser loads when a rule first reads a command, not with the SDK.
if TYPE_CHECKING:
    from ohtui.sdk.event.llm_convertible.action import ActionEvent
    from ohtui.sdk.security.shell import Command, CommandLine

RuleScope = Literal["session", "workspace", "user"]
RuleDecision = Literal["allow", "deny"]
SCOPE_LABELS: dict[str, str] = {
    "session": "this session",
    "workspace": "this workspace",
    "user": "always",
}
TERMINAL = "terminal"
FILE_EDITOR = "file_editor"


class ApprovalRule(BaseModel):
    """One standing decision for actions of a tool (optionally narrowed by prefix or glob)."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:8])
    tool: str = Field(
        min_length=1,
        description="Tool name, or '*' for every tool; an MCP tool also as `mcp:server/tool` "
        "(or `mcp:server/*` for all of a server's tools).",
    )
    command_prefix: str | None = Field(
        default=None, description="Terminal only: the leading words a command part must have."
    )
    path_glob: str | None = Field(
        default=None,
        description="File editor only: '*' stays within a directory, '**' crosses them; "
        "relative globs are relative to the workspace.",
    )
    decision: RuleDecision = "allow"
    scope: RuleScope = "session"
    workspace: str | None = Field(
        default=None, description="The workspace a workspace-scoped rule belongs to."
    )

    @model_validator(mode="after")
    def _consistent(self) -> ApprovalRule:
        if self.command_prefix is not None:
            if not self.command_prefix.strip():
                raise ValueError("command_prefix must not be empty")
            _prefix_words(self.command_prefix)  # raises ValueError when it is not plain words
        if self.path_glob is not None and not self.path_glob.strip():
            raise ValueError("path_glob must not be empty")
        if self.command_prefix and self.path_glob:
            raise ValueError("a rule has a command prefix or a path glob, not both")
        if self.scope == "workspace" and not self.workspace:
            raise ValueError("a workspace-scoped rule needs its workspace")
        return self

    def describe(self) -> str:
        """A one-line human description, e.g. "allow terminal `git status …` (this session)"."""
        target = self.tool if self.tool != "*" else "every tool"
        if self.command_prefix:
            target += f" `{self.command_prefix} …`"
        elif self.path_glob:
            target += f" on {self.path_glob}"
        return f"{self.decision} {target} ({SCOPE_LABELS[self.scope]})"

    def applies_to_tool(self, tool_name: str) -> bool:
        """Whether this rule is about `tool_name` at all."""
        return self.tool in ("*", tool_name)

    def applies_to(self, action: ActionEvent) -> bool:
        """Whether this rule is about the action's tool: by its name, or for an MCP tool as
        `mcp:server/tool` or `mcp:server/*`.

        The name the model calls an MCP tool by (`server_tool`) and its name alone (`add`, as
        tools were called before they were named by server) can belong to more than one
        server's tool (`a_b`'s `c` and `a`'s `b_c` are both `a_b_c`): a rule naming them
        still denies (or asks for) every such tool, and never allows one."""
        mcp = action.action
        if not isinstance(mcp, MCPToolAction):
            return self.applies_to_tool(action.tool_name)
        if self.tool == "*" or self.tool in mcp.rule_names:
            return True
        return self.decision != "allow" and self.tool in (action.tool_name, mcp.tool)

    def covers(self, command: Command) -> bool:
        """Whether this (allow) rule covers one command: literal words, the program on PATH."""
        if self.command_prefix is None:
            return True
        prefix = _prefix_words(self.command_prefix)
        if command.unknown or command.on_path is None or len(command.words) < len(prefix):
            return False
        return command.on_path == _program(prefix[0]) and (
            list(command.words[1 : len(prefix)]) == list(prefix[1:])
        )

    def could_match(self, command: Command) -> bool:
        """Whether this (deny) rule's command could be what `command` runs."""
        if self.command_prefix is None:
            return True
        from ohtui.sdk.security.shell.programs import NON_EXECUTING

        prefix = _prefix_words(self.command_prefix)
        if command.dynamic or _starts_with(command, 0, prefix):
            return True
        if command.name in NON_EXECUTING:
            return False
        # A program this one may run, named in its arguments (`taskset 1 rm x`).
        return any(_starts_with(command, i, prefix) for i in range(1, len(command.words)))

    def could_match_code(self, code: str) -> bool:
        """Whether this (deny) rule's command is named in code another language runs."""
        if self.command_prefix is None:
            return True
        return _code_pattern(self.command_prefix).search(code) is not None

    def matches_path(self, path: str, working_dir: str) -> bool:
        """Whether a file path matches this rule's glob (no glob: any path)."""
        if self.path_glob is None:
            return True
        resolved = resolve_path(path, working_dir)
        glob = os.path.expanduser(self.path_glob)
        if os.path.isabs(glob):
            return _glob_regex(glob).fullmatch(resolved.as_posix()) is not None
        try:
            relative = resolved.relative_to(Path(working_dir)).as_posix()
        except ValueError:
            return False  # relative globs never reach outside the workspace
        return _glob_regex(glob).fullmatch(relative) is not None


class ApprovalRulesPolicy(ConfirmationPolicyBase):
    """Applies approval rules first, then falls back to another policy.

    Deny rules win over allow rules. An allow rule waves an action through only when its
    risk is unknown or at most `allow_up_to` (MEDIUM by default): HIGH risk still goes to
    the fallback, so a rule for `git push` does not silently allow `git push --force`.
    """

    rules: list[ApprovalRule] = Field(default_factory=list)
    fallback: SerializeAsAny[ConfirmationPolicyBase] = Field(default_factory=ConfirmRisky)
    allow_up_to: SecurityRisk = SecurityRisk.MEDIUM

    def should_confirm(self, risk: SecurityRisk = SecurityRisk.UNKNOWN) -> bool:
        """Without an action to match rules against, the fallback decides."""
        return self.fallback.should_confirm(risk)

    def decide(self, action: ActionEvent, working_dir: str) -> ConfirmationDecision:
        """Deny rules, then allow rules, then the fallback policy."""
        rules = [r for r in self.rules if r.applies_to(action)]
        deny = _first_deny(rules, action, working_dir)
        if deny is not None:
            return ConfirmationDecision("deny", f"denied by rule: {deny.describe()}", deny)
        allow, beyond = _covering_allow(rules, action, working_dir)
        if allow is None:
            return self.fallback.decide(action, working_dir)
        if beyond and self.fallback.is_active:
            return ConfirmationDecision(
                "confirm",
                f"rule {allow.describe()} matched, but no rule covers {'; '.join(beyond)}",
                allow,
            )
        risk = action.security_risk
        if not beyond and (risk is SecurityRisk.UNKNOWN or risk <= self.allow_up_to):
            return ConfirmationDecision("allow", f"allowed by rule: {allow.describe()}", allow)
        fallback = self.fallback.decide(action, working_dir)
        if fallback.verdict == "allow":
            return fallback
        return ConfirmationDecision(
            "confirm", f"rule {allow.describe()} matched, but the risk is {risk.value}", allow
        )

    def with_rule(self, rule: ApprovalRule) -> ApprovalRulesPolicy:
        """A copy with `rule` added (replacing one with the same id)."""
        return self.model_copy(update={"rules": [*self.without_rule(rule.id).rules, rule]})

    def without_rule(self, rule_id: str) -> ApprovalRulesPolicy:
        """A copy without the rule of that id."""
        return self.model_copy(update={"rules": [r for r in self.rules if r.id != rule_id]})

    def with_scope(self, scope: RuleScope, rules: Iterable[ApprovalRule]) -> ApprovalRulesPolicy:
        """A copy whose rules of `scope` are replaced by `rules` (e.g. freshly loaded ones)."""
        kept = [r for r in self.rules if r.scope != scope]
        return self.model_copy(update={"rules": [*kept, *(r for r in rules if r.scope == scope)]})

    def rules_in(self, scope: RuleScope) -> list[ApprovalRule]:
        """The rules of one scope."""
        return [r for r in self.rules if r.scope == scope]


def _arguments(action: ActionEvent) -> dict[str, Any]:
    if action.action is None:
        return {}
    return action.action.model_dump(exclude={"kind"})


def _first_deny(
    rules: list[ApprovalRule], action: ActionEvent, working_dir: str
) -> ApprovalRule | None:
    from ohtui.sdk.security.shell import parse_command

    denies = [r for r in rules if r.decision == "deny"]
    if not denies:
        return None
    arguments = _arguments(action)
    if action.tool_name == TERMINAL and isinstance(arguments.get("command"), str):
        line = parse_command(arguments["command"])
        for rule in denies:
            if rule.path_glob is None and _could_run(rule, line):
                return rule
        return None
    return _first_path_rule(denies, arguments.get("path"), working_dir)


def _could_run(rule: ApprovalRule, line: CommandLine) -> bool:
    """Whether the deny rule's command could run anywhere in the line."""
    from ohtui.sdk.security.shell import risky_options

    return (
        bool(line.open_ended)
        or any(rule.could_match(c) for c in line.commands)
        or any(rule.could_match_code(code) for code in line.code)
        # Options that run code carry it in their values (`git -c alias.x='!rm y'`).
        or any(
            risky_options(c) and any(rule.could_match_code(w) for w in c.args)
            for c in line.commands
        )
    )


def _covering_allow(
    rules: list[ApprovalRule], action: ActionEvent, working_dir: str
) -> tuple[ApprovalRule | None, list[str]]:
    """The allow rule (the first one used) covering the whole action, and what the matched
    programs' options do that no rule may cover: options that write or run (`find -delete`)
    and, for a program in the table of read-only behaviour, options it does not know."""
    from ohtui.sdk.security.shell import parse_command, risky_options
    from ohtui.sdk.security.shell.options import in_table, unknown_options

    allows = [r for r in rules if r.decision == "allow"]
    if not allows or action.action is None:
        return None, []
    arguments = _arguments(action)
    if action.tool_name == TERMINAL and isinstance(arguments.get("command"), str):
        line = parse_command(arguments["command"])
        if line.opaque or line.open_ended or not line.commands:
            return None, []
        first: ApprovalRule | None = None
        beyond: list[str] = []
        for command in line.commands:
            rule = next((r for r in allows if r.path_glob is None and r.covers(command)), None)
            if rule is None:
                return None, []
            first = first or rule
            beyond.extend(risky_options(command))
            if in_table(command):
                beyond.extend(f"{w} (not known to be read-only)" for w in unknown_options(command))
        return first, beyond
    return _first_path_rule(allows, arguments.get("path"), working_dir), []


def _first_path_rule(
    rules: list[ApprovalRule], path: object, working_dir: str
) -> ApprovalRule | None:
    """The first rule (without a command prefix) covering a non-terminal action's path."""
    for rule in rules:
        if rule.command_prefix is not None:
            continue
        if rule.path_glob is None or (
            isinstance(path, str) and rule.matches_path(path, working_dir)
        ):
            return rule
    return None


def resolve_path(path: str, working_dir: str) -> Path:
    """Where a tool's path argument points: `~` expanded, relative to the workspace."""
    return Path(os.path.normpath(Path(working_dir) / Path(path).expanduser()))


@lru_cache(maxsize=256)
def _prefix_words(prefix: str) -> tuple[str, ...]:
    """A rule's command prefix as words; ValueError when it is not plain words."""
    lexer = shlex.shlex(prefix, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = tuple(lexer)
    except ValueError as exc:
        raise ValueError(f"command_prefix cannot be read: {exc}") from exc
    operators = [w for w in words if w and set(w) <= set("();<>|&")]
    if operators:
        raise ValueError(f"command_prefix must be plain words, not `{operators[0]}`")
    if not words:
        raise ValueError("command_prefix must not be empty")
    return words


def _program(word: str) -> str:
    """A rule's program: `/usr/bin/ls` is `ls`; other paths stay as written."""
    from ohtui.sdk.security.shell.model import SYSTEM_BIN_DIRS

    directory, _, name = word.rpartition("/")
    return name if directory in SYSTEM_BIN_DIRS else word


def _starts_with(command: Command, start: int, prefix: tuple[str, ...]) -> bool:
    """Whether `command`'s words from `start` could be `prefix`: unknown words could be
    anything, except that an unknown argument is not taken for a program."""
    from ohtui.sdk.security.shell import command_name

    words = command.words
    if start + len(prefix) > len(words):
        return False
    if start in command.unknown:
        return start == 0
    if command_name([words[start]]) != command_name([prefix[0]]):
        return False
    return all(
        i in command.unknown or words[i] == expected
        for i, expected in enumerate(prefix[1:], start + 1)
    )


@lru_cache(maxsize=256)
def _code_pattern(prefix: str) -> re.Pattern[str]:
    """The prefix as it would appear in code: words in order, the program maybe with a path."""
    from ohtui.sdk.security.shell import command_name

    words = _prefix_words(prefix)
    name = re.escape(command_name(list(words)))
    rest = "".join(r"[\s'\",]+" + re.escape(w) for w in words[1:])
    return re.compile(r"(?<![\w.-])(?:[\w.~-]*/)*" + name + rest + r"(?![\w.-])")


@lru_cache(maxsize=256)
def _glob_regex(glob: str) -> re.Pattern[str]:
    """`**` crosses directories, `*` and `?` stay within one; `dir/**` includes `dir`."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("(?:/.*)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out))
