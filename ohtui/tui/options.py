"""AppOptions: what the app is started with (from the command line and the environment)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

PolicyName = Literal["always", "risky", "never"]
POLICY_LABELS: dict[str, str] = {
    "always": "always confirm",
    "risky": "confirm risky",
    "never": "never confirm",
}
POLICY_ORDER: tuple[PolicyName, ...] = ("always", "risky", "never")


@dataclass
class AppOptions:
    """Everything the app needs to start; plain data, cheap to import."""

    workspace: Path
    persistence_dir: Path
    history_file: Path
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    resume_id: str | None = None
    policy: PolicyName = "risky"
    stream: bool = True
    clock: Callable[[], float] = field(default=time.monotonic)
    """The clock for elapsed times; tests pass a frozen one for stable snapshots."""
    conversation_id: str | None = None
    """A fixed id for a new conversation (tests); None picks a random one."""
    rules_file: Path | None = None
    """Where approval rules of scope user and workspace are kept (None: not kept)."""
