"""The environment a user's ohtui runs in, for the benchmarks' subprocesses.

This machine sets PYTHONDONTWRITEBYTECODE, which makes every start compile every module of
ohtui from source; a user's install caches the bytecode on the first run. The benchmarks
measure what the user sees: bytecode cached, and the variable unset in their subprocesses.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def compile_bytecode() -> None:
    """Cache ohtui's bytecode, as a user's first run does."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "ohtui")], check=True)


def user_env(**extra: str) -> dict[str, str]:
    """os.environ as a user has it (bytecode caching on), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env
