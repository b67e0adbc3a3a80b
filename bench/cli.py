"""Command-line benchmarks for issue 5; run by hand: `.venv/bin/python bench/cli.py`.

Prints the wall time of `ohtui --help` and `ohtui --version` (median of runs, next to a bare
`python -c pass`), and what `--help` imports.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from user_env import compile_bytecode, user_env

HEAVY = ("litellm", "textual", "pydantic", "ohtui.sdk", "keyring", "rich")


def wall(argv: list[str], runs: int = 21) -> float:
    """The median wall time of running `argv`."""
    env = user_env()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, env=env, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    compile_bytecode()
    bare = wall([sys.executable, "-c", "pass"])
    for flag in ("--help", "--version"):
        took = wall([sys.executable, "-m", "ohtui", flag])
        print(f"ohtui {flag}: {took * 1000:.0f} ms wall (python alone {bare * 1000:.0f} ms)")
    probe = "import sys, ohtui.cli; ohtui.cli.build_parser(); print(' '.join(sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], check=True, env=user_env(), capture_output=True, text=True
    ).stdout.split()
    heavy = [name for name in HEAVY if name in loaded]
    print(f"modules loaded for --help: {len(loaded)}; heavy ones: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
