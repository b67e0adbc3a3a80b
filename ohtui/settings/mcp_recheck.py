"""Trust in a project's MCP servers checked again before each start, not only at opening.

The user trusted what each server runs, the workspace files it executes included (see
`run_review`); a reconnect, or a server turned on in /mcp, would start what is there then,
which the agent may have edited since. Each start compares what the server would run now
with what it ran when trusted, and refuses a change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ohtui.settings.run_review import changes, review


def unchanged_since_trusted(
    servers: Mapping[str, Any], workspace: Path
) -> Callable[[str], str | None]:
    """For the trusted project `servers` (settings by name), as they are now: why one of them
    may not start any more (None: it may, or it is not one of them)."""
    trusted = {name: review(name, spec, workspace).fingerprint() for name, spec in servers.items()}

    def check(name: str) -> str | None:
        if name not in trusted:
            return None
        now = review(name, servers[name], workspace).fingerprint()
        if now == trusted[name]:
            return None
        what = "; ".join(changes({name: trusted[name]}, {name: now})) or "what it runs"
        return (
            f"not started: what it runs changed since you trusted it ({what}); open ohtui "
            "in this workspace again (or run `ohtui trust`) to review it"
        )

    return check
