"""The one table of what programs do beyond reading: options that write or run code.

`READ_ONLY` programs only read, unless an option listed for them writes files or runs
other programs (`find -delete`, `find -exec`, `sort -o`, `git diff --output`, `git -c`).
The same table serves two checks:
- an allow rule for a program never covers these options (the action asks instead);
- a command counts as read-only, for the risk rating, only without them.

Option spelling follows the programs: GNU long options match any abbreviation
(`--out` is `--output`), short options match inside clusters (`-uo` holds `-o`), and
`find`'s single-dash words match exactly. `--` ends the options.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ohtui.sdk.security.shell.model import Command


@dataclass(frozen=True)
class Options:
    """What one program's options do."""

    read_only: bool = True
    writes: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    exact: bool = False
    """Options are whole words (`find -delete`), not GNU-style clusters and abbreviations."""
    check: Callable[[Command], list[str]] | None = field(default=None, compare=False)
    """A custom check returning what the words do beyond reading (e.g. a sed script's `w`)."""


def _operands(command: Command, value_options: frozenset[str] = frozenset()) -> list[str]:
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


def _second_operand_writes(value_options: str) -> Callable[[Command], list[str]]:
    """A check for programs whose second operand is a file they write (`uniq in out`)."""
    takes_value = frozenset(value_options.split())

    def check(command: Command) -> list[str]:
        operands = _operands(command, takes_value)
        return [f"{operands[1]} (the output file)"] if len(operands) > 1 else []

    return check


def _any_operand_writes(command: Command) -> list[str]:
    operands = _operands(command)
    return [f"{operands[0]} (sets it)"] if operands else []


_SED_SIMPLE = set("pPdDnNgGhHxlzF=qQ")


def _sed_check(command: Command) -> list[str]:
    """`sed` reads unless its script writes (`w`, `s///w`) or runs (`e`, `s///e`)."""
    scripts: list[str] = []
    words = list(command.args)
    explicit = False
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("-e", "--expression") and i + 1 < len(words):
            scripts.append(words[i + 1])
            explicit = True
            i += 2
            continue
        if word.startswith("--expression="):
            scripts.append(word.split("=", 1)[1])
            explicit = True
        elif word in ("-f", "--file") or word.startswith(("--file=", "-f")):
            return [f"{word} (a script file)"]
        elif word in ("-l", "--line-length"):
            i += 1
        elif not word.startswith("-") and not explicit and not scripts:
            scripts.append(word)
        i += 1
    risky: list[str] = []
    for script in scripts:
        problem = _sed_script_problem(script)
        if problem:
            risky.append(problem)
    return risky


