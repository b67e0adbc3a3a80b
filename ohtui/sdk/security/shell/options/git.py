"""git: its global options and the subcommands (and their options) that only read."""

from __future__ import annotations

from ohtui.sdk.security.shell.model import Command
from ohtui.sdk.security.shell.options.spec import (
    Findings,
    Options,
    matching,
    opts,
    scan,
)

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
    return opts(flags + " " + values + " --help", values, writes, runs, numeric=True)


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
        found.risky += matching(sub_command, _GIT_SUB_RUNS[sub], "runs a program")
    spec = _GIT_SUBCOMMANDS.get(sub)
    if spec is None:
        spec = _git_action(sub, list(rest), found)
    if spec is None:
        found.unknown.append(f"git {sub} (not a read-only subcommand the analyzer knows)")
        return found
    scanned = scan(sub_command, spec)
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


def known_subcommand(command: Command) -> bool:
    """Whether the table knows the git subcommand `command` runs (none named: True)."""
    index, _ = git_subcommand(command)
    if index < len(command.words):
        sub = command.words[index]
        return sub in _GIT_SUBCOMMANDS or sub in ("branch", "tag", "config", *_GIT_ACTIONS)
    return True


ENTRIES: dict[str, Options] = {
    "git": Options(parse=_git_parse),
}
"""git's entry."""
