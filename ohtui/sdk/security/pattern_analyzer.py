"""PatternSecurityAnalyzer: named rules and signatures that recognise harmful actions.

Every tool's call is read (see `action_text`): signatures find destructive commands, code
execution and download-and-run in what the call will do, and prompt injection anywhere,
the model's own words included. ohtui's terminal and file editor are read more closely:
commands by the shell analyzer's rules (which know the workspace), with the signatures left
for what it cannot read; file paths by the path rules, file contents being data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from ohtui.sdk.mcp.definition import MCPToolAction
from ohtui.sdk.security.action_text import ActionText, action_text, normalize_text
from ohtui.sdk.security.analyzer import _FROZEN, _RANK, RiskAssessment, SecurityAnalyzerBase
from ohtui.sdk.security.approval_rules import resolve_path
from ohtui.sdk.security.command_rules import (
    RULES,
    SECRET_PATH,
    SENSITIVE_WRITE_PATH,
    is_outside,
)
from ohtui.sdk.security.risk import SecurityRisk
from ohtui.sdk.security.shell import CommandLine, is_read_only, only_reads, parse_command
from ohtui.sdk.security.shell_scan import scan_shell_command
from ohtui.sdk.security.undo import CONVERSATION_ONLY, FILE_EDITORS, written_paths

if TYPE_CHECKING:
    from ohtui.sdk.event.llm_convertible.action import ActionEvent

Detector = tuple[str, str, str]
"""(regular expression, what a match means, stable detector id); matched ignoring case."""

# Stable detector ids: reasons, logs and custom lists refer to them; never rename one.
DET_EXEC_DESTRUCT_RM_RF = "exec.destruct.rm_rf"
DET_EXEC_DESTRUCT_SUDO_RM = "exec.destruct.sudo_rm"
DET_EXEC_DESTRUCT_MKFS = "exec.destruct.mkfs"
DET_EXEC_DESTRUCT_DD = "exec.destruct.dd_raw_disk"
DET_EXEC_CODE_EVAL = "exec.code.eval_call"
DET_EXEC_CODE_EXEC = "exec.code.exec_call"
DET_EXEC_CODE_OS_SYSTEM = "exec.code.os_system"
DET_EXEC_CODE_SUBPROCESS = "exec.code.subprocess"
DET_EXEC_NET_CURL_EXEC = "exec.net.curl_pipe_exec"
DET_EXEC_NET_WGET_EXEC = "exec.net.wget_pipe_exec"
DET_EXEC_NET_CURL = "exec.net.curl"
DET_EXEC_NET_WGET = "exec.net.wget"
DET_INJECT_OVERRIDE = "inject.override"
DET_INJECT_MODE_SWITCH = "inject.mode_switch"
DET_INJECT_IDENTITY = "inject.identity"

# Every repetition is bounded and no alternation sits between unbounded wildcards, so no
# text, however hostile, makes a match slow.
_OPTION = r"\s+-{1,2}\w[\w-]*"
_RUNS_FETCHED = r"[^|;&\n]{0,200}\|\s*(?:sudo\s+)?(?:(?:ba|z|da|k)?sh|python[0-9.]*|perl|ruby)\b"

DEFAULT_HIGH_PATTERNS: list[Detector] = [
    (
        rf"\brm(?=(?:{_OPTION}){{0,8}}?\s+(?:-\w*r\w*|--recursive)(?:\s|$))"
        rf"(?=(?:{_OPTION}){{0,8}}?\s+(?:-\w*f\w*|--force)(?:\s|$))",
        "deletes recursively and by force",
        DET_EXEC_DESTRUCT_RM_RF,
    ),
    (
        r"\bsudo(?:\s+-\S*(?:\s+[^\s-]\S*)?){0,3}\s+rm\b",
        "deletes as the superuser",
        DET_EXEC_DESTRUCT_SUDO_RM,
    ),
    (r"\bmkfs(?:\.\w+|\s+-)", "formats a file system", DET_EXEC_DESTRUCT_MKFS),
    (r"\bdd\b[^;&|\n]{0,120}\bof=/dev/", "writes to a raw device", DET_EXEC_DESTRUCT_DD),
    (r"\beval\s*\(", "evaluates code built at run time", DET_EXEC_CODE_EVAL),
    (r"\bexec\s*\(", "executes code built at run time", DET_EXEC_CODE_EXEC),
    (
        r"\bos\.(?:system|popen|exec\w*|spawn\w*)\s*\(",
        "runs a command through the os module",
        DET_EXEC_CODE_OS_SYSTEM,
    ),
    (
        r"\bsubprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)"
        r"\s*\(",
        "starts a process",
        DET_EXEC_CODE_SUBPROCESS,
    ),
    (rf"\bcurl\b{_RUNS_FETCHED}", "runs what curl downloads", DET_EXEC_NET_CURL_EXEC),
    (rf"\bwget\b{_RUNS_FETCHED}", "runs what wget downloads", DET_EXEC_NET_WGET_EXEC),
]
DEFAULT_MEDIUM_PATTERNS: list[Detector] = [
    (r"\bcurl\b[^;&|\n]{0,100}\bhttps?://", "fetches a URL with curl", DET_EXEC_NET_CURL),
    (r"\bwget\b[^;&|\n]{0,100}\bhttps?://", "downloads a URL with wget", DET_EXEC_NET_WGET),
]
DEFAULT_INJECTION_HIGH_PATTERNS: list[Detector] = [
    (
        r"\b(?:ignore|disregard|forget|override|bypass|skip)\s+(?:all\s+|any\s+|the\s+)?"
        r"(?:previous|prior|above|earlier|preceding)\s+"
        r"(?:instructions?|prompts?|rules?|directives?|guidelines?)\b",
        "tries to override the agent's instructions (prompt injection)",
        DET_INJECT_OVERRIDE,
    ),
]
DEFAULT_INJECTION_MEDIUM_PATTERNS: list[Detector] = [
    (
        r"\byou\s+are\s+now\s+(?:in\s+)?(?:\w+\s+){0,2}mode\b",
        "tries to switch the agent into another mode (prompt injection)",
        DET_INJECT_MODE_SWITCH,
    ),
    (
        r"\bpretend\s+(?:that\s+)?(?:you\s+are|you're|to\s+be)\s+(?:an?\s+)?"
        r"(?:different|another|new)\b",
        "tries to give the agent another identity (prompt injection)",
        DET_INJECT_IDENTITY,
    ),
]


@dataclass(frozen=True, slots=True)
class _Finding:
    risk: SecurityRisk
    description: str
    rule: str


class PatternSecurityAnalyzer(SecurityAnalyzerBase):
    """Rates any tool's call with named rules and signatures; says which fired.

    LOW means every reading vouched for the action; UNKNOWN that a terminal command runs a
    program no rule knows, or that something could not be read in full (combine with
    LLMSecurityAnalyzer in an EnsembleSecurityAnalyzer to rate those).
    """

    model_config = _FROZEN

    workspace: str | None = None
    high_patterns: list[Detector] = Field(default_factory=lambda: list(DEFAULT_HIGH_PATTERNS))
    """HIGH when they match what the call will do."""
    medium_patterns: list[Detector] = Field(default_factory=lambda: list(DEFAULT_MEDIUM_PATTERNS))
    """MEDIUM when they match what the call will do."""
    injection_high_patterns: list[Detector] = Field(
        default_factory=lambda: list(DEFAULT_INJECTION_HIGH_PATTERNS)
    )
    """HIGH when they match anything, the model's own words included."""
    injection_medium_patterns: list[Detector] = Field(
        default_factory=lambda: list(DEFAULT_INJECTION_MEDIUM_PATTERNS)
    )
    """MEDIUM when they match anything, the model's own words included."""
    undoable: bool = Field(default=False, exclude=True)
    """The action is confined and undoable: the sandbox keeps its writes in the workspace,
    without network, and a checkpoint is taken right before it runs. Set per action (see
    `with_undo`), never saved."""

    @field_validator(
        "high_patterns",
        "medium_patterns",
        "injection_high_patterns",
        "injection_medium_patterns",
    )
    @classmethod
    def _compiles(cls, detectors: list[Detector]) -> list[Detector]:
        for pattern, _, detector_id in detectors:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"detector {detector_id}: {pattern!r} is not a valid regular expression "
                    f"({exc}); fix or remove it"
                ) from exc
        return detectors

    @property
    def name(self) -> str:
        """Shown as "pattern rules"."""
        return "pattern rules"

    def security_risk(self, action: ActionEvent) -> SecurityRisk:
        """The highest risk of the rules and signatures that fire."""
        return self._assess(action).risk

    def with_workspace(self, working_dir: str) -> PatternSecurityAnalyzer:
        """This analyzer judging paths against `working_dir`."""
        return self if self.workspace else self.model_copy(update={"workspace": working_dir})

    def with_undo(self, undoable: bool) -> PatternSecurityAnalyzer:
        """This analyzer for an action that is (or is not) confined and undoable."""
        return self if self.undoable == undoable else self.model_copy(update={"undoable": undoable})

    def _assess(self, action: ActionEvent) -> RiskAssessment:
        text = action_text(action)
        everything = normalize_text(" ".join((*text.executable, *text.commentary)))
        findings = [
            *_matches(self.injection_high_patterns, everything, SecurityRisk.HIGH),
            *_matches(self.injection_medium_patterns, everything, SecurityRisk.MEDIUM),
            *self._tool_findings(action, text),
        ]
        if text.truncated:
            findings.append(_Finding(SecurityRisk.UNKNOWN, "too long to check in full", "too-long"))
        return _verdict(findings, self.name)

    def _tool_findings(self, action: ActionEvent, text: ActionText) -> list[_Finding]:
        arguments: dict[str, Any] = (
            action.action.model_dump(exclude={"kind"}) if action.action is not None else {}
        )
        command, path = arguments.get("command"), arguments.get("path")
        if action.tool_name == "terminal" and isinstance(command, str):
            return self._terminal(command)
        if action.tool_name in FILE_EDITORS and isinstance(path, str):
            return self._edit(str(command or "view"), path)
        written = written_paths(action.tool_name, arguments)
        if written:
            return [finding for each in written for finding in self._edit("write", each)]
        if action.tool_name in CONVERSATION_ONLY and action.action is not None:
            return [_Finding(SecurityRisk.LOW, "changes nothing outside the conversation", "")]
        if isinstance(action.action, MCPToolAction):
            # What a server's tool does is its own: no reading vouches for it, and no
            # checkpoint undoes what it does elsewhere. (The agent rates a tool its server
            # marks read-only LOW.)
            signatures = self._signatures([normalize_text(" ".join(text.executable))])
            if action.action.read_only:
                return [*signatures, _Finding(SecurityRisk.UNKNOWN, "an MCP server's tool", "")]
            unproven = _Finding(
                SecurityRisk.MEDIUM,
                "an MCP server's tool that its server does not mark read-only: ohtui cannot "
                "check or undo what it does",
                "mcp-tool",
            )
            return [*signatures, unproven]
        return self._any_call(text)

    def _signatures(self, texts: Iterable[str]) -> list[_Finding]:
        found: list[_Finding] = []
        for text in texts:
            found += _matches(self.high_patterns, text, SecurityRisk.HIGH)
            found += _matches(self.medium_patterns, text, SecurityRisk.MEDIUM)
        return found

    def _any_call(self, text: ActionText) -> list[_Finding]:
        findings = self._signatures([normalize_text(" ".join(text.executable))])
        for piece in text.executable:
            if "-" not in piece:
                continue  # neither the delete's flags nor a shell's -c: nothing to read
            scan = scan_shell_command(
                normalize_text(piece, collapse=False), DET_EXEC_DESTRUCT_RM_RF
            )
            if scan.matched:
                findings.append(
                    _Finding(
                        SecurityRisk.HIGH,
                        "deletes recursively and by force, however it is spelled",
                        DET_EXEC_DESTRUCT_RM_RF,
                    )
                )
            elif scan.uncertain:
                findings.append(
                    _Finding(
                        SecurityRisk.UNKNOWN,
                        "a shell command that may delete recursively cannot be fully read",
                        "shell-unreadable",
                    )
                )
        return [*findings, _Finding(SecurityRisk.LOW, "no signature matched", "")]

    def _terminal(self, command: str) -> list[_Finding]:
        findings = self._command(command)
        readable = normalize_text(command, collapse=False)
        if readable != command:  # judge it as a person reads it too
            raised = (SecurityRisk.HIGH, SecurityRisk.MEDIUM)
            findings += [f for f in self._command(readable) if f.risk in raised]
        line = parse_command(readable)
        # The signatures read what the rules cannot vouch for: unreadable lines, programs
        # not known to only read, and code handed to interpreters.
        doubtful = line.unresolved or any(f.rule == _UNPROVEN for f in findings)
        texts = [*line.code, readable] if doubtful else line.code
        return findings + self._signatures(map(normalize_text, texts))

    def _command(self, command: str) -> list[_Finding]:
        line = parse_command(command)
        fired = [
            _Finding(rule.risk, rule.description, rule.name)
            for rule in RULES
            if rule.check(line, self.workspace)
        ]
        if line.unresolved:
            fired.append(
                _Finding(
                    SecurityRisk.MEDIUM,
                    f"cannot be fully checked: {line.unresolved[0]}",
                    "unresolved",
                )
            )
        if fired:
            return fired
        if not (line.commands or line.redirections or line.opaque):
            return [_Finding(SecurityRisk.LOW, "runs nothing", "")]
        if only_reads(line):
            return [_Finding(SecurityRisk.LOW, "only reads", "")]
        if self.undoable:
            return [_Finding(SecurityRisk.LOW, _UNDOABLE, _UNPROVEN)]
        return [_Finding(SecurityRisk.MEDIUM, _not_undoable(line), _UNPROVEN)]

    def _edit(self, command: str, path: str) -> list[_Finding]:
        resolved = str(resolve_path(path, self.workspace or "/"))
        if SECRET_PATH.search(resolved):
            return [
                _Finding(
                    SecurityRisk.HIGH,
                    "touches a key or credential file",
                    "read-secret-files",
                )
            ]
        if command == "view":
            return [_Finding(SecurityRisk.LOW, "only reads", "")]
        if SENSITIVE_WRITE_PATH.search(resolved):
            return [
                _Finding(
                    SecurityRisk.HIGH,
                    "writes a shell start-up file, key, credential or git hook",
                    "write-sensitive-file",
                )
            ]
        if is_outside(resolved, self.workspace, scratch_ok=True):
            return [
                _Finding(
                    SecurityRisk.HIGH,
                    "writes a file outside the workspace",
                    "write-outside-workspace",
                )
            ]
        if self.undoable:
            return [_Finding(SecurityRisk.LOW, "edits a file in the workspace (undoable)", "")]
        return [
            _Finding(
                SecurityRisk.MEDIUM,
                "edits a file in the workspace, and no checkpoint could undo it",
                _UNPROVEN,
            )
        ]


