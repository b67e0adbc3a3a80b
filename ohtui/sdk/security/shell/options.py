"""The one table of known read-only behaviour: programs, the options they take, and their risks.

`OPTIONS` is an allowlist. A command counts as read-only only when its program has an
entry marked `read_only` and every option it is given is one the entry knows and that
does not write or run anything (`find -delete`, `sort -o`, `sed 's/x/y/e'`, `git -c`).
What the table does not know is not read-only: an option it does not list, an
abbreviation that matches none or several of its long options, a run-time word where an
option could be, a sed or awk program it cannot read.

An entry lists:
- `flags` and `values` (options taking a value: `-n 5`, `-n5`, `--lines=5`, `--lines 5`);
  short options cluster (`-la`, `-nr5`) unless `cluster` is false, a long option may be
  abbreviated to a unique prefix (`--ignore-c`), `--` ends the options;
- `writes` and `runs`: options that write files or run programs, reported by
  `risky_options` (for messages and deny rules); `numeric` allows `-20` (`head -20`);
- `any_option`: every option of the program only reads (its manual has none that writes
  or runs: `echo`, `ps`, `uname`);
- `parse`: a program-specific reader for programs with a language or subcommands (sed
  scripts, awk programs, `find` expressions, `tar` modes, `git` subcommands).
Entries with `enumerated=False` are programs that do more than read (`curl`, `ssh`): only
their `writes`/`runs` are known, matched as GNU spelling allows, and they are never
read-only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ohtui.sdk.security.shell.model import Command


@dataclass
class Findings:
    """What a command's words do beyond reading (`risky`) and what the table does not know."""

    risky: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Options:
    """What one program's options are and do (see the module docstring)."""

    read_only: bool = True
    flags: frozenset[str] = frozenset()
    values: frozenset[str] = frozenset()
    writes: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    cluster: bool = True
    numeric: bool = False
    any_option: bool = False
    enumerated: bool = True
    exact: bool = False
    """For entries not enumerated: options are whole words (`find -delete`)."""
    check: Callable[[Command], list[str]] | None = field(default=None, compare=False)
    """Extra risks read from the operands (`uniq in out` writes `out`)."""
    parse: Callable[[Command], Findings] | None = field(default=None, compare=False)
    """A program-specific reader replacing the option scan."""


def _opts(
    flags: str = "",
    values: str = "",
    writes: str = "",
    runs: str = "",
    *,
    short: str = "",
    short_values: str = "",
    **kwargs: object,
) -> Options:
    """An entry from space-separated option lists; `short`/`short_values` are letters."""
    return Options(
        flags=frozenset(flags.split()) | {"-" + c for c in short},
        values=frozenset(values.split()) | {"-" + c for c in short_values},
        writes=tuple(writes.split()),
        runs=tuple(runs.split()),
        **kwargs,  # type: ignore[arg-type]
    )


def _long_match(name: str, longs: frozenset[str]) -> str | None:
    """The long option `name` spells: itself, or the one option it is a unique prefix of."""
    if name in longs:
        return name
    matches = [o for o in longs if o.startswith(name)]
    return matches[0] if len(matches) == 1 else None


def _scan(command: Command, spec: Options, words: tuple[str, ...] | None = None) -> Findings:
    """Read options GNU-style (clusters, abbreviations, `=` values) against the entry."""
    found = Findings()
    risky = set(spec.writes) | set(spec.runs)
    known = spec.flags | spec.values | risky
    longs = frozenset(o for o in known if o.startswith("--"))
    args = command.args if words is None else words
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            break
        if not word.startswith("-") or word == "-":
            continue
        if word.startswith("--"):
            name, eq, _ = word.partition("=")
            match = _long_match(name, longs)
            if match is None:
                found.unknown.append(word)
            elif match in risky:
                found.risky.append(f"{word} ({_what(spec, match)})")
            elif match in spec.values and not eq:
                i += 1
            continue
        if spec.numeric and word[1:].isdigit():
            continue
        if not spec.cluster:
            option = word if word in known else word[:2]
            if option in risky:
                found.risky.append(f"{word} ({_what(spec, option)})")
            elif word in spec.flags or word in spec.values:
                i += word in spec.values
            elif not (option in spec.values and len(word) > 2):
                found.unknown.append(word)
            continue
        for j, letter in enumerate(word[1:], 1):
            option = "-" + letter
            if option in risky:
                found.risky.append(f"{word} ({_what(spec, option)})")
                break
            if option in spec.values:
                i += j == len(word) - 1
                break
            if option not in spec.flags:
                found.unknown.append(word)
                break
    return found


def _what(spec: Options, option: str) -> str:
    return "writes files" if option in spec.writes else "runs other programs"


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


# --- sed ---------------------------------------------------------------------------------

_SED = _opts(
    "--quiet --silent --regexp-extended --separate --unbuffered --null-data --posix --debug "
    "--sandbox --follow-symlinks --expression --line-length --help --version",
    "--expression --line-length",
    "--in-place",
    "--file",
    short="nrEsuz",
    short_values="el",
)
_SED_COMMANDS = set("{}!=dDgGhHlnNpPqQxzFblt:TrRaicsyv#")
_SED_S_FLAGS = set("gpiImM0123456789")


