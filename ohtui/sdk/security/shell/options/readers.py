"""Programs that only read files, text and the system (ls, cat, grep, sort, jq, diff…),
with every option they take: the bulk of the table."""

from __future__ import annotations

from ohtui.sdk.security.shell.model import Command
from ohtui.sdk.security.shell.options.spec import (
    Options,
    any_operand_writes,
    opts,
    second_operand_writes,
)


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


ENTRIES: dict[str, Options] = {
    **{name: _ANY for name in _ANY_NAMES.split()},
    "printf": Options(any_option=True, check=_printf_check),
    "ls": opts(
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
    "cat": opts(
        "--show-all --number-nonblank --show-ends --number --squeeze-blank --show-tabs "
        "--show-nonprinting --help --version",
        short="AbeEnstTuv",
    ),
    "head": opts(
        "--bytes --lines --quiet --silent --verbose --zero-terminated --help --version",
        "--bytes --lines",
        short="qvz",
        short_values="cn",
        numeric=True,
    ),
    "tail": opts(
        "--bytes --lines --follow --retry --pid --sleep-interval --max-unchanged-stats "
        "--quiet --silent --verbose --zero-terminated --help --version",
        "--bytes --lines --pid --sleep-interval --max-unchanged-stats",
        short="fFqvzr",
        short_values="cns",
        numeric=True,
    ),
    "wc": opts(
        "--bytes --chars --lines --words --max-line-length --files0-from --total --help --version",
        "--files0-from --total",
        short="clmwL",
    ),
    "cut": opts(
        "--bytes --characters --delimiter --fields --complement --only-delimited "
        "--output-delimiter --zero-terminated --help --version",
        "--bytes --characters --delimiter --fields --output-delimiter",
        short="snz",
        short_values="bcdf",
    ),
    **{
        name: opts(
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
    "rg": opts(
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
    "jq": opts(
        "--raw-output --join-output --ascii-output --compact-output --null-input "
        "--exit-status --slurp --sort-keys --color-output --monochrome-output --tab "
        "--raw-input --seq --stream --stream-errors --arg --argjson --slurpfile --rawfile "
        "--args --jsonargs --indent --raw-output0 --help --version",
        "--arg --argjson --slurpfile --rawfile --indent",
        short="rjacnesSCMRh",
        short_values="L",
    ),
    "diff": opts(
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
    "du": opts(
        "--all --apparent-size --bytes --total --dereference-args --human-readable --si "
        "--dereference --no-dereference --count-links --separate-dirs --summarize "
        "--one-file-system --null --inodes --block-size --max-depth --threshold --exclude "
        "--exclude-from --time --time-style --files0-from --help --version",
        "--block-size --max-depth --threshold --exclude --exclude-from --time-style --files0-from",
        short="abcDhHklLmPsSx0",
        short_values="BdtX",
    ),
    "tree": opts(
        "--noreport --inodes --device --dirsfirst --filesfirst --du --prune --gitignore "
        "--charset --filelimit --timefmt --sort --matchdirs --ignore-case --fromfile "
        "--info --help --version",
        "--charset --filelimit --timefmt --sort",
        "-o",
        short="adlfxpsughDFiqNQrtcvUCnASJX",
        short_values="LPIHT",
    ),
    "sort": opts(
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
    "uniq": opts(
        "--count --repeated --all-repeated --group --ignore-case --unique --zero-terminated "
        "--skip-fields --skip-chars --check-chars --help --version",
        "--skip-fields --skip-chars --check-chars",
        short="cdDiuz",
        short_values="fsw",
        check=second_operand_writes("-f -s -w"),
    ),
    "xxd": opts(
        "--help --version",
        short="abCEeipruhdv",
        short_values="cglosnR",
        cluster=False,
        check=second_operand_writes("-c -l -s -o -g -n -C -R"),
    ),
    "less": opts(
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
    "more": opts("--help --version", short="dlfpcsu", numeric=True, check=_less_check),
    "man": opts(
        "--all --whatis --apropos --where --path --local-file --help --version",
        "",
        "",
        "-P --pager -H --html",
        short="afkwl",
        short_values="SM",
    ),
    "file": opts(
        "--brief --mime --mime-type --mime-encoding --dereference --no-dereference "
        "--keep-going --special-files --uncompress --print0 --no-pad --no-buffer "
        "--exclude --files-from --magic-file --separator --help --version",
        "--exclude --files-from --magic-file --separator",
        "-C --compile",
        short="bchiIkLnNprsvzZ0E",
        short_values="efFmP",
    ),
    "date": opts(
        "--utc --universal --rfc-email --rfc-3339 --iso-8601 --date --file --reference "
        "--debug --help --version",
        "--date --file --reference",
        "-s --set",
        short="uRI",
        short_values="dfr",
    ),
    "hostname": opts(
        "--short --fqdn --long --ip-address --all-ip-addresses --domain --all-fqdns --help "
        "--version",
        "",
        "-F --file",
        short="sfiIdAay",
        check=any_operand_writes,
    ),
    "shuf": opts(
        "--echo --input-range --head-count --random-source --repeat --zero-terminated --help",
        "--input-range --head-count --random-source",
        "-o --output",
        short="erz",
        short_values="inR",
    ),
    "iconv": opts(
        "--from-code --to-code --list --silent --verbose --help --version",
        "--from-code --to-code",
        "-o --output",
        short="lcs",
        short_values="ft",
    ),
    "yq": Options(read_only=False, enumerated=False, writes=("-i", "--inplace")),
    "ag": Options(any_option=True, runs=("--pager",)),
    "env": opts(
        "--ignore-environment --null --unset --chdir --debug --help --version",
        "--unset --chdir",
        "",
        "-S --split-string",
        short="i0v",
        short_values="uC",
    ),
}
"""Programs that read, by name."""
