"""PatternSecurityAnalyzer: named rules that recognise destructive or exfiltrating actions."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ohtui.sdk.security.analyzer import _RANK, RiskAssessment, SecurityAnalyzerBase
from ohtui.sdk.security.approval_rules import resolve_path
from ohtui.sdk.security.risk import SecurityRisk
from ohtui.sdk.security.shell import CommandLine, command_name, parse_command

if TYPE_CHECKING:
    from ohtui.sdk.event.llm_convertible.action import ActionEvent

SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
SECRET_PATH = re.compile(
    r"(^|/)(\.ssh/|id_(rsa|dsa|ecdsa|ed25519)\b|\.gnupg/|\.aws/credentials|\.netrc$|"
    r"\.docker/config\.json|\.kube/config|\.config/gh/hosts\.yml|\.pypirc$|\.npmrc$|"
    r"\.git-credentials$|shadow$|gshadow$|[^/]*\.(pem|p12|pfx|key)$)"
)
READ_ONLY_COMMANDS = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "pwd",
        "echo",
        "printf",
        "wc",
        "sort",
        "uniq",
        "diff",
        "cmp",
        "which",
        "whereis",
        "type",
        "file",
        "stat",
        "du",
        "df",
        "tree",
        "less",
        "more",
        "date",
        "whoami",
        "id",
        "uname",
        "hostname",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "true",
        "false",
        "test",
        "[",
        "cd",
        "nl",
        "cut",
        "tr",
        "column",
        "jq",
        "yq",
        "sha256sum",
        "md5sum",
        "env",
        "printenv",
        "ps",
        "uptime",
        "seq",
        "sleep",
    }
)
READ_ONLY_GIT = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "branch",
        "blame",
        "rev-parse",
        "ls-files",
        "describe",
        "remote",
        "tag",
        "grep",
        "shortlog",
    }
)
INTERPRETERS = r"(sudo\s+)?(ba|z|da|k|fi)?sh|python[0-9.]*|perl|ruby|node|php"


@dataclass(frozen=True)
class PatternRule:
    """A named check over a terminal command line."""

    name: str
    risk: SecurityRisk
    description: str
    check: Callable[[str, CommandLine, str | None], bool]
    """(raw command, parsed command, workspace) -> whether the rule fires."""


def _is_outside(target: str, workspace: str | None, scratch_ok: bool = True) -> bool:
    """Whether a path a command touches lies outside the workspace (and scratch dirs)."""
    if "$" in target:
        expanded = target.replace("${TMPDIR}", "/tmp").replace("$TMPDIR", "/tmp")
        if "$" in expanded:
            return True  # unknown at analysis time: assume the worst
        target = expanded
    if target in ("~", "/", "*", "/*") or target.startswith("~"):
        return True
    base = workspace or "/nonexistent-workspace"
    resolved = os.path.normpath(os.path.join(base, target))
    if scratch_ok and any(resolved == d or resolved.startswith(d + "/") for d in SCRATCH_DIRS):
        return False
    if workspace is None:
        return os.path.isabs(target) or target.startswith("..")
    return not (resolved == workspace or resolved.startswith(workspace.rstrip("/") + "/"))


def _args(part: list[str]) -> list[str]:
    return [w for w in part[1:] if not w.startswith("-")]


def _flags(part: list[str]) -> str:
    return "".join(w.lstrip("-") for w in part[1:] if w.startswith("-") and not w.startswith("--"))


_command = command_name


def _recursive_rm(part: list[str]) -> bool:
    return _command(part) == "rm" and ("r" in _flags(part).lower() or "--recursive" in part)


def _rm_outside(raw: str, line: CommandLine, ws: str | None) -> bool:
    return any(
        _recursive_rm(p) and any(_is_outside(t, ws) for t in _args(p) or ["."]) for p in line.parts
    ) or any(
        _command(p) == "find" and "-delete" in p and any(_is_outside(t, ws) for t in _args(p)[:1])
        for p in line.parts
    )


def _rm_inside(raw: str, line: CommandLine, ws: str | None) -> bool:
    return any(_recursive_rm(p) for p in line.parts)


def _pipe_to_shell(raw: str, line: CommandLine, ws: str | None) -> bool:
    fetch = r"\b(curl|wget|fetch|http|base64\s+(-d|--decode))\b"
    piped = re.search(fetch + r"[^|;&]*\|\s*(" + INTERPRETERS + r")\b", raw)
    substituted = re.search(r"\b(" + INTERPRETERS + r")\b[^;&|]*(<\(|\$\(|`)\s*(curl|wget)\b", raw)
    return bool(piped or substituted)


def _privilege(raw: str, line: CommandLine, ws: str | None) -> bool:
    return any(_command(p) in ("sudo", "doas", "su", "pkexec", "runas") for p in line.parts)


def _world_writable(raw: str, line: CommandLine, ws: str | None) -> bool:
    for part in line.parts:
        if _command(part) not in ("chmod", "chown"):
            continue
        modes = " ".join(part[1:])
        recursive = "R" in _flags(part) or "--recursive" in part
        if re.search(r"\b[0-7]?77[67]\b|a\+[rwx]*w|o\+[rwx]*w", modes) and (
            recursive or any(_is_outside(t, ws, scratch_ok=False) for t in _args(part)[1:])
        ):
            return True
    return False


def _disk(raw: str, line: CommandLine, ws: str | None) -> bool:
    for part in line.parts:
        name = _command(part)
        if name == "dd" and any(w.startswith("of=/dev/") for w in part):
            return True
        if name.startswith("mkfs") or name in ("fdisk", "sfdisk", "parted", "wipefs", "mkswap"):
            return True
        if name == "shred" and any(a.startswith("/dev/") for a in _args(part)):
            return True
    return any(t.startswith("/dev/sd") or t.startswith("/dev/nvme") for t in line.writes_files)


def _force_push(raw: str, line: CommandLine, ws: str | None) -> bool:
    for part in line.parts:
        if _command(part) == "git" and "push" in part:
            rest = part[part.index("push") + 1 :]
            if any(
                w in ("-f", "--force", "--mirror") or (w.startswith("+") and len(w) > 1)
                for w in rest
            ) or "f" in _flags(["push", *rest]):
                return True
    return False


def _history_rewrite(raw: str, line: CommandLine, ws: str | None) -> bool:
    for part in line.parts:
        if _command(part) != "git" or len(part) < 2:
            continue
        sub, rest = part[1], part[2:]
        if (sub == "reset" and "--hard" in rest) or (sub == "clean" and "f" in _flags(part)):
            return True
        if sub in ("checkout", "restore") and ("." in rest or "--" in rest):
            return True
        if sub == "push" and ("--force-with-lease" in rest or "--delete" in rest):
            return True
        if sub in ("filter-branch", "filter-repo") or (sub == "branch" and "-D" in rest):
            return True
    return False


def _writes_outside(raw: str, line: CommandLine, ws: str | None) -> bool:
    if any(_is_outside(t, ws) for t in line.writes_files):
        return True
    for part in line.parts:
        name = _command(part)
        targets = _args(part)
        if name == "tee" and any(_is_outside(t, ws) for t in targets):
            return True
        if (
            name in ("cp", "mv", "install", "ln", "rsync")
            and len(targets) >= 2
            and (":" not in targets[-1])
            and _is_outside(targets[-1], ws)
        ):
            return True
        if name in ("touch", "mkdir", "truncate") and any(_is_outside(t, ws) for t in targets):
            return True
    return False


def _reads_secrets(raw: str, line: CommandLine, ws: str | None) -> bool:
    words = [w for p in line.parts for w in p[1:]] + [t for _, t in line.redirections]
    return any(SECRET_PATH.search(os.path.expanduser(w)) for w in words)


def _exfiltration(raw: str, line: CommandLine, ws: str | None) -> bool:
    for part in line.parts:
        name = _command(part)
        words = part[1:]
        if name in ("curl", "http", "https") and any(
            w.startswith("@") or "=@" in w or w in ("-T", "--upload-file") for w in words
        ):
            return True
        if name == "wget" and any(w.startswith("--post-file") for w in words):
            return True
        if name in ("nc", "ncat", "netcat", "socat", "telnet"):
            return True
    return False


def _remote_copy(raw: str, line: CommandLine, ws: str | None) -> bool:
    return any(
        _command(p) in ("scp", "rsync", "sftp")
        and any(re.match(r"^[\w.@-]+:", a) for a in _args(p))
        for p in line.parts
    )


def _power(raw: str, line: CommandLine, ws: str | None) -> bool:
    for part in line.parts:
        name = _command(part)
        if name in ("shutdown", "reboot", "halt", "poweroff", "killall", "pkill", "init"):
            return True
        if name == "kill" and "-1" in part[2:] + _args(part):
            return True
    return bool(re.search(r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:", raw))


def _system_change(raw: str, line: CommandLine, ws: str | None) -> bool:
    for part in line.parts:
        name, rest = _command(part), part[1:]
        if name in ("apt", "apt-get", "yum", "dnf", "brew", "pacman", "apk", "zypper") and any(
            w in ("install", "remove", "purge", "upgrade", "uninstall") for w in rest
        ):
            return True
        if name in ("npm", "pnpm", "yarn") and (
            "-g" in rest or "--global" in rest or "global" in rest
        ):
            return True
        if name in ("systemctl", "launchctl", "crontab", "useradd", "usermod", "passwd"):
            return True
    return False


RULES: tuple[PatternRule, ...] = (
    PatternRule(
        "recursive-delete-outside-workspace",
        SecurityRisk.HIGH,
        "recursively deletes outside the workspace and scratch directories",
        _rm_outside,
    ),
    PatternRule(
        "pipe-to-shell",
        SecurityRisk.HIGH,
        "runs downloaded or decoded content in a shell or interpreter",
        _pipe_to_shell,
    ),
    PatternRule(
        "privilege-escalation", SecurityRisk.HIGH, "runs as another user (sudo/su)", _privilege
    ),
    PatternRule(
        "world-writable", SecurityRisk.HIGH, "makes files writable by everyone", _world_writable
    ),
    PatternRule("disk-destroy", SecurityRisk.HIGH, "writes to a raw disk or formats one", _disk),
    PatternRule(
        "force-push", SecurityRisk.HIGH, "force-pushes, overwriting remote history", _force_push
    ),
    PatternRule(
        "write-outside-workspace",
        SecurityRisk.HIGH,
        "writes files outside the workspace",
        _writes_outside,
    ),
    PatternRule(
        "read-secret-files", SecurityRisk.HIGH, "touches key or credential files", _reads_secrets
    ),
    PatternRule(
        "exfiltration",
        SecurityRisk.HIGH,
        "sends local files or a raw connection over the network",
        _exfiltration,
    ),
    PatternRule(
        "system-power", SecurityRisk.HIGH, "stops the machine or kills processes broadly", _power
    ),
    PatternRule("remote-copy", SecurityRisk.MEDIUM, "copies files to another host", _remote_copy),
    PatternRule(
        "history-rewrite",
        SecurityRisk.MEDIUM,
        "discards git work or rewrites history",
        _history_rewrite,
    ),
    PatternRule(
        "recursive-delete",
        SecurityRisk.MEDIUM,
        "recursively deletes inside the workspace",
        _rm_inside,
    ),
    PatternRule(
        "system-change",
        SecurityRisk.MEDIUM,
        "installs system packages or changes system services",
        _system_change,
    ),
)


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

    def analyze(self, action: ActionEvent) -> SecurityRisk:
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
        fired = [rule for rule in RULES if rule.check(command, line, self.workspace)]
        if fired:
            top = max(fired, key=lambda r: _RANK[r.risk])
            names = ", ".join(r.name for r in fired if r.risk is top.risk)
            return RiskAssessment(top.risk, f"{top.description} (rule {names})", self.name)
        if line.parts and not line.opaque and all(_read_only(p) for p in line.parts):
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
        if command != "view" and _is_outside(resolved, self.workspace, scratch_ok=True):
            return RiskAssessment(
                SecurityRisk.HIGH,
                "writes a file outside the workspace (rule write-outside-workspace)",
                self.name,
            )
        if command == "view":
            return RiskAssessment(SecurityRisk.LOW, "only reads", self.name)
        return RiskAssessment(SecurityRisk.LOW, "edits a file in the workspace", self.name)


def _read_only(part: list[str]) -> bool:
    name = _command(part)
    if name == "git":
        return len(part) > 1 and part[1] in READ_ONLY_GIT
    if name == "find":
        return not any(w in part for w in ("-delete", "-exec", "-execdir", "-ok", "-fprint"))
    return name in READ_ONLY_COMMANDS
