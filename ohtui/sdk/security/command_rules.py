"""The pattern analyzer's rules for terminal commands: one named check per class of harm.

Each rule looks at every command the line runs (inside `bash -c`, `eval`, substitutions and
`find -exec` too, as the shell analyzer unwraps them) and at code given to interpreters.
A path known only at run time counts as outside the workspace.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from ohtui.sdk.security.risk import SecurityRisk
from ohtui.sdk.security.shell import Command, CommandLine
from ohtui.sdk.security.shell.options.spec import DISCARDED_OUTPUTS

SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
SECRET_PATH = re.compile(
    r"(^|/)(\.ssh/|id_(rsa|dsa|ecdsa|ed25519)\b|\.gnupg/|\.aws/(credentials|config)|\.netrc$|"
    r"\.docker/config\.json|\.kube/config|\.config/gh/hosts\.yml|\.pypirc$|\.npmrc$|"
    r"\.git-credentials$|\.config/gcloud/|\.azure/|shadow$|gshadow$|[^/]*\.(pem|p12|pfx|key)$)"
)
SENSITIVE_WRITE_PATH = re.compile(
    r"(^|/)(\.bashrc|\.bash_profile|\.bash_login|\.bash_logout|\.profile|\.zshrc|\.zshenv|"
    r"\.zprofile|\.zlogin|\.config/fish/|\.inputrc|\.ssh/|\.aws/|\.config/gcloud/|\.azure/|"
    r"\.kube/|\.docker/|\.gnupg/|\.git/hooks/|\.gitconfig$|\.npmrc$|\.pypirc$|\.netrc$)|"
    r"^/etc/(profile|bash\.bashrc|environment|sudoers|crontab|cron\.|ld\.so)"
)
SYSTEM_PATHS = (
    "/",
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/var",
    "/boot",
    "/opt",
    "/home",
    "/root",
    "/srv",
    "/sys",
    "/proc",
    "/dev",
)
SHELLS_AND_INTERPRETERS = r"(ba|z|da|k|fi|mk)?sh|python[0-9.]*|perl|ruby|node|php"
_DESTRUCTIVE_CODE = re.compile(
    r"\b(rmtree|remove|removedirs|unlink|unlinkSync|rmdir|rmdirSync|rmSync|rm_rf|rm_r|"
    r"write_text|write_bytes|writeFile|writeFileSync|file_put_contents|truncate|system|"
    r"popen|subprocess|child_process|execSync|spawnSync|shell_exec|passthru|move|rename)\b|"
    r"File\.(delete|write)|FileUtils\.|\bfs\.(rm|unlink|write)|"
    r"open\s*\([^)]*['\"][wa]\+?b?['\"]|open\s*\(?\s*\w*\s*,?\s*['\"]?[>+]"
)
_OUTSIDE_CODE = re.compile(r"['\"]/|expanduser|~/|\$HOME|environ\[.HOME|homedir|Path\.home")
_SQL_DESTROY = re.compile(
    r"\b(drop\s+(database|schema|table|index|view|user|role)|truncate\s+table|truncate\s+\w)|"
    r"\bdelete\s+from\s+[\w.\"`]+\s*(;|$)|\bflushall\b|\bflushdb\b|dropDatabase\s*\(|"
    r"\.drop\s*\(",
    re.IGNORECASE,
)
_SQL_WRITE = re.compile(
    r"\b(insert\s+into|update\s+[\w.\"`]+\s+set|delete\s+from|alter\s+table|create\s+table|"
    r"grant|revoke|del\s+\w|set\s+\w)\b",
    re.IGNORECASE,
)
DATABASE_CLIENTS = {
    "psql": ("-c", "--command"),
    "mysql": ("-e", "--execute"),
    "mariadb": ("-e", "--execute"),
    "sqlcmd": ("-Q", "-q"),
    "clickhouse-client": ("-q", "--query"),
    "cockroach": ("-e", "--execute"),
    "duckdb": ("-c",),
    "sqlite3": (),
    "mongo": ("--eval",),
    "mongosh": ("--eval",),
    "redis-cli": (),
}


@dataclass(frozen=True)
class PatternRule:
    """A named check over a terminal command line."""

    name: str
    risk: SecurityRisk
    description: str
    check: Callable[[CommandLine, str | None], bool]
    """(parsed command line, workspace) -> whether the rule fires."""


def is_outside(target: str, workspace: str | None, scratch_ok: bool = True) -> bool:
    """Whether a path a command touches lies outside the workspace (and scratch dirs)."""
    if "$" in target or "`" in target:
        expanded = target.replace("${TMPDIR}", "/tmp").replace("$TMPDIR", "/tmp")
        if "$" in expanded or "`" in expanded:
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


def _operands(command: Command) -> list[str]:
    return [w for w in command.args if not w.startswith("-")]


def _flags(command: Command) -> str:
    return "".join(w.lstrip("-") for w in command.args if w.startswith("-") and w[1:2] != "-")


def _has(command: Command, short: str, long: str) -> bool:
    return short in _flags(command) or long in command.args


def _program(command: Command) -> str:
    # Case-insensitive file systems (macOS by default) find `rm` when asked for `RM`.
    return command.name.lower()


def _named(line: CommandLine, *names: str) -> list[Command]:
    return [c for c in line.commands if _program(c) in names]


def _expand_home(path: str) -> str:
    return "/home/~" + path[1:] if path.startswith("~") else path


# --- deleting -------------------------------------------------------------------------------


def _recursive_rm(command: Command) -> bool:
    return (_program(command) == "rm" and _has(command, "r", "--recursive")) or (
        _program(command) == "rm" and "R" in _flags(command)
    )


def _scratch_root(target: str) -> bool:
    """A scratch directory itself, or everything in it (`/tmp`, `/tmp/*`): others' files."""
    path = os.path.normpath(target)
    parent, _, name = path.rpartition("/")
    return path in SCRATCH_DIRS or (parent in SCRATCH_DIRS and any(g in name for g in "*?["))