def _sed_parse(command: Command) -> Findings:
    """`sed` reads unless it edits in place, reads a script file, or its script writes or
    runs (`w`, `W`, `e`, `s///w`, `s///e`); script commands are allowlisted."""
    found = Findings()
    scripts: list[str] = []
    words = command.args
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word == "--":
            if not scripts and i < len(words):
                scripts.append(words[i])
            break
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            match = _long_match(name, _SED.flags)
            if match == "--expression":
                scripts.append(value if eq else (words[i] if i < len(words) else ""))
                i += not eq
            elif match == "--line-length":
                i += not eq
            elif match is None:
                found.unknown.append(word)
            elif match == "--in-place":
                found.risky.append(f"{word} (edits files in place)")
            elif match == "--file":
                found.risky.append(f"{word} (a script file the analyzer does not read)")
            continue
        if not word.startswith("-") or word == "-":
            if not scripts and not any(w.startswith(("-e", "--e")) for w in words[: i - 1]):
                scripts.append(word)
            continue
        for j, letter in enumerate(word[1:], 1):
            rest = word[j + 1 :]
            if letter == "e":
                scripts.append(rest or (words[i] if i < len(words) else ""))
                i += not rest
                break
            if letter == "l":
                i += not rest
                break
            if letter == "i":
                found.risky.append(f"{word} (edits files in place)")
                break
            if letter == "f":
                found.risky.append(f"{word} (a script file the analyzer does not read)")
                break
            if "-" + letter not in _SED.flags:
                found.unknown.append(word)
                break
    for script in scripts:
        problem = _sed_script_problem(script)
        if problem is not None:
            (found.risky if "writes or runs" in problem else found.unknown).append(problem)
    if command.unknown - {0}:
        found.unknown.append("a word known only at run time")
    return found