def _sed_script_problem(script: str) -> str | None:
    """What a sed script does beyond printing, if it writes or runs anything."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!":
            i += 1
            continue
        if c.isdigit() or c in "$,~+":
            i += 1
            continue
        if c in "/\\":  # an address regex, maybe with a custom delimiter
            delim = script[i + 1] if c == "\\" and i + 1 < n else "/"
            i = _skip_delimited(script, i + (2 if c == "\\" else 1), delim)
            while i < n and script[i] in "IM":
                i += 1
            continue
        if c in "sy":
            if i + 1 >= n:
                return None
            delim = script[i + 1]
            i = _skip_delimited(script, i + 2, delim)
            i = _skip_delimited(script, i, delim)
            flags_start = i
            while i < n and script[i] not in ";\n}":
                i += 1
            flags = script[flags_start:i]
            if c == "s" and ("e" in flags or "w" in flags or "W" in flags):
                return f"sed `{script}` (its s command writes or runs)"
            continue
        if c in "wWe":
            return f"sed `{script}` (its `{c}` command writes or runs)"
        if c in "aic:btTrR#":
            while i < n and script[i] != "\n":
                if c in ":btTrR" and script[i] in ";}":
                    break
                i += 1
            continue
        if c in _SED_SIMPLE:
            i += 1
            continue
        return f"sed `{script}` (not understood)"
    return None


def _skip_delimited(text: str, i: int, delim: str) -> int:
    """The index after the next unescaped `delim` from `i`."""
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == delim:
            return i + 1
        i += 1
    return i


_AWK_RISK = re.compile(r"\bsystem\s*\(|\||\bprintf?\b[^;{}]*>|@load|@include|\bclose\s*\(")


def _awk_check(command: Command) -> list[str]:
    """`awk` reads unless its program runs commands, pipes, or prints into files."""
    words = list(command.args)
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith(("--file", "--include", "--load", "--exec")) or (
            word[:2] in ("-f", "-i", "-l", "-E")
        ):
            return [f"{word} (runs code from a file)"]
        if word in ("-v", "-F", "--assign", "--field-separator"):
            i += 2
            continue
        if word.startswith("-") and word != "-":
            i += 1
            continue
        if _AWK_RISK.search(word):
            return [f"awk program `{word}` (runs commands or writes files)"]
        return []
    return []


_GIT_GLOBAL_VALUES = frozenset(
    {"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--list-cmds"}
)
_GIT_RUNS_GLOBAL = ("-c", "--config-env", "--exec-path=")
_GIT_READ_ONLY = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "blame",
        "annotate",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "describe",
        "shortlog",
        "grep",
        "cat-file",
        "rev-list",
        "show-ref",
        "show-branch",
        "whatchanged",
        "count-objects",
        "merge-base",
        "name-rev",
        "for-each-ref",
        "check-ignore",
        "check-attr",
        "diff-tree",
        "diff-files",
        "diff-index",
        "range-diff",
        "cherry",
        "version",
        "var",
    }
)
_GIT_LISTING: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # subcommand: (operands that keep it read-only, options that list)
    "branch": (frozenset(), frozenset({"-l", "--list", "--show-current"})),
    "tag": (frozenset(), frozenset({"-l", "--list"})),
    "remote": (frozenset({"show", "get-url"}), frozenset()),
    "stash": (frozenset({"list", "show"}), frozenset()),
    "worktree": (frozenset({"list"}), frozenset()),
    "reflog": (frozenset({"show"}), frozenset()),
    "submodule": (frozenset({"status", "summary"}), frozenset()),
    "notes": (frozenset({"list", "show"}), frozenset()),
    "config": (
        frozenset({"get", "list"}),
        frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch"}),
    ),
}
_GIT_SUB_RUNS: dict[str, tuple[str, ...]] = {
    "diff": ("--ext-diff",),
    "log": ("--ext-diff",),
    "show": ("--ext-diff",),
    "grep": ("-O", "--open-files-in-pager"),
    "rebase": ("-x", "--exec"),
    "difftool": ("-x", "--extcmd", "-t", "--tool"),
    "mergetool": ("-t", "--tool"),
    "clone": ("-u", "--upload-pack", "-c", "--config", "--template"),
    "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",),
    "ls-remote": ("--upload-pack",),
    "archive": ("--exec",),
    "push": ("--receive-pack", "--exec"),
    "send-email": ("--sendmail-cmd", "--smtp-server"),
}
_GIT_SUB_RUNS_ALWAYS: dict[str, str] = {
    "filter-branch": "rewrites history with commands it runs",
    "bisect": "may run a command (`bisect run`)",
}
_GIT_SUB_WRITES: dict[str, tuple[str, ...]] = {
    sub: ("--output",)
    for sub in ("diff", "log", "show", "whatchanged", "diff-tree", "format-patch", "range-diff")
}


def git_subcommand(command: Command) -> tuple[int, list[str]]:
    """(index of git's subcommand in the words, the global options that run code)."""
    words = command.words
    runs: list[str] = []
    i = 1
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            return i, runs
        if word.startswith(_GIT_RUNS_GLOBAL):
            runs.append(f"git {word} (sets configuration that can run commands)")
            if word in ("-c", "--config-env"):
                i += 1
        elif word in _GIT_GLOBAL_VALUES:
            i += 1
        i += 1
    return len(words), runs


def _git_check(command: Command) -> list[str]:
    index, risky = git_subcommand(command)
    if index >= len(command.words):
        return risky
    sub = command.words[index]
    rest = Command(("git", *command.words[index + 1 :]))
    if sub in _GIT_SUB_RUNS_ALWAYS:
        risky.append(f"git {sub} ({_GIT_SUB_RUNS_ALWAYS[sub]})")
    if sub == "submodule" and "foreach" in rest.args:
        risky.append("git submodule foreach (runs a command in every submodule)")
    risky.extend(_matching(rest, _GIT_SUB_RUNS.get(sub, ()), "runs a program"))
    risky.extend(_matching(rest, _GIT_SUB_WRITES.get(sub, ()), "writes a file"))
    return risky


_GIT_LIST_OPTIONS = (
    "-a",
    "-r",
    "-v",
    "--all",
    "--remotes",
    "--verbose",
    "--sort",
    "--format",
    "--color",
    "--no-color",
    "--column",
    "--no-column",
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "-n",
    "--abbrev",
    "-i",
    "--ignore-case",
)


def git_read_only(command: Command) -> bool:
    """Whether a git command only reads (its subcommand, operands and options)."""
    index, runs = git_subcommand(command)
    if runs:
        return False
    if index >= len(command.words):
        return True  # `git`, `git --version`: help and version
    sub = command.words[index]
    if sub in _GIT_READ_ONLY:
        return True
    listing = _GIT_LISTING.get(sub)
    if listing is None:
        return False
    reading_operands, listing_options = listing
    args = command.words[index + 1 :]
    operands = [w for w in args if not w.startswith("-")]
    if any(w in listing_options for w in args):
        return True
    if sub in ("branch", "tag"):
        return not operands and all(w.startswith(_GIT_LIST_OPTIONS) for w in args)
    if not operands:
        return (sub in ("remote", "reflog", "stash") and not args) or (
            sub == "remote" and all(w in ("-v", "--verbose") for w in args)
        )
    return operands[0] in reading_operands


def _ssh_check(command: Command) -> list[str]:
    risky: list[str] = []
    words = command.args
    for i, word in enumerate(words):
        value = None
        if word == "-o" and i + 1 < len(words):
            value = words[i + 1]
        elif word.startswith("-o") and len(word) > 2:
            value = word[2:]
        if value is not None and re.match(
            r"\s*(ProxyCommand|LocalCommand|PermitLocalCommand|KnownHostsCommand|Match)",
            value,
            re.IGNORECASE,
        ):
            risky.append(f"-o {value} (runs a local command)")
        if word == "-F" or word.startswith("-F"):
            risky.append(f"{word} (a configuration file that may run commands)")
    return risky


READ_ONLY_NAMES = (
    "ls cat head tail wc pwd echo printf diff cmp which whereis type stat du df basename "
    "dirname realpath readlink true false test [ cd nl cut tr column jq sha256sum sha1sum "
    "sha512sum md5sum b2sum cksum env printenv ps uptime seq sleep whoami id uname grep egrep "
    "fgrep ag od hexdump strings base64 zcat comm join paste fold fmt expand unexpand rev tac "
    "expr nproc free locale getconf tty groups pgrep pidof whatis apropos cal :"
)

OPTIONS: dict[str, Options] = {
    **{name: Options() for name in READ_ONLY_NAMES.split()},
    "find": Options(
        writes=("-delete", "-fprint", "-fprint0", "-fprintf", "-fls"),
        runs=("-exec", "-execdir", "-ok", "-okdir"),
        exact=True,
    ),
    "fd": Options(runs=("-x", "--exec", "-X", "--exec-batch")),
    "fdfind": Options(runs=("-x", "--exec", "-X", "--exec-batch")),
    "sort": Options(writes=("-o", "--output"), runs=("--compress-program",)),
    "shuf": Options(writes=("-o", "--output")),
    "iconv": Options(writes=("-o", "--output")),
    "uniq": Options(check=_second_operand_writes("-f -s -w")),
    "xxd": Options(check=_second_operand_writes("-c -l -s -o -g -n -C")),
    "tree": Options(writes=("-o",)),
    "less": Options(writes=("-o", "-O", "--log-file", "--LOG-FILE")),
    "more": Options(),
    "man": Options(runs=("-P", "--pager", "-H", "--html")),
    "rg": Options(runs=("--pre",)),
    "yq": Options(writes=("-i", "--inplace")),
    "file": Options(writes=("-C", "--compile")),
    "date": Options(writes=("-s", "--set")),
    "hostname": Options(writes=("-F", "--file"), check=_any_operand_writes),
    "sed": Options(writes=("-i", "--in-place"), check=_sed_check),
    **{name: Options(check=_awk_check) for name in ("awk", "gawk", "mawk", "nawk")},
    "git": Options(check=_git_check),
    "curl": Options(
        read_only=False,
        writes=(
            "-o",
            "--output",
            "-O",
            "--remote-name",
            "--remote-name-all",
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--stderr",
            "--libcurl",
            "--output-dir",
        ),
        runs=("-K", "--config"),
    ),
    "tar": Options(
        read_only=False,
        runs=(
            "--to-command",
            "--checkpoint-action",
            "-I",
            "--use-compress-program",
            "-F",
            "--info-script",
            "--new-volume-script",
            "--rsh-command",
            "--rmt-command",
        ),
    ),
    "rsync": Options(read_only=False, runs=("-e", "--rsh", "--rsync-path")),
    "ssh": Options(read_only=False, check=_ssh_check),
    "scp": Options(read_only=False, runs=("-S",), check=_ssh_check),
    "sftp": Options(read_only=False, runs=("-S",), check=_ssh_check),
    "zip": Options(read_only=False, runs=("-TT", "--unzip-command")),
    **{
        name: Options(read_only=False, runs=("-c", "--cmd", "-S", "-u"))
        for name in ("vi", "vim", "nvim", "view", "ex", "gvim")
    },
}


def risky_options(command: Command) -> list[str]:
    """What the command's options do beyond reading, per the table ([] when nothing)."""
    options = OPTIONS.get(command.name)
    if options is None:
        return []
    found = _matching(command, options.writes, "writes files", options.exact)
    found += _matching(command, options.runs, "runs other programs", options.exact)
    if command.name in ("less", "more"):
        found += [f"{w} (runs a command in {command.name})" for w in command.args if w[:1] == "+"]
    if options.check is not None:
        found += options.check(command)
    return found


def is_read_only(command: Command) -> bool:
    """Whether the command only reads: a read-only program without writing or running options."""
    options = OPTIONS.get(command.name)
    if options is None or not options.read_only:
        return False
    if command.name == "git" and not git_read_only(command):
        return False
    return not risky_options(command)


def _matching(
    command: Command, options: tuple[str, ...], what: str, exact: bool = False
) -> list[str]:
    """The words of `command` that spell one of `options`."""
    if not options:
        return []
    found: list[str] = []
    longs = [o for o in options if o.startswith("--")]
    shorts = {o[1] for o in options if not o.startswith("--") and len(o) == 2}
    for word in command.args:
        if word == "--" and not exact:
            break
        name = word.split("=", 1)[0]
        if exact:
            hit = name in options
        elif word.startswith("--"):
            hit = len(word) > 2 and any(o.startswith(name) for o in longs)
        else:
            hit = word.startswith("-") and (name in options or any(c in shorts for c in word[1:]))
        if hit:
            found.append(f"{word} ({what})")
    return found