def _rm_outside(line: CommandLine, ws: str | None) -> bool:
    return any(
        _recursive_rm(c)
        and any(is_outside(t, ws) or _scratch_root(t) for t in _operands(c) or ["."])
        for c in line.commands
    ) or any(
        "-delete" in c.args and any(is_outside(t, ws) for t in _operands(c)[:1] or ["."])
        for c in _named(line, "find")
    )


def _deletes_outside(line: CommandLine, ws: str | None) -> bool:
    return any(
        any(is_outside(t, ws, scratch_ok=True) for t in _operands(c))
        for c in _named(line, "rm", "unlink", "rmdir", "shred", "srm")
    ) or any(
        len(_operands(c)) >= 2 and any(is_outside(t, ws) for t in _operands(c)[:-1])
        for c in _named(line, "mv")
    )


def _rm_inside(line: CommandLine, ws: str | None) -> bool:
    return any(_recursive_rm(c) for c in line.commands) or any(
        "-delete" in c.args for c in _named(line, "find")
    )


def _secure_delete(line: CommandLine, ws: str | None) -> bool:
    return bool(_named(line, "shred", "wipefs", "srm", "blkdiscard", "sfill", "sdmem"))


# --- running what it cannot see -----------------------------------------------------------


def _fed_code(line: CommandLine, ws: str | None) -> bool:
    return bool(line.fed_code)


def _privilege(line: CommandLine, ws: str | None) -> bool:
    return bool(_named(line, "sudo", "doas", "su", "pkexec", "runuser", "sg"))


def _code_destroys(line: CommandLine, ws: str | None) -> bool:
    return any(_DESTRUCTIVE_CODE.search(code) for code in line.code)


def _code_destroys_outside(line: CommandLine, ws: str | None) -> bool:
    return any(_DESTRUCTIVE_CODE.search(code) and _OUTSIDE_CODE.search(code) for code in line.code)


# --- permissions, disks, the machine --------------------------------------------------------


def _world_writable(line: CommandLine, ws: str | None) -> bool:
    for command in _named(line, "chmod", "chown"):
        modes = " ".join(command.args)
        recursive = "R" in _flags(command) or "--recursive" in command.args
        if re.search(r"\b[0-7]?77[67]\b|a\+[rwx]*w|o\+[rwx]*w", modes) and (
            recursive or any(is_outside(t, ws, scratch_ok=False) for t in _operands(command)[1:])
        ):
            return True
    return False