def _sed_script_problem(script: str) -> str | None:
    """What a sed script does beyond printing (`… writes or runs`), or that it is not
    understood; None when every command is on the allowlist."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;!{}" or c.isdigit() or c in "$,~+":
            i += 1
            continue
        if c in "/\\":  # an address regex, maybe with a custom delimiter
            delim = script[i + 1] if c == "\\" and i + 1 < n else "/"
            i = _skip_delimited(script, i + (2 if c == "\\" else 1), delim)
            while i < n and script[i] in "IM":
                i += 1
            continue
        if c in "sy":
            if i + 1 >= n or script[i + 1] in "\\\n":
                return f"sed `{script}` (not understood)"
            delim = script[i + 1]
            i = _skip_delimited(script, i + 2, delim)
            i = _skip_delimited(script, i, delim)
            start = i
            while i < n and script[i] not in ";\n}":
                i += 1
            flags = script[start:i].rstrip(" \t")
            if c == "s" and ("e" in flags or "w" in flags or "W" in flags):
                return f"sed `{script}` (its s command writes or runs)"
            if c == "s" and not set(flags) <= _SED_S_FLAGS:
                return f"sed `{script}` (not understood)"
            continue
        if c in "wWe":
            return f"sed `{script}` (its `{c}` command writes or runs)"
        if c not in _SED_COMMANDS:
            return f"sed `{script}` (not understood)"
        i += 1
        if c in "aicrRbtT:vlqQ#":
            # Its argument: sed reads it to the end of the line, the analyzer only to `;`,
            # so a command hidden after `;` is still looked at.
            while i < n and script[i] not in ";\n" and not (c != "#" and script[i] == "}"):
                i += 1
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


# --- awk ---------------------------------------------------------------------------------

_AWK = _opts(
    "--field-separator --assign --posix --traditional --re-interval --characters-as-bytes "
    "--sandbox --lint --no-optimize --help --version",
    "--field-separator --assign",
    "--pretty-print --profile --dump-variables",
    "--file --exec --include --load --debug",
    short="",
    short_values="Fv",
)
_AWK_LONGS = _AWK.flags | set(_AWK.writes) | set(_AWK.runs)
_AWK_WRITES = frozenset(["-o", "-p", "-d"])
_AWK_RUNS = frozenset(["-f", "-E", "-i", "-l", "-D"])
_AWK_FUNCTIONS = frozenset(
    [
        "length",
        "substr",
        "index",
        "split",
        "sub",
        "gsub",
        "match",
        "sprintf",
        "sin",
        "cos",
        "atan2",
        "exp",
        "log",
        "sqrt",
        "int",
        "rand",
        "srand",
        "tolower",
        "toupper",
        "strftime",
        "systime",
        "mktime",
        "gensub",
        "asort",
        "asorti",
        "patsplit",
        "and",
        "or",
        "xor",
        "lshift",
        "rshift",
        "compl",
        "strtonum",
        "isarray",
        "typeof",
        "if",
        "while",
        "for",
        "return",
        "delete",
        "exit",
        "switch",
    ]
)
_AWK_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"', re.DOTALL)
_AWK_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_AWK_DEFINED = re.compile(r"\bfunc(?:tion)?\s+([A-Za-z_][A-Za-z0-9_]*)")
_AWK_BANNED = re.compile(r"\b(system|getline|close|fflush)\b|@|\|")
_AWK_STATEMENTS = re.compile(r"[;{}\n]")


def _awk_parse(command: Command) -> Findings:
    """`awk` reads when its options are known and its program passes `awk_program_problem`."""
    found = Findings()
    words = command.args
    i = 0
    program: str | None = None
    while i < len(words):
        word = words[i]
        i += 1
        if word == "--":
            program = words[i] if i < len(words) else None
            break
        if not word.startswith("-") or word == "-":
            program = word
            break
        option = word[:2]
        if word.startswith("--"):
            option = _long_match(word.split("=")[0], _AWK_LONGS) or word
        if option in _AWK_WRITES or option in _AWK.writes:
            found.risky.append(f"{word} (writes files)")
        elif option in _AWK_RUNS or option in _AWK.runs:
            found.risky.append(f"{word} (runs awk code from a file the analyzer does not read)")
        elif option in ("-F", "-v"):
            i += len(word) == 2
        elif option in ("--field-separator", "--assign"):
            i += "=" not in word
        elif option is None or option not in _AWK.flags:
            found.unknown.append(word)
    if program is not None:
        problem = awk_program_problem(program)
        if problem is not None:
            found.risky.append(f"awk program `{_short(program)}` ({problem})")
    elif not found.risky:
        found.unknown.append("no awk program")
    if command.unknown - {0}:
        found.unknown.append("a word known only at run time")
    return found


def awk_program_problem(program: str) -> str | None:
    """Why an awk program may do more than read and print to stdout; None if it cannot.

    Allowlisted: no `system`, `getline`, `close`, `fflush`, `|` (pipes, `|&`), `@`
    (directives, indirect calls), no `>` after `print`/`printf` in a statement (output
    to a file; `>` as a comparison elsewhere is fine), and calls only to known
    functions or ones the program defines. String literals are set aside first.
    """
    code = _AWK_STRING.sub('""', program)
    if code.count('"') % 2:
        return "a string the analyzer cannot follow"
    banned = _AWK_BANNED.search(code)
    if banned is not None:
        return f"`{banned.group()}` may run commands or read files"
    for statement in _AWK_STATEMENTS.split(code):
        printed = re.search(r"\bprintf?\b", statement)
        if printed is not None and ">" in statement[printed.end() :]:
            return "prints into a file"
    defined = set(_AWK_DEFINED.findall(code))
    for name in _AWK_CALL.findall(code):
        if name not in _AWK_FUNCTIONS and name not in defined and name not in ("func", "function"):
            return f"calls `{name}`, which the analyzer does not know"
    return None


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- find --------------------------------------------------------------------------------

_FIND_VALUES = frozenset(
    [
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-regextype",
        "-type",
        "-xtype",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-newer",
        "-anewer",
        "-cnewer",
        "-perm",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-links",
        "-inum",
        "-samefile",
        "-maxdepth",
        "-mindepth",
        "-printf",
        "-lname",
        "-ilname",
        "-used",
        "-fstype",
        "-context",
        "-files0-from",
    ]
)
_FIND_FLAGS = frozenset(
    [
        "-nouser",
        "-nogroup",
        "-empty",
        "-depth",
        "-prune",
        "-print",
        "-print0",
        "-ls",
        "-quit",
        "-not",
        "-a",
        "-o",
        "-and",
        "-or",
        "!",
        "(",
        ")",
        ",",
        "-true",
        "-false",
        "-readable",
        "-writable",
        "-executable",
        "-follow",
        "-xdev",
        "-mount",
        "-daystart",
        "-noleaf",
        "-ignore_readdir_race",
        "-noignore_readdir_race",
        "-L",
        "-P",
        "-H",
        "-help",
        "--help",
        "-version",
        "--version",
    ]
)
_FIND_WRITES = frozenset({"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_NEWER = re.compile(r"-newer[aBcm][aBcmt]")


def _find_parse(command: Command) -> Findings:
    """`find` reads unless an action writes (`-delete`, `-fprint`) or runs (`-exec`)."""
    found = Findings()
    words = command.args
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if i in command.unknown:
            found.unknown.append(f"{word} (known only at run time)")
        elif word in _FIND_WRITES:
            found.risky.append(f"{word} (writes files)")
        elif word in _FIND_RUNS:
            found.risky.append(f"{word} (runs other programs)")
            while i < len(words) and words[i] not in (";", "+"):
                i += 1
            i += 1
        elif word in _FIND_VALUES or _FIND_NEWER.fullmatch(word) or word.startswith("-O"):
            i += not word.startswith("-O")
        elif (
            (word.startswith("-") and len(word) > 1) or word in ("!", "(", ")", ",")
        ) and word not in _FIND_FLAGS:
            found.unknown.append(word)
    return found


# --- tar ---------------------------------------------------------------------------------

_TAR = _opts(
    "--list --file --gzip --gunzip --bzip2 --xz --lzip --lzma --zstd --auto-compress "
    "--verbose --wildcards --no-wildcards --exclude --to-stdout --numeric-owner "
    "--directory --full-time --utc --quoting-style --null --no-null --anchored "
    "--no-anchored --ignore-case --occurrence --blocking-factor --record-size --totals "
    "--show-transformed-names --diff --compare --help --version",
    "--file --exclude --directory --quoting-style --blocking-factor --record-size --occurrence",
    "--extract --get --create --append --update --catenate --concatenate --delete -x -c -r -u -A",
    "--use-compress-program --to-command --checkpoint-action --info-script "
    "--new-volume-script --rsh-command --rmt-command -I -F",
    short="tvzjJaOdk",
    short_values="fCb",
)


def _tar_parse(command: Command) -> Findings:
    """`tar` reads when it only lists or compares (`-t`, `--diff`) with known options."""
    words = list(command.args)
    if words and not words[0].startswith("-"):
        words[0] = "-" + words[0]  # the old style: `tar tzf a.tgz`
    found = _scan(command, _TAR, tuple(words))
    if command.unknown - {0}:
        found.unknown.append("a word known only at run time")
    return found


# --- git ---------------------------------------------------------------------------------

_GIT_GLOBAL_FLAGS = frozenset(
    [
        "--no-pager",
        "-P",
        "--no-optional-locks",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-replace-objects",
        "--version",
        "--help",
    ]
)
_GIT_GLOBAL_RISKY = (
    "-c",
    "--config-env",
    "--exec-path",
    "-C",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--list-cmds",
    "-p",
    "--paginate",
    "--bare",
)
_GIT_GLOBAL_VALUES = frozenset(
    {"-c", "-C", "--config-env", "--git-dir", "--work-tree", "--namespace", "--super-prefix"}
)

_DIFF = (
    "-p -u -s --patch --no-patch --raw --stat --numstat --shortstat --dirstat --summary "
    "--name-only --name-status --color --no-color --color-words --word-diff --color-moved "
    "--cached --staged --merge-base --no-index -w -b --ignore-all-space "
    "--ignore-space-change --ignore-blank-lines --ignore-cr-at-eol --ignore-space-at-eol -R "
    "--relative --no-relative -a --text --binary --full-index --abbrev --no-abbrev --minimal "
    "--patience --histogram --find-renames --find-copies --no-renames -M -C -B -D "
    "--irreversible-delete --pickaxe-all --pickaxe-regex --no-prefix --default-prefix -z "
    "--check --exit-code --quiet --function-context -W --no-ext-diff --no-textconv "
    "--ignore-submodules --submodule --compact-summary --full-diff -U --unified "
    "--diff-filter --diff-algorithm --word-diff-regex --src-prefix --dst-prefix "
    "--line-prefix --inter-hunk-context --stat-width --stat-count -S -G -O -l "
    "--anchored --ita-invisible-in-index --no-color-moved -m -c --cc --diff-merges "
    "--remerge-diff --dd"
)
_DIFF_VALUES = (
    "--diff-filter --diff-algorithm --word-diff-regex --src-prefix --dst-prefix "
    "--line-prefix --inter-hunk-context --stat-width --stat-count -S -G -O --anchored "
    "--diff-merges --unified -U -l"
)
_LOG = (
    "--oneline --graph --all --decorate --no-decorate -n --max-count --skip --since --after "
    "--until --before --author --committer --grep --all-match --invert-grep -i "
    "--regexp-ignore-case -E -F -P --extended-regexp --fixed-strings --perl-regexp --merges "
    "--no-merges --first-parent --reverse --date --format --pretty --abbrev-commit "
    "--no-abbrev-commit --follow --branches --tags --remotes --left-right --cherry-pick "
    "--cherry-mark --cherry --boundary --topo-order --date-order --author-date-order "
    "--walk-reflogs -g --source --use-mailmap --mailmap --full-history "
    "--simplify-by-decoration --ancestry-path -L --parents --children --relative-date "
    "--no-walk --count --max-parents --min-parents --encoding --decorate-refs "
    "--decorate-refs-exclude --exclude --glob --stdin --objects --no-notes --notes "
    "--show-pulls --since-as-filter --in-commit-order --left-only --right-only --expand-tabs "
    "--no-expand-tabs --log-size --name-only --no-merges --show-linear-break --summary"
)
_LOG_VALUES = (
    "-n --max-count --skip --since --after --until --before --author --committer --grep "
    "--date --format -L --max-parents --min-parents --encoding --decorate-refs "
    "--decorate-refs-exclude --exclude --glob"
)


def _git(flags: str = "", values: str = "", runs: str = "", writes: str = "") -> Options:
    return _opts(flags + " " + values + " --help", values, writes, runs, numeric=True)


_GIT_DIFF = _git(_DIFF, _DIFF_VALUES, "--ext-diff --textconv", "--output")
_GIT_LOG = _git(
    _DIFF + " " + _LOG,
    _DIFF_VALUES + " " + _LOG_VALUES,
    "--ext-diff --textconv --show-signature",
    "--output",
)
_GIT_SUBCOMMANDS: dict[str, Options] = {
    "status": _git(
        "-s --short -b --branch --porcelain --long -v --verbose -u --untracked-files "
        "--ignored --ignore-submodules -z --column --no-column --ahead-behind "
        "--no-ahead-behind --renames --no-renames --find-renames --show-stash",
        "",
    ),
    "diff": _GIT_DIFF,
    "diff-tree": _GIT_DIFF,
    "diff-files": _GIT_DIFF,
    "diff-index": _GIT_DIFF,
    "log": _GIT_LOG,
    "show": _GIT_LOG,
    "whatchanged": _GIT_LOG,
    "rev-list": _GIT_LOG,
    "shortlog": _git(_LOG + " -s --summary -e --email --group -w", _LOG_VALUES + " --group"),
    "blame": _git(
        "-L -l -t -p --porcelain --line-porcelain -e -w -M -C -s -n -f --root --show-stats "
        "--date --abbrev --incremental -c --reverse --first-parent --color-lines "
        "--color-by-age --ignore-rev --ignore-revs-file --contents --progress --no-progress "
        "--show-name --show-number --show-email",
        "-L --date --ignore-rev --ignore-revs-file --contents",
    ),
    "rev-parse": _git(
        "--show-toplevel --abbrev-ref --short --verify --git-dir --is-inside-work-tree "
        "--is-inside-git-dir --show-prefix --show-cdup --symbolic-full-name --symbolic -q "
        "--quiet --all --branches --tags --remotes --git-common-dir --is-bare-repository "
        "--absolute-git-dir --show-superproject-working-tree --local-env-vars --sq "
        "--show-object-format --default --prefix --path-format --git-path",
        "--default --prefix --path-format --git-path",
    ),
    "ls-files": _git(
        "-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others "
        "--ignored --stage --unmerged --killed --directory --no-empty-directory --eol "
        "--exclude-standard -x --exclude -X --exclude-from --exclude-per-directory "
        "--full-name --recurse-submodules --abbrev --error-unmatch --with-tree --format "
        "--deduplicate --sparse",
        "-x --exclude -X --exclude-from --exclude-per-directory --with-tree --format",
    ),
    "ls-tree": _git(
        "-d -r -t -l -z --long --name-only --name-status --object-only --full-name "
        "--full-tree --abbrev --format",
        "--format",
    ),
    "describe": _git(
        "--all --tags --contains --abbrev --candidates --exact-match --debug --long --match "
        "--exclude --always --first-parent --dirty --broken",
        "--candidates --match --exclude",
    ),
    "grep": _git(
        "--cached --no-index --untracked --no-exclude-standard --exclude-standard "
        "--recurse-submodules -a --text --no-textconv -i --ignore-case -I --max-depth -r "
        "--recursive --no-recursive -w --word-regexp -v --invert-match -h -H --full-name -E "
        "--extended-regexp -G --basic-regexp -P --perl-regexp -F --fixed-strings -n "
        "--line-number --column -l --files-with-matches --name-only -L "
        "--files-without-match -z --null -o --only-matching -c --count --color --no-color "
        "--break --heading -p --show-function -A -B -C -W --function-context -m --max-count "
        "--threads -f -e --and --or --not --all-match -q --quiet",
        "--max-depth -A -B -C -m --max-count --threads -f -e",
        "-O --open-files-in-pager --textconv",
    ),
    "cat-file": _git(
        "-t -s -e -p --batch --batch-check --batch-all-objects --follow-symlinks --unordered "
        "--buffer -Z --allow-unknown-type --mailmap --use-mailmap",
        "",
        "--textconv --filters",
    ),
    "show-ref": _git(
        "--head --heads --tags --branches -d --dereference -s --hash --verify --abbrev -q "
        "--quiet --exclude-existing --exists",
    ),
    "for-each-ref": _git(
        "--count --shell --perl --python --tcl --sort --format --color --points-at --merged "
        "--no-merged --contains --no-contains --ignore-case --omit-empty --exclude",
        "--count --sort --format --points-at --exclude",
    ),
    "merge-base": _git("-a --all --octopus --independent --is-ancestor --fork-point"),
    "name-rev": _git(
        "--tags --refs --exclude --all --annotate-stdin --stdin --name-only --no-undefined "
        "--always",
        "--refs --exclude",
    ),
    "check-ignore": _git("-q -v -n -z --stdin --no-index --quiet --verbose --non-matching"),
    "check-attr": _git("-a --all --cached --stdin -z --source", "--source"),
    "count-objects": _git("-v -H --verbose --human-readable"),
    "range-diff": _git(
        _DIFF + " --creation-factor --no-dual-color --left-only --right-only",
        _DIFF_VALUES + " --creation-factor",
        "--ext-diff --textconv",
        "--output",
    ),
    "cherry": _git("-v --abbrev"),
    "version": _git("--build-options"),
    "var": _git("-l"),
    "show-branch": _git(
        "-a -r --all --remotes --topo-order --date-order --current --sparse --more --list "
        "--merge-base --independent --no-name --sha1-name --topics -g --reflog --color "
        "--no-color",
    ),
}
_GIT_LISTING_FLAGS = (
    "-a -r -v -vv --all --remotes --verbose -l --list --show-current --sort --format --color "
    "--no-color --column --no-column --contains --no-contains --merged --no-merged "
    "--points-at -i --ignore-case --abbrev --no-abbrev -n"
)
_GIT_LISTING = _git(_GIT_LISTING_FLAGS, "--sort --format --points-at")
_GIT_ACTIONS: dict[str, dict[str, Options]] = {
    # subcommand: {its read-only actions (first operand): their options}
    "remote": {"": _git("-v --verbose"), "show": _git("-n"), "get-url": _git("--push --all")},
    "stash": {"list": _GIT_LOG, "show": _GIT_DIFF},
    "worktree": {"list": _git("--porcelain -v --verbose -z --expire", "--expire")},
    "reflog": {"": _GIT_LOG, "show": _GIT_LOG},
    "submodule": {
        "status": _git("--cached --recursive -q --quiet"),
        "summary": _git("--cached --files -n --summary-limit", "-n --summary-limit"),
    },
    "notes": {"list": _git(""), "show": _git("")},
    "config": {
        "get": _git(
            "--all --regexp --show-origin --show-scope --type --default "
            "--global --system --local --worktree -z --null --includes "
            "--no-includes --url",
            "--type --default --url",
        ),
        "list": _git(
            "--show-origin --show-scope --name-only -z --null --global "
            "--system --local --worktree --includes --no-includes"
        ),
    },
}
_GIT_CONFIG_READS = _git(
    "--get --get-all --get-regexp --list -l --get-urlmatch --show-origin --show-scope "
    "--name-only -z --null --type --bool --int --bool-or-int --path --expiry-date --global "
    "--system --local --worktree --includes --no-includes --default",
    "--type --default",
)
_GIT_SUB_RUNS: dict[str, tuple[str, ...]] = {
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


def git_subcommand(command: Command) -> tuple[int, list[str]]:
    """(index of git's subcommand in the words, the global options that are never
    read-only: they point git at other configuration, repositories or programs)."""
    words = command.words
    risky: list[str] = []
    i = 1
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            return i, risky
        name = word.split("=", 1)[0]
        if name in _GIT_GLOBAL_RISKY or word[:2] in ("-c", "-C"):
            risky.append(f"git {word} (other configuration, repositories or programs)")
            if word in _GIT_GLOBAL_VALUES:  # its value is the next word
                i += 1
        elif word not in _GIT_GLOBAL_FLAGS:
            risky.append(f"git {word} (an option the analyzer does not know)")
        i += 1
    return len(words), risky


def _git_parse(command: Command) -> Findings:
    """`git` reads when its subcommand (and action) is in the table with known options."""
    found = Findings()
    index, globals_ = git_subcommand(command)
    found.risky += [g for g in globals_ if "does not know" not in g]
    found.unknown += [g for g in globals_ if "does not know" in g]
    if index >= len(command.words):
        return found
    sub = command.words[index]
    rest = command.words[index + 1 :]
    sub_command = Command(
        ("git", *rest), frozenset(i - index for i in command.unknown if i > index)
    )
    if sub in _GIT_SUB_RUNS_ALWAYS:
        found.risky.append(f"git {sub} ({_GIT_SUB_RUNS_ALWAYS[sub]})")
    if sub == "format-patch" and "--stdout" not in rest:
        found.risky.append("git format-patch (writes patch files)")
    if sub == "submodule" and "foreach" in rest:
        found.risky.append("git submodule foreach (runs a command in every submodule)")
    if sub in _GIT_SUB_RUNS:
        found.risky += _matching(sub_command, _GIT_SUB_RUNS[sub], "runs a program")
    spec = _GIT_SUBCOMMANDS.get(sub)
    if spec is None:
        spec = _git_action(sub, list(rest), found)
    if spec is None:
        found.unknown.append(f"git {sub} (not a read-only subcommand the analyzer knows)")
        return found
    scanned = _scan(sub_command, spec)
    found.risky += scanned.risky
    found.unknown += scanned.unknown
    if sub_command.unknown:
        found.unknown.append("a word known only at run time")
    return found


def _git_action(sub: str, rest: list[str], found: Findings) -> Options | None:
    """The options of a listing form of `branch`, `tag`, `config`, `remote`, `stash` …"""
    operands = [w for w in rest if not w.startswith("-")]
    if sub in ("branch", "tag"):
        listing = any(w in ("-l", "--list") for w in rest) or not operands
        return _GIT_LISTING if listing else None
    if sub == "config":
        if operands and operands[0] in ("get", "list"):
            return _GIT_ACTIONS["config"][operands[0]]
        reads = any(
            w.split("=")[0]
            in ("--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch")
            for w in rest
        )
        return _GIT_CONFIG_READS if reads else None
    actions = _GIT_ACTIONS.get(sub)
    if actions is None:
        return None
    return actions.get(operands[0] if operands else "")


def git_read_only(command: Command) -> bool:
    """Whether a git command only reads (its subcommand, operands and options)."""
    found = _git_parse(command)
    return not found.risky and not found.unknown


# --- other programs ----------------------------------------------------------------------

_SSH_VALUES = "bcDEeFIiJLlmOoPpQRSWwB"
_SSH_RISKY_CONFIG = re.compile(
    r"\s*(ProxyCommand|LocalCommand|PermitLocalCommand|KnownHostsCommand|Match|Include|"
    r"PKCS11Provider|SecurityKeyProvider|ControlMaster|ControlPath|ProxyUseFdpass)",
    re.IGNORECASE,
)


def _ssh_check(command: Command) -> list[str]:
    """ssh's options that run local commands or write local files (`-E log`, `-F cfg`)."""
    risky: list[str] = []
    words = command.args
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("-") or word == "-":
            break
        for j, letter in enumerate(word[1:], 1):
            if letter not in _SSH_VALUES:
                continue
            value = word[j + 1 :] or (words[i] if i < len(words) else "")
            i += j == len(word) - 1
            if letter == "o" and _SSH_RISKY_CONFIG.match(value):
                risky.append(f"-o {value} (runs a local command or loads code)")
            elif letter in "FI":
                risky.append(f"-{letter} {value} (configuration or a library that may run code)")
            elif letter == "E":
                risky.append(f"-E {value} (writes a log file)")
            elif letter == "S":
                risky.append(f"-S {value} (a control socket)")
            break
    return risky


