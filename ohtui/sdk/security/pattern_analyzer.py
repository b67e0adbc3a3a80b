"""PatternSecurityAnalyzer: named rules that recognise destructive or exfiltrating actions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ohtui.sdk.security.analyzer import _RANK, RiskAssessment, SecurityAnalyzerBase
from ohtui.sdk.security.approval_rules import resolve_path
from ohtui.sdk.security.command_rules import (
    RULES,
    SECRET_PATH,
    SENSITIVE_WRITE_PATH,
    PatternRule,
    is_outside,
)
from ohtui.sdk.security.risk import SecurityRisk
from ohtui.sdk.security.shell import is_read_only, parse_command

if TYPE_CHECKING:
    from ohtui.sdk.event.llm_convertible.action import ActionEvent


class PatternSecurityAnalyzer(SecurityAnalyzerBase):
    """Rates terminal commands and file edits with named rules; says which rule fired.

    Commands made only of read-only tools rate LOW; commands no rule knows rate UNKNOWN
    (combine with LLMSecurityAnalyzer in an EnsembleSecurityAnalyzer to rate those).
    """

    workspace: str | None = None

    @property
    def name(self) -> str:
        """Shown as "pattern rules"."""
        return "pattern rules"

    def security_risk(self, action: ActionEvent) -> SecurityRisk:
        """The highest risk of the rules that fire."""
        return self._assess(action).risk

    def with_workspace(self, working_dir: str) -> PatternSecurityAnalyzer:
        """This analyzer judging paths against `working_dir`."""
        return self if self.workspace else self.model_copy(update={"workspace": working_dir})

    def _assess(self, action: ActionEvent) -> RiskAssessment:
        arguments: dict[str, Any] = (
            action.action.model_dump(exclude={"kind"}) if action.action is not None else {}
        )
        command = arguments.get("command")
        if action.tool_name == "terminal" and isinstance(command, str):
            return self._assess_command(command)
        if action.tool_name == "file_editor" and isinstance(arguments.get("path"), str):
            return self._assess_edit(str(command or "view"), arguments["path"])
        if action.tool_name in ("finish", "think", "task_tracker"):
            return RiskAssessment(
                SecurityRisk.LOW, "changes nothing outside the conversation", self.name
            )
        return RiskAssessment(SecurityRisk.UNKNOWN, None, self.name)

    def _assess_command(self, command: str) -> RiskAssessment:
        line = parse_command(command)
        fired: list[PatternRule] = [rule for rule in RULES if rule.check(line, self.workspace)]
        if line.unresolved:
            fired.append(_unresolved_rule(line.unresolved[0]))
        if fired:
            top = max(fired, key=lambda r: _RANK[r.risk])
            names = ", ".join(r.name for r in fired if r.risk is top.risk)
            return RiskAssessment(top.risk, f"{top.description} (rule {names})", self.name)
        if line.commands and not line.writes_files and all(is_read_only(c) for c in line.commands):
            return RiskAssessment(SecurityRisk.LOW, "only reads", self.name)
        return RiskAssessment(SecurityRisk.UNKNOWN, None, self.name)

    def _assess_edit(self, command: str, path: str) -> RiskAssessment:
        resolved = str(resolve_path(path, self.workspace or "/"))
        if SECRET_PATH.search(resolved):
            return RiskAssessment(
                SecurityRisk.HIGH,
                "touches a key or credential file (rule read-secret-files)",
                self.name,
            )
        if command != "view" and SENSITIVE_WRITE_PATH.search(resolved):
            return RiskAssessment(
                SecurityRisk.HIGH,
                "writes a shell start-up file, key, credential or git hook "
                "(rule write-sensitive-file)",
                self.name,
            )
        if command != "view" and is_outside(resolved, self.workspace, scratch_ok=True):
            return RiskAssessment(
                SecurityRisk.HIGH,
                "writes a file outside the workspace (rule write-outside-workspace)",
                self.name,
            )
        if command == "view":
            return RiskAssessment(SecurityRisk.LOW, "only reads", self.name)
        return RiskAssessment(SecurityRisk.LOW, "edits a file in the workspace", self.name)


def _unresolved_rule(reason: str) -> PatternRule:
    """Anything the shell analyzer cannot resolve rates at least MEDIUM."""
    return PatternRule(
        "unresolved", SecurityRisk.MEDIUM, f"cannot be fully checked: {reason}", lambda *_: True
    )