def _system_permissions(line: CommandLine, ws: str | None) -> bool:
    for command in _named(line, "chmod", "chown", "chgrp", "setfacl", "chattr"):
        recursive = "R" in _flags(command) or "--recursive" in command.args
        targets = [os.path.normpath(_expand_home(t)) for t in _operands(command)[1:]]
        if recursive and any(t in SYSTEM_PATHS or t.startswith("/home/~") for t in targets):
            return True
    return False


def _disk(line: CommandLine, ws: str | None) -> bool:
    for command in line.commands:
        name = _program(command)
        if name == "dd" and any(w.startswith("of=/dev/") for w in command.args):
            return True
        if name.startswith("mkfs") or name in ("fdisk", "sfdisk", "parted", "mkswap", "sgdisk"):
            return True
    return any(
        t.startswith(("/dev/sd", "/dev/nvme", "/dev/vd", "/dev/hd")) for t in line.writes_files
    )


def _power(line: CommandLine, ws: str | None) -> bool:
    for command in line.commands:
        if _program(command) in (
            "shutdown",
            "reboot",
            "halt",
            "poweroff",
            "killall",
            "pkill",
            "init",
        ):
            return True
        if _program(command) == "kill" and "-1" in command.args[1:] + tuple(_operands(command)):
            return True
    return False


def _crontab_remove(line: CommandLine, ws: str | None) -> bool:
    return any("r" in _flags(c) for c in _named(line, "crontab"))


def _system_change(line: CommandLine, ws: str | None) -> bool:
    for command in line.commands:
        name, rest = _program(command), command.args
        if name in ("apt", "apt-get", "yum", "dnf", "brew", "pacman", "apk", "zypper") and any(
            w in ("install", "remove", "purge", "upgrade", "uninstall", "autoremove") for w in rest
        ):
            return True
        if name in ("npm", "pnpm", "yarn") and (
            "-g" in rest or "--global" in rest or "global" in rest
        ):
            return True
        if name in (
            "systemctl",
            "launchctl",
            "crontab",
            "useradd",
            "usermod",
            "userdel",
            "passwd",
            "visudo",
            "update-alternatives",
        ):
            return True
    return False


# --- git ------------------------------------------------------------------------------------


def _git(line: CommandLine) -> list[tuple[str, tuple[str, ...]]]:
    found = []
    for command in _named(line, "git"):
        words = command.args
        index = 0
        while index < len(words) and words[index].startswith("-"):
            index += 2 if words[index] in ("-C", "-c", "--git-dir", "--work-tree") else 1
        if index < len(words):
            found.append((words[index], words[index + 1 :]))
    return found


def _force_push(line: CommandLine, ws: str | None) -> bool:
    for sub, rest in _git(line):
        if sub == "push" and any(
            w in ("-f", "--force", "--mirror", "--delete", "-d", "--prune")
            or (w.startswith("+") and len(w) > 1)
            or (w.startswith("-") and not w.startswith("--") and "f" in w)
            or (w.startswith(":") and len(w) > 1)
            for w in rest
        ):
            return True
    return False


def _history_destroy(line: CommandLine, ws: str | None) -> bool:
    for sub, rest in _git(line):
        operands = [w for w in rest if not w.startswith("-")]
        flags = "".join(w.lstrip("-") for w in rest if w.startswith("-") and not w.startswith("--"))
        if sub == "reset" and "--hard" in rest and operands:
            return True
        if sub == "clean" and "f" in flags and ("x" in flags or "X" in flags or "d" in flags):
            return True
        if sub in ("filter-branch", "filter-repo"):
            return True
        if sub == "reflog" and "expire" in operands:
            return True
        if sub == "gc" and any(w.startswith("--prune") for w in rest):
            return True
        if sub == "update-ref" and "-d" in rest:
            return True
    return False


def _history_rewrite(line: CommandLine, ws: str | None) -> bool:
    for sub, rest in _git(line):
        if (sub == "reset" and "--hard" in rest) or (
            sub == "clean"
            and any(
                (w.startswith("-") and not w.startswith("--") and "f" in w) or w == "--force"
                for w in rest
            )
        ):
            return True
        if sub in ("checkout", "restore") and ("." in rest or "--" in rest):
            return True
        if sub == "push" and "--force-with-lease" in rest:
            return True
        if sub == "branch" and any(w in ("-D", "--delete") or w == "-d" for w in rest):
            return True
        if sub == "stash" and any(w in ("drop", "clear") for w in rest):
            return True
        if sub in ("rebase", "commit") and any(
            w in ("-i", "--amend", "--interactive") for w in rest
        ):
            return True
    return False


