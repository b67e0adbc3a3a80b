"""What the analyzer knows about programs that run other programs, and about variables.

Wrappers run the command in their arguments (`sudo`, `env`, `xargs`, `timeout` ...): the
analyzer unwraps them into separate commands, so a rule must cover each. Their options are
listed so the analyzer knows where the wrapped command starts; an option it does not know
leaves the split unknown, which it treats as unresolved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Wrapper:
    """How a wrapper's words divide into its own options and the command it runs."""

    takes_value: frozenset[str] = frozenset()
    """Options followed by a value (`-u USER`); `-uUSER` and `--user=USER` work too."""
    flags: frozenset[str] = frozenset()
    """Options without a value; short ones may be clustered (`-nv`)."""
    positionals: int = 0
    """Words between the options and the command (timeout's DURATION, chroot's NEWROOT)."""
    shell_options: frozenset[str] = frozenset()
    """Options whose value is a shell command line (`su -c`, `flock -c`)."""
    joins_into_shell: bool = False
    """The wrapped words are joined and run by a shell (`watch`, `sudo -s`)."""
    subcommand: str | None = None
    """The subcommand that makes the program a wrapper (`uv run`, `bundle exec`)."""


def _w(
    takes_value: str = "",
    flags: str = "",
    positionals: int = 0,
    shell_options: str = "",
    joins_into_shell: bool = False,
    subcommand: str | None = None,
) -> Wrapper:
    return Wrapper(
        frozenset(takes_value.split()),
        frozenset(flags.split()),
        positionals,
        frozenset(shell_options.split()),
        joins_into_shell,
        subcommand,
    )


_RUN_TOOL = _w(
    "--with --with-editable --with-requirements -p --python --project --directory --package "
    "--extra --group --only-group --env-file --index --index-url --extra-index-url -f "
    "--find-links --config-file --cache-dir -e --env -n --name",
    "--no-project --frozen --locked --isolated --no-sync --all-extras --no-dev --dev --active "
    "--offline -q -v --quiet --verbose --exact --no-cache --all-packages --no-capture-output "
    "--live-stream",
    subcommand="run",
)

WRAPPERS: dict[str, Wrapper] = {
    "sudo": _w(
        "-u -g -C -D -h -p -r -t -U -T --user --group --close-from --chdir --host --prompt "
        "--role --type --other-user --command-timeout",
        "-A -b -E -H -K -k -n -P -S -B -N --preserve-env --login --shell --non-interactive "
        "--stdin --askpass --background --set-home --preserve-groups --reset-timestamp "
        "--remove-timestamp",
    ),
    "doas": _w("-u -C", "-n -s -L"),
    "pkexec": _w("--user", "--disable-internal-agent --keep-cwd"),
    "env": _w(
        "-u --unset -C --chdir",
        "-i --ignore-environment -0 --null -v --debug --list-signal-handling",
        shell_options="-S --split-string",
    ),
    "xargs": _w(
        "-a -d -E -I -L -n -P -s --arg-file --delimiter --eof --replace --max-lines "
        "--max-args --max-procs --max-chars --process-slot-var",
        "-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t --verbose -x "
        "--exit --show-limits",
    ),
    "nohup": _w(),
    "nice": _w("-n --adjustment"),
    "ionice": _w("-c -n -p -P -u --class --classdata --pid --pgid --uid", "-t --ignore"),
    "timeout": _w("-s -k --signal --kill-after", "--foreground --preserve-status -v --verbose", 1),
    "stdbuf": _w("-i -o -e --input --output --error"),
    "command": _w("", "-p"),
    "builtin": _w(),
    "exec": _w("-a", "-c -l"),
    "time": _w("-f -o --format --output", "-p -a -v --portability --append --verbose"),
    "watch": _w(
        "-n --interval -q --equexit",
        "-b --beep -e --errexit -g --chgexit -t --no-title -c --color -p --precise -w "
        "--no-wrap -d --differences",
        joins_into_shell=True,
    ),
    "unbuffer": _w("", "-p"),
    "chroot": _w("--userspec --groups", "--skip-chdir", 1),
    "setsid": _w("", "-c -f -w --ctty --fork --wait"),
    "caffeinate": _w("-t -w", "-d -i -m -s -u"),
    "su": _w(
        "-s --shell -g -G -w --group --supp-group",
        "- -l --login -m -p -P --pty",
        1,
        shell_options="-c --command",
    ),
    "runuser": _w(
        "-u --user -s --shell -g -G -w --group --supp-group",
        "- -l --login -m -p --preserve-environment",
        shell_options="-c --command",
    ),
    "sg": _w("", "", 1, shell_options="-c"),
    "flock": _w(
        "-w -E --timeout --conflict-exit-code",
        "-s -x -e -n -u -o --shared --exclusive --nonblock --nb --unlock --close --verbose",
        1,
        shell_options="-c --command",
    ),
    "taskset": _w("", "-a --all-tasks -c --cpu-list", 1),
    "chrt": _w(
        "-T -P -D --sched-runtime --sched-period --sched-deadline",
        "-b -d -f -i -o -r -m -a -v -R --batch --deadline --fifo --idle --other --rr "
        "--all-tasks --verbose --reset-on-fork",
        1,
    ),
    "unshare": _w(
        "-S --setuid -G --setgid -w --wd -R --root --propagation",
        "-m -u -i -n -p -U -C -T -f -r -c --mount --uts --ipc --net --pid --user --cgroup "
        "--time --fork --map-root-user --map-current-user --kill-child --mount-proc",
    ),
    "dbus-run-session": _w("--config-file --dbus-daemon"),
    "fakeroot": _w("-l -s -i --lib --faked", "-u --unknown-is-real"),
    "busybox": _w(),
    "toybox": _w(),
    "coproc": _w(),
    "uv": _RUN_TOOL,
    "poetry": _RUN_TOOL,
    "pipenv": _RUN_TOOL,
    "pdm": _RUN_TOOL,
    "hatch": _RUN_TOOL,
    "rye": _RUN_TOOL,
    "pixi": _RUN_TOOL,
    "conda": _RUN_TOOL,
    "bundle": _w("--gemfile", "--keep-file-descriptors", subcommand="exec"),
    "mise": _w("-C --cd -E --env", "-q -v --quiet --verbose", subcommand="exec"),
}

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash", "yash"})
SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file", "-C"})
SHELL_RUNS_FILE_OPTIONS = frozenset({"--rcfile", "--init-file"})
STDIN_RUNNERS = frozenset({"at", "batch"})
"""Programs that run the shell commands they read on stdin."""

