"""How a command reaches the shell and its output comes back: the script that sources
the command (and abandons it on a stop), and the framer that cuts the shell's output at
the command's end marker."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping

COMMAND_FD = 59
"""The descriptor the command's text is sourced from: high, clear of a command's own
`exec 3>...` and of bash's `{var}` descriptors, which count up from 10."""


STOP_TRAP = (
    "__ohtui_stop=1; builtin shopt -s extdebug; "
    "builtin trap 'if [[ ${#BASH_SOURCE[@]} -eq 0 ]]; then builtin trap - DEBUG; "
    "builtin shopt -u extdebug; else builtin return 2; fi' DEBUG"
)
"""Bash's USR2 trap: abandon the rest of the command line.

With extdebug, a DEBUG trap returning 2 inside a sourced file or a function makes it return,
so before each further command of the line (in loops and functions too, level by level) bash
returns instead, until it is back in the harness (no BASH_SOURCE), where the trap removes
itself. Set only on a stop, it costs the commands that are never stopped nothing.
"""


class Framer:
    """Passes a command's output on to a sink, up to the sentinel line bash prints after it."""

    def __init__(self, nonce: str, sink: Callable[[bytes], None]) -> None:
        # The sentinel starts with the newline the printf adds, so output lacking a final
        # newline still ends where the sentinel begins.
        self._start = f"\n__OHTUI_DONE_{nonce}__:".encode()
        self._end = f":__OHTUI_END_{nonce}__\n".encode()
        self._sink = sink
        self._buf = b""
        self._in_sentinel = False
        self.done = False
        self.exit_code: int | None = None
        self.working_dir: str | None = None

    def feed(self, chunk: bytes) -> None:
        """Take the next raw bytes read from bash."""
        if self.done:
            return  # e.g. a background job writing after the command ended: nobody's output
        self._buf += chunk
        if not self._in_sentinel:
            start = self._buf.find(self._start)
            if start < 0:
                # Hold back only what could be the beginning of a split sentinel.
                cut = max(len(self._buf) - len(self._start) + 1, 0)
                if cut:
                    self._sink(self._buf[:cut])
                    self._buf = self._buf[cut:]
                return
            if start:
                self._sink(self._buf[:start])
            self._buf = self._buf[start + len(self._start) :]
            self._in_sentinel = True
        end = self._buf.find(self._end)
        if end < 0:
            return
        code, _, cwd = self._buf[:end].decode("utf-8", errors="replace").partition(":")
        self.exit_code = int(code) if code.isdigit() else None
        self.working_dir = cwd or None
        self._buf = b""
        self.done = True

    def flush(self) -> None:
        """Pass on the bytes held back, when the stream ended without a sentinel."""
        if not self.done and not self._in_sentinel and self._buf:
            self._sink(self._buf)
        self._buf = b""


def command_script(command: str, nonce: str, env: Mapping[str, str] | None = None) -> bytes:
    """The input that makes bash run `command` in the current shell, then print a sentinel.

    The command travels as a quoted heredoc and is sourced, so it runs at the top level as if
    typed (`cd`, `export` and `declare` persist, FUNCNAME is empty, errors count lines from
    the command's start), and a syntax error in it only fails the source (status 2). USR2
    stops it (STOP_TRAP); the flag it sets is cleared first, and checked before the command
    starts. `builtin` guards against functions the command may define with these names. `env`
    is exported for this command only (bash reads its input silently, so nothing is echoed)
    and unset afterwards.
    """
    delimiter = f"__OHTUI_CMD_{nonce}__"
    exports = "".join(f"builtin export {k}={shlex.quote(v)}\n" for k, v in (env or {}).items())
    unsets = f"builtin unset {' '.join(env)}\n" if env else ""
    return (
        "__ohtui_stop=\n"
        f"builtin trap {shlex.quote(STOP_TRAP)} USR2\n"
        f"{exports}"
        f"[[ -z $__ohtui_stop ]] && builtin source /dev/fd/{COMMAND_FD} < /dev/null "
        f"{COMMAND_FD}<<'{delimiter}'\n"
        f"{command}\n"
        f"{delimiter}\n"
        "__ohtui_rc=$?\n"
        f"{unsets}"
        "builtin printf '\\n__OHTUI_DONE_%s__:%s:%s:__OHTUI_END_%s__\\n' "
        f'{nonce} "$__ohtui_rc" "$(builtin pwd)" {nonce}\n'
    ).encode()