_UNPROVEN = "not-shown-harmless"
_UNDOABLE = "confined to the workspace and undoable (a checkpoint is taken first)"


def _not_undoable(line: CommandLine) -> str:
    """Why a command line that is not shown to only read is MEDIUM."""
    if line.writes_files:
        what = f"writes {line.writes_files[0]}"
    else:
        program = next((c.name for c in line.commands if not is_read_only(c)), "")
        what = f"`{program}` is not known to only read" if program else "not known to only read"
    return f"not shown to be harmless ({what}), and no sandbox and checkpoint make it undoable"


@lru_cache(maxsize=64)
def _compiled(detectors: tuple[Detector, ...]) -> tuple[tuple[re.Pattern[str], Detector], ...]:
    return tuple((re.compile(d[0], re.IGNORECASE), d) for d in detectors)


def _matches(detectors: list[Detector], text: str, risk: SecurityRisk) -> list[_Finding]:
    return [
        _Finding(risk, description, detector_id)
        for pattern, (_, description, detector_id) in _compiled(tuple(detectors))
        if pattern.search(text)
    ]


def _verdict(findings: list[_Finding], analyzer: str) -> RiskAssessment:
    """The highest raised risk; else UNKNOWN if any reading could not vouch; else LOW."""
    raised = [f for f in findings if f.risk in (SecurityRisk.HIGH, SecurityRisk.MEDIUM)]
    if raised:
        top = max(raised, key=lambda f: _RANK[f.risk])
        rules = ", ".join(dict.fromkeys(f.rule for f in raised if f.risk is top.risk))
        return RiskAssessment(top.risk, f"{top.description} (rule {rules})", analyzer)
    quiet = [f for f in findings if f.risk is SecurityRisk.UNKNOWN] or findings
    return RiskAssessment(quiet[0].risk, quiet[0].description, analyzer)


# The SDK groups the pattern and policy-rail analyzers as one "defense in depth" family;
# code written against it imports both from the same place.
from ohtui.sdk.security.policy_rails import PolicyRailSecurityAnalyzer  # noqa: E402, F401