INTERPRETER_CODE_OPTIONS: dict[str, frozenset[str]] = {
    "python": frozenset({"-c"}),
    "pypy": frozenset({"-c"}),
    "perl": frozenset({"-e", "-E"}),
    "ruby": frozenset({"-e"}),
    "node": frozenset({"-e", "--eval", "-p", "--print"}),
    "nodejs": frozenset({"-e", "--eval", "-p", "--print"}),
    "bun": frozenset({"-e", "--eval", "-p", "--print"}),
    "deno": frozenset(),
    "php": frozenset({"-r"}),
    "lua": frozenset({"-e"}),
    "luajit": frozenset({"-e"}),
    "Rscript": frozenset({"-e"}),
    "osascript": frozenset({"-e"}),
    "tclsh": frozenset(),
}
_VERSIONED = re.compile(r"^(python|pypy|perl|ruby|lua|php)[0-9.]*$")

EVAL_BUILTINS = frozenset({"eval"})
FILE_RUNNERS = frozenset({"source", "."})
"""Builtins that run a file's commands in this shell."""
OPEN_ENDED_BUILTINS: dict[str, str] = {
    "fc": "it re-runs commands from the history",
    "enable": "it loads or switches shell builtins",
}
BASH_BUILTINS = frozenset(
    [
        ".",
        ":",
        "[",
        "alias",
        "bg",
        "bind",
        "break",
        "builtin",
        "caller",
        "cd",
        "command",
        "compgen",
        "complete",
        "compopt",
        "continue",
        "declare",
        "dirs",
        "disown",
        "echo",
        "enable",
        "eval",
        "exec",
        "exit",
        "export",
        "false",
        "fc",
        "fg",
        "getopts",
        "hash",
        "help",
        "history",
        "jobs",
        "kill",
        "let",
        "local",
        "logout",
        "mapfile",
        "popd",
        "printf",
        "pushd",
        "pwd",
        "read",
        "readarray",
        "readonly",
        "return",
        "set",
        "shift",
        "shopt",
        "source",
        "suspend",
        "test",
        "times",
        "trap",
        "true",
        "type",
        "typeset",
        "ulimit",
        "umask",
        "unalias",
        "unset",
        "wait",
    ]
)
STATELESS_BUILTINS = frozenset(
    [
        "cd",
        "pwd",
        "echo",
        "printf",
        "test",
        "[",
        "true",
        "false",
        ":",
        "type",
        "help",
        "times",
        "dirs",
        "caller",
        "kill",
        "jobs",
        "wait",
    ]
)
"""Builtins that leave the shell's state alone (`cd` moves it, which is tracked; `printf -v`,
`jobs -x` and `wait -p` are checked apart)."""
STATE_VARIABLE_PREFIXES = ("LESS", "PAGER", "GIT_PAGER", "HOME", "CDPATH", "PS4")
ASSIGNING_BUILTINS = frozenset({"read", "mapfile", "readarray", "getopts", "printf"})
"""Builtins that assign to variables named in their arguments."""

