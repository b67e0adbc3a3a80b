"""A program run to its end on a real pseudo-terminal, as a user's terminal runs it.

`run_on_pty(argv)` reads everything the program writes until it exits (or kills it at the
deadline), and says when a marker first reached the terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class PtyRun:
    output: bytes
    """All the program wrote to its terminal."""
    marker_at: float | None
    """When the marker first arrived (time.monotonic()); None: it never did."""


def run_on_pty(
    argv: list[str],
    env: Mapping[str, str] | None = None,
    *,
    marker: bytes | None = None,
    timeout: float = 60,
) -> PtyRun:
    """Run `argv` on a new pseudo-terminal (its own session) until it exits; killed after
    `timeout` seconds."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    output, marker_at = b"", None
    deadline = time.monotonic() + timeout
    try:
        while process.poll() is None and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    output += os.read(master, 65536)
                except OSError:  # the program has exited
                    break
                if marker_at is None and marker is not None and marker in output:
                    marker_at = time.monotonic()
    finally:
        process.kill()
        process.wait()
        os.close(master)
    return PtyRun(output, marker_at)
