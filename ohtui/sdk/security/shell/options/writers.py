"""Programs that do more than read (curl, ssh, rsync, editors): only what their options
write or run is known, and they are never read-only."""

from __future__ import annotations

import re

from ohtui.sdk.security.shell.model import Command
from ohtui.sdk.security.shell.options.spec import (
    Options,
)

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


ENTRIES: dict[str, Options] = {
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
        discards=frozenset(
            {"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--stderr"}
            | {"--trace", "--trace-ascii"}
        ),
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
"""Programs that write or run, with the options that say what."""