# --- databases ------------------------------------------------------------------------------


def _sql(line: CommandLine) -> list[str]:
    texts: list[str] = []
    for command in line.commands:
        options = DATABASE_CLIENTS.get(_program(command))
        if options is None:
            continue
        args = list(command.args)
        for index, word in enumerate(args):
            if word in options and index + 1 < len(args):
                texts.append(args[index + 1])
            elif any(word.startswith(o + "=") for o in options if o.startswith("--")):
                texts.append(word.split("=", 1)[1])
        if _program(command) in ("sqlite3", "redis-cli", "duckdb"):
            texts.append(" ".join(_operands(command)))
    if any(_program(c) in DATABASE_CLIENTS for c in line.commands):
        texts.extend(line.code)
    return texts


def _database_drop(line: CommandLine, ws: str | None) -> bool:
    if _named(line, "dropdb", "dropuser") or any(
        "drop" in c.args for c in _named(line, "mysqladmin")
    ):
        return True
    return any(_SQL_DESTROY.search(text) for text in _sql(line))


def _database_write(line: CommandLine, ws: str | None) -> bool:
    return any(_SQL_WRITE.search(text) for text in _sql(line))


# --- files outside, secrets, the network ----------------------------------------------------


def _write_targets(line: CommandLine) -> list[str]:
    targets = list(line.writes_files)
    for command in line.commands:
        operands = _operands(command)
        if _program(command) in ("tee", "touch", "mkdir", "truncate") or (
            _program(command) == "sed" and _has(command, "i", "--in-place")
        ):
            targets.extend(operands[1:] if _program(command) == "sed" else operands)
        elif _program(command) in ("cp", "mv", "install", "ln", "rsync") and len(operands) >= 2:
            if ":" not in operands[-1]:
                targets.append(operands[-1])
        elif _program(command) == "dd":
            targets.extend(w[3:] for w in command.args if w.startswith("of="))
        elif _program(command) in _DOWNLOADER_WRITES:
            targets.extend(_option_values(command, *_DOWNLOADER_WRITES[_program(command)]))
    return [t for t in targets if t not in DISCARDED_OUTPUTS]


_DOWNLOADER_WRITES: dict[str, tuple[str, tuple[str, ...]]] = {
    "curl": (
        "oDc",
        (
            "--output",
            "--output-dir",
            "--dump-header",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--stderr",
            "--libcurl",
            "--etag-save",
            "--hsts",
            "--alt-svc",
        ),
    ),
    "wget": (
        "OoaP",
        (
            "--output-document",
            "--output-file",
            "--append-output",
            "--directory-prefix",
            "--save-cookies",
        ),
    ),
}
"""The options of downloaders that name a file or folder they write: short letters, longs."""


def _option_values(command: Command, letters: str, longs: tuple[str, ...]) -> list[str]:
    """The values given to the options that write (`-o F`, `-oF`, `-so F`, `--output=F`).

    Over-reads on purpose: any cluster holding one of the letters counts, so a letter that is
    another option's value (`-Xo`) adds a target rather than hiding one.
    """
    values: list[str] = []
    args = command.args
    for index, word in enumerate(args):
        following = args[index + 1] if index + 1 < len(args) else ""
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if any(o.startswith(name) for o in longs) and len(name) > 3:
                values.append(value if eq else following)
        elif word.startswith("-") and len(word) > 1:
            for position, letter in enumerate(word[1:], 2):
                if letter in letters:
                    values.append(word[position:] or following)
                    break
    return [v for v in values if v]


def _writes_outside(line: CommandLine, ws: str | None) -> bool:
    return any(is_outside(t, ws) for t in _write_targets(line))


def _writes_sensitive(line: CommandLine, ws: str | None) -> bool:
    return any(
        SENSITIVE_WRITE_PATH.search(_expand_home(os.path.expanduser(t)))
        for t in _write_targets(line)
    )


def _reads_secrets(line: CommandLine, ws: str | None) -> bool:
    words = [w for c in line.commands for w in c.args] + [r.target for r in line.redirections]
    return any(SECRET_PATH.search(os.path.expanduser(w)) for w in words) or any(
        SECRET_PATH.search(w) for code in line.code for w in re.split(r"['\"\s]", code) if w
    )