NON_EXECUTING = frozenset(
    {
        "echo",
        "printf",
        "cat",
        "head",
        "tail",
        "less",
        "more",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "wc",
        "ls",
        "pwd",
        "cd",
        "test",
        "[",
        "true",
        "false",
        ":",
        "type",
        "which",
        "whereis",
        "whatis",
        "apropos",
        "man",
        "help",
        "file",
        "stat",
        "touch",
        "mkdir",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "diff",
        "cmp",
        "sort",
        "uniq",
        "cut",
        "tr",
        "column",
        "nl",
        "tee",
        "jq",
        "yq",
        "sha256sum",
        "sha1sum",
        "md5sum",
        "base64",
        "git",
        "alias",
        "unalias",
        "unset",
        "export",
        "declare",
        "local",
        "readonly",
        "hash",
        "compgen",
        "complete",
    }
)
"""Programs that never run a program named in their arguments (the deny check trusts them)."""

# Assigning one of these changes which program runs or makes a program run code.
RISKY_VARIABLES = frozenset(
    {
        "PATH",
        "IFS",
        "PS0",
        "PS1",
        "PS2",
        "PS3",
        "PS4",
        "ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PROMPT_COMMAND",
        "HOME",
        "XDG_CONFIG_HOME",
        "ZDOTDIR",
        "GLOBIGNORE",
        "CDPATH",
        "CLASSPATH",
        "LESSOPEN",
        "LESSCLOSE",
        "PAGER",
        "MANPAGER",
        "MANOPT",
        "EDITOR",
        "VISUAL",
        "BROWSER",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "GCONV_PATH",
        "LOCPATH",
        "NLSPATH",
        "HOSTALIASES",
        "GLIBC_TUNABLES",
        "CC",
        "CXX",
        "CPP",
        "LD",
        "AR",
        "AS",
        "MAKE",
        "MAKEFLAGS",
        "MFLAGS",
        "SHELL",
        "CONFIG_SHELL",
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTDOC",
        "GOFLAGS",
        "TAR_OPTIONS",
        "GZIP",
        "XZ_OPT",
        "KUBECONFIG",
        "TERMINFO",
        "EMACSLOADPATH",
    }
)
RISKY_VARIABLE_PREFIXES = (
    "LD_",
    "DYLD_",
    "BASH_",
    "GIT_",
    "PYTHON",
    "PERL",
    "RUBY",
    "NODE_",
    "NPM_CONFIG_",
    "npm_config_",
    "JAVA_",
    "_JAVA_",
    "JDK_",
    "DOCKER_",
    "CARGO_",
    "BASH_FUNC_",
)
HARMLESS_VARIABLES = frozenset(
    {
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
        "GIT_TERMINAL_PROMPT",
        "GIT_OPTIONAL_LOCKS",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
        "PYTHONHASHSEED",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "NODE_ENV",
        "CARGO_TERM_COLOR",
    }
)
"""Names matching a risky prefix that change nothing about what runs."""
PAGER_VARIABLES = frozenset({"GIT_PAGER", "PAGER", "MANPAGER"})
HARMLESS_PAGERS = frozenset({"cat", ""})


def interpreter(name: str) -> str | None:
    """The interpreter family of a program name (`python3.12` -> `python`), or None."""
    if name in INTERPRETER_CODE_OPTIONS:
        return name
    match = _VERSIONED.match(name)
    return match.group(1) if match else None


def risky_assignment(name: str, value: str | None) -> bool:
    """Whether assigning `value` to the variable `name` can change what programs run."""
    base = name.split("[", 1)[0]
    if base in HARMLESS_VARIABLES:
        return False
    if base in PAGER_VARIABLES and value in HARMLESS_PAGERS:
        return False
    return base in RISKY_VARIABLES or base.startswith(RISKY_VARIABLE_PREFIXES)