def _printf_check(command: Command) -> list[str]:
    first = command.args[0] if command.args else ""
    return [f"{first} (assigns a shell variable)"] if first.startswith("-v") else []


def _less_check(command: Command) -> list[str]:
    return [f"{w} (runs a command in {command.name})" for w in command.args if w[:1] == "+"]


_ANY = Options(any_option=True)
_ANY_NAMES = (
    "echo pwd true false test [ : cd which whereis type basename dirname seq sleep expr nproc "
    "uptime whoami id uname printenv ps free locale getconf tty groups pgrep pidof whatis "
    "apropos cal comm join paste fold fmt expand unexpand rev tac column strings od hexdump "
    "cksum zcat sha256sum sha1sum sha512sum sha224sum sha384sum md5sum b2sum base64 cmp nl "
    "readlink realpath stat df tr"
)

OPTIONS: dict[str, Options] = {
    **{name: _ANY for name in _ANY_NAMES.split()},
    "printf": Options(any_option=True, check=_printf_check),
    "ls": _opts(
        "--all --almost-all --author --escape --block-size --ignore-backups --directory "
        "--dired --classify --file-type --format --full-time --group-directories-first "
        "--no-group --human-readable --si --dereference-command-line "
        "--dereference-command-line-symlink-to-dir --hide --hyperlink --indicator-style "
        "--inode --ignore --kibibytes --dereference --literal --numeric-uid-gid "
        "--hide-control-chars "
        "--show-control-chars --quote-name --quoting-style --reverse --recursive --size --sort "
        "--time --time-style --tabsize --width --context --zero --color --help --version",
        "--block-size --format --hide --indicator-style --ignore --quoting-style --sort --time "
        "--time-style --tabsize --width",
        short="aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
        short_values="ITw",
    ),
    "cat": _opts(
        "--show-all --number-nonblank --show-ends --number --squeeze-blank --show-tabs "
        "--show-nonprinting --help --version",
        short="AbeEnstTuv",
    ),
    "head": _opts(
        "--bytes --lines --quiet --silent --verbose --zero-terminated --help --version",
        "--bytes --lines",
        short="qvz",
        short_values="cn",
        numeric=True,
    ),
    "tail": _opts(
        "--bytes --lines --follow --retry --pid --sleep-interval --max-unchanged-stats "
        "--quiet --silent --verbose --zero-terminated --help --version",
        "--bytes --lines --pid --sleep-interval --max-unchanged-stats",
        short="fFqvzr",
        short_values="cns",
        numeric=True,
    ),
    "wc": _opts(
        "--bytes --chars --lines --words --max-line-length --files0-from --total --help --version",
        "--files0-from --total",
        short="clmwL",
    ),
    "cut": _opts(
        "--bytes --characters --delimiter --fields --complement --only-delimited "
        "--output-delimiter --zero-terminated --help --version",
        "--bytes --characters --delimiter --fields --output-delimiter",
        short="snz",
        short_values="bcdf",
    ),
    **{
        name: _opts(
            "--extended-regexp --fixed-strings --basic-regexp --perl-regexp --ignore-case "
            "--no-ignore-case --invert-match --word-regexp --line-regexp --count "
            "--files-without-match --files-with-matches --only-matching --quiet --silent "
            "--no-messages --byte-offset --with-filename --no-filename --line-number "
            "--initial-tab --null --null-data --text --recursive --dereference-recursive "
            "--line-buffered --color --colour --binary --regexp --file --max-count --label "
            "--binary-files --devices --directories --exclude --exclude-from --exclude-dir "
            "--include --after-context --before-context --context --group-separator "
            "--no-group-separator --help --version",
            "--regexp --file --max-count --label --binary-files --devices --directories "
            "--exclude --exclude-from --exclude-dir --include --after-context "
            "--before-context --context --group-separator",
            short="EFGPiyvwxcLloqsbHhnTZzUraIR",
            short_values="efmABCdD",
            numeric=True,
        )
        for name in ("grep", "egrep", "fgrep")
    },
    "rg": _opts(
        "--ignore-case --smart-case --case-sensitive --word-regexp --line-regexp "
        "--invert-match --count --count-matches --files-with-matches --files-without-match "
        "--files --line-number --no-line-number --with-filename --no-filename --no-heading "
        "--heading --hidden --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-parent "
        "--fixed-strings --pcre2 --multiline --multiline-dotall --json --vimgrep "
        "--only-matching --follow --trim --stats --sort-files --column --no-messages --quiet "
        "--null --text --unrestricted --pretty --type-list --debug --regexp --glob --iglob "
        "--type --type-not --max-count --after-context --before-context --context --threads "
        "--max-columns --max-depth --replace --sort --sortr --color --colors --encoding "
        "--engine --max-filesize --path-separator --type-add --help --version",
        "--regexp --glob --iglob --type --type-not --max-count --after-context "
        "--before-context --context --threads --max-columns --max-depth --replace --sort "
        "--sortr --color --colors --encoding --engine --max-filesize --path-separator "
        "--type-add",
        "",
        "--pre --pre-glob --hostname-bin --search-zip",
        short="isSwxvclnNHIFPUaLpuq0",
        short_values="egtTmABCjMrE",
        numeric=True,
    ),
    "jq": _opts(
        "--raw-output --join-output --ascii-output --compact-output --null-input "
        "--exit-status --slurp --sort-keys --color-output --monochrome-output --tab "
        "--raw-input --seq --stream --stream-errors --arg --argjson --slurpfile --rawfile "
        "--args --jsonargs --indent --raw-output0 --help --version",
        "--arg --argjson --slurpfile --rawfile --indent",
        short="rjacnesSCMRh",
        short_values="L",
    ),
    "diff": _opts(
        "--brief --normal --unified --context --ed --rcs --side-by-side --left-column "
        "--suppress-common-lines --show-c-function --recursive --new-file "
        "--unidirectional-new-file --text --ignore-case --ignore-file-name-case "
        "--no-ignore-file-name-case --ignore-tab-expansion --ignore-trailing-space "
        "--ignore-space-change --ignore-all-space --ignore-blank-lines --strip-trailing-cr "
        "--minimal --speed-large-files --expand-tabs --initial-tab "
        "--report-identical-files --no-dereference --suppress-blank-empty --color --width "
        "--tabsize --label --exclude --exclude-from --ignore-matching-lines "
        "--show-function-line --starting-file --from-file --to-file --line-format "
        "--horizon-lines --palette --help --version",
        "--width --tabsize --label --exclude --exclude-from --ignore-matching-lines "
        "--show-function-line --starting-file --from-file --to-file --line-format "
        "--horizon-lines --palette",
        short="qscueynltTrNawbBiEZpdH",
        short_values="CUDxXIFSW",
    ),
    "du": _opts(
        "--all --apparent-size --bytes --total --dereference-args --human-readable --si "
        "--dereference --no-dereference --count-links --separate-dirs --summarize "
        "--one-file-system --null --inodes --block-size --max-depth --threshold --exclude "
        "--exclude-from --time --time-style --files0-from --help --version",
        "--block-size --max-depth --threshold --exclude --exclude-from --time-style --files0-from",
        short="abcDhHklLmPsSx0",
        short_values="BdtX",
    ),
    "tree": _opts(
        "--noreport --inodes --device --dirsfirst --filesfirst --du --prune --gitignore "
        "--charset --filelimit --timefmt --sort --matchdirs --ignore-case --fromfile "
        "--info --help --version",
        "--charset --filelimit --timefmt --sort",
        "-o",
        short="adlfxpsughDFiqNQrtcvUCnASJX",
        short_values="LPIHT",
    ),
    "find": Options(parse=_find_parse),
    "sort": _opts(
        "--ignore-leading-blanks --dictionary-order --ignore-case --general-numeric-sort "
        "--human-numeric-sort --ignore-nonprinting --month-sort --numeric-sort --random-sort "
        "--reverse --version-sort --check --merge --stable --unique --zero-terminated "
        "--debug --key --field-separator --buffer-size --temporary-directory --parallel "
        "--sort --random-source --batch-size --files0-from --help --version",
        "--key --field-separator --buffer-size --temporary-directory --parallel --sort "
        "--random-source --batch-size --files0-from",
        "-o --output",
        "--compress-program",
        short="bdfghiMnRrVcCmsuz",
        short_values="ktSTy",
    ),
    "uniq": _opts(
        "--count --repeated --all-repeated --group --ignore-case --unique --zero-terminated "
        "--skip-fields --skip-chars --check-chars --help --version",
        "--skip-fields --skip-chars --check-chars",
        short="cdDiuz",
        short_values="fsw",
        check=_second_operand_writes("-f -s -w"),
    ),
    "xxd": _opts(
        "--help --version",
        short="abCEeipruhdv",
        short_values="cglosnR",
        cluster=False,
        check=_second_operand_writes("-c -l -s -o -g -n -C -R"),
    ),
    "less": _opts(
        "--quit-at-eof --QUIT-AT-EOF --quit-if-one-screen --ignore-case --IGNORE-CASE "
        "--status-column --quit-on-intr --LONG-PROMPT --line-numbers --LINE-NUMBERS --quiet "
        "--silent --QUIET --SILENT --raw-control-chars --RAW-CONTROL-CHARS "
        "--chop-long-lines --squeeze-blank-lines --underline-special --no-init --mouse "
        "--pattern --prompt --tabs --jump-target --window --shift --header --help --version",
        "--pattern --prompt --tabs --jump-target --window --shift --header",
        "-o -O --log-file --LOG-FILE",
        "--lesskey-src --lesskey-file --lesskey-content -k",
        short="eEFgGiIJKmMnNqQrRSsuUVwWX~",
        short_values="bhjpPtTxyz",
        numeric=True,
        check=_less_check,
    ),
    "more": _opts("--help --version", short="dlfpcsu", numeric=True, check=_less_check),
    "man": _opts(
        "--all --whatis --apropos --where --path --local-file --help --version",
        "",
        "",
        "-P --pager -H --html",
        short="afkwl",
        short_values="SM",
    ),
    "file": _opts(
        "--brief --mime --mime-type --mime-encoding --dereference --no-dereference "
        "--keep-going --special-files --uncompress --print0 --no-pad --no-buffer "
        "--exclude --files-from --magic-file --separator --help --version",
        "--exclude --files-from --magic-file --separator",
        "-C --compile",
        short="bchiIkLnNprsvzZ0E",
        short_values="efFmP",
    ),
    "date": _opts(
        "--utc --universal --rfc-email --rfc-3339 --iso-8601 --date --file --reference "
        "--debug --help --version",
        "--date --file --reference",
        "-s --set",
        short="uRI",
        short_values="dfr",
    ),
    "hostname": _opts(
        "--short --fqdn --long --ip-address --all-ip-addresses --domain --all-fqdns --help "
        "--version",
        "",
        "-F --file",
        short="sfiIdAay",
        check=_any_operand_writes,
    ),
    "shuf": _opts(
        "--echo --input-range --head-count --random-source --repeat --zero-terminated --help",
        "--input-range --head-count --random-source",
        "-o --output",
        short="erz",
        short_values="inR",
    ),
    "iconv": _opts(
        "--from-code --to-code --list --silent --verbose --help --version",
        "--from-code --to-code",
        "-o --output",
        short="lcs",
        short_values="ft",
    ),
    "yq": Options(read_only=False, enumerated=False, writes=("-i", "--inplace")),
    "ag": Options(any_option=True, runs=("--pager",)),
    "env": _opts(
        "--ignore-environment --null --unset --chdir --debug --help --version",
        "--unset --chdir",
        "",
        "-S --split-string",
        short="i0v",
        short_values="uC",
    ),
    "sed": Options(parse=_sed_parse, writes=("-i", "--in-place"), runs=("-f", "--file")),
    **{name: Options(parse=_awk_parse) for name in ("awk", "gawk", "mawk", "nawk")},
    "tar": Options(parse=_tar_parse),
    "git": Options(parse=_git_parse),
    "curl": Options(
        read_only=False,
        enumerated=False,
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
    "rsync": Options(read_only=False, enumerated=False, runs=("-e", "--rsh", "--rsync-path")),
    "ssh": Options(read_only=False, enumerated=False, check=_ssh_check),
    "scp": Options(read_only=False, enumerated=False, runs=("-S",), check=_ssh_check),
    "sftp": Options(read_only=False, enumerated=False, runs=("-S",), check=_ssh_check),
    "zip": Options(read_only=False, enumerated=False, runs=("-TT", "--unzip-command")),
    **{
        name: Options(read_only=False, enumerated=False, runs=("-c", "--cmd", "-S", "-u"))
        for name in ("vi", "vim", "nvim", "view", "ex", "gvim")
    },
}


def _findings(command: Command) -> Findings | None:
    options = OPTIONS.get(command.name)
    if options is None:
        return None
    if options.parse is not None:
        return options.parse(command)
    if not options.enumerated or options.any_option:
        found = Findings()
        found.risky += _matching(command, options.writes, "writes files", options.exact)
        found.risky += _matching(command, options.runs, "runs other programs", options.exact)
    else:
        found = _scan(command, options)
        if command.unknown - {0}:
            found.unknown.append("a word known only at run time")
    if options.check is not None:
        found.risky += options.check(command)
    return found


def risky_options(command: Command) -> list[str]:
    """What the command's options do beyond reading, per the table ([] when nothing)."""
    found = _findings(command)
    return found.risky if found is not None else []


def unknown_options(command: Command) -> list[str]:
    """The options (or words) of a program in the table that the table does not know."""
    found = _findings(command)
    return found.unknown if found is not None else []


def in_table(command: Command) -> bool:
    """Whether the table enumerates what the command's options do (allow rules then cover
    only known options): its program has an enumerated entry, for git a known subcommand."""
    options = OPTIONS.get(command.name)
    if options is None or not options.enumerated:
        return False
    if command.name == "git":
        index, _ = git_subcommand(command)
        if index < len(command.words):
            sub = command.words[index]
            return sub in _GIT_SUBCOMMANDS or sub in ("branch", "tag", "config", *_GIT_ACTIONS)
    return True


def is_read_only(command: Command) -> bool:
    """Whether the command is proven to only read: its program is read-only in the table and
    every option is known to the table and neither writes nor runs."""
    options = OPTIONS.get(command.name)
    if options is None or not options.read_only:
        return False
    found = _findings(command)
    return found is not None and not found.risky and not found.unknown


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