def _exfiltration(line: CommandLine, ws: str | None) -> bool:
    for command in line.commands:
        words = command.args
        if _program(command) in ("curl", "http", "https") and any(
            w.startswith("@") or "=@" in w or w in ("-T", "--upload-file") or w.startswith("-T")
            for w in words
        ):
            return True
        if _program(command) == "wget" and any(
            w.startswith(("--post-file", "--body-file")) for w in words
        ):
            return True
        if _program(command) in ("nc", "ncat", "netcat", "socat", "telnet"):
            return True
    return False


def _remote_copy(line: CommandLine, ws: str | None) -> bool:
    return any(
        any(re.match(r"^[\w.@-]+:", a) for a in _operands(c))
        for c in _named(line, "scp", "rsync", "sftp")
    )


def _risky_options(line: CommandLine, ws: str | None) -> bool:
    from ohtui.sdk.security.shell import risky_options

    return any(risky_options(c) for c in line.commands)


RULES: tuple[PatternRule, ...] = (
    PatternRule(
        "recursive-delete-outside-workspace",
        SecurityRisk.HIGH,
        "recursively deletes outside the workspace and scratch directories",
        _rm_outside,
    ),
    PatternRule(
        "delete-outside-workspace",
        SecurityRisk.HIGH,
        "deletes or moves away files outside the workspace",
        _deletes_outside,
    ),
    PatternRule(
        "secure-delete",
        SecurityRisk.HIGH,
        "destroys data beyond recovery (shred, wipefs)",
        _secure_delete,
    ),
    PatternRule(
        "pipe-to-shell",
        SecurityRisk.HIGH,
        'runs code that another command produces (`… | sh`, `bash -c "$(…)"`)',
        _fed_code,
    ),
    PatternRule(
        "privilege-escalation", SecurityRisk.HIGH, "runs as another user (sudo/su)", _privilege
    ),
    PatternRule(
        "world-writable", SecurityRisk.HIGH, "makes files writable by everyone", _world_writable
    ),
    PatternRule(
        "system-permissions",
        SecurityRisk.HIGH,
        "recursively changes owners or permissions of system or home paths",
        _system_permissions,
    ),
    PatternRule("disk-destroy", SecurityRisk.HIGH, "writes to a raw disk or formats one", _disk),
    PatternRule(
        "force-push", SecurityRisk.HIGH, "force-pushes, overwriting remote history", _force_push
    ),
    PatternRule(
        "history-destroy",
        SecurityRisk.HIGH,
        "destroys git history or ignored files beyond recovery",
        _history_destroy,
    ),
    PatternRule(
        "database-drop", SecurityRisk.HIGH, "drops or empties a database or table", _database_drop
    ),
    PatternRule(
        "crontab-remove", SecurityRisk.HIGH, "removes every scheduled job", _crontab_remove
    ),
    PatternRule(
        "write-outside-workspace",
        SecurityRisk.HIGH,
        "writes files outside the workspace",
        _writes_outside,
    ),
    PatternRule(
        "write-sensitive-file",
        SecurityRisk.HIGH,
        "writes shell start-up files, keys, credentials or git hooks",
        _writes_sensitive,
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
    PatternRule(
        "code-deletes-outside",
        SecurityRisk.HIGH,
        "runs code that deletes or overwrites files outside the workspace",
        _code_destroys_outside,
    ),
    PatternRule("remote-copy", SecurityRisk.MEDIUM, "copies files to another host", _remote_copy),
    PatternRule(
        "history-rewrite",
        SecurityRisk.MEDIUM,
        "discards git work or rewrites history",
        _history_rewrite,
    ),
    PatternRule("recursive-delete", SecurityRisk.MEDIUM, "recursively deletes files", _rm_inside),
    PatternRule(
        "system-change",
        SecurityRisk.MEDIUM,
        "installs system packages or changes system services",
        _system_change,
    ),
    PatternRule(
        "code-deletes",
        SecurityRisk.MEDIUM,
        "runs code that deletes, overwrites or runs commands",
        _code_destroys,
    ),
    PatternRule("database-write", SecurityRisk.MEDIUM, "changes a database", _database_write),
    PatternRule(
        "writes-or-runs-options",
        SecurityRisk.MEDIUM,
        "uses options that write files or run other programs",
        _risky_options,
    ),
)
