"""tar: its modes, of which only listing reads."""

from __future__ import annotations

from ohtui.sdk.security.shell.model import Command
from ohtui.sdk.security.shell.options.spec import (
    Findings,
    Options,
    opts,
    scan,
)

_TAR = opts(
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
    found = scan(command, _TAR, tuple(words))
    if command.unknown - {0}:
        found.unknown.append("a word known only at run time")
    return found


ENTRIES: dict[str, Options] = {
    "tar": Options(parse=_tar_parse),
}
"""tar's entry."""
