"""Launch, how to start a program in a sandbox, and `within`: shared by the sandbox and its
bubblewrap command line (which the sandbox builds, so neither imports the other's module)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Launch:
    """How to start a program in the sandbox."""

    argv: list[str]
    env: Mapping[str, str | None] = field(default_factory=dict)
    """Variables to set in the program's environment, or (None) to remove from it."""
    before_exec: Callable[[], None] | None = None
    """To run in the new process before it execs (a kernel restriction to take on)."""

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """`base` with this launch's changes."""
        env = dict(base)
        for name, value in self.env.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        return env

    def wrapped_argv(self) -> list[str]:
        """`argv` taking on `before_exec` itself, for a starter that runs no code of ours
        between fork and exec (the MCP SDK's, through anyio): a small interpreter makes the
        Landlock restriction (the only one a launch carries), then execs `argv`."""
        if self.before_exec is None:
            return list(self.argv)
        from ohtui.sdk.sandbox import landlock

        # -I: no PYTHON* variable, user site or folder of the caller's decides what it runs.
        return [sys.executable, "-I", landlock.__file__, *self.argv]


def within(path: str, roots: Sequence[str]) -> str | None:
    """The first of `roots` that is `path` or holds it, if any."""
    for root in roots:
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return root
    return None
