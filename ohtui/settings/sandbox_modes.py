"""The sandbox modes a user may choose (`--sandbox`, OHTUI_SANDBOX, config.toml [sandbox]).

The engine's `SandboxMode` values, spelled here with the standard library only: `ohtui
--help` and `ohtui serve --help` list them without importing the engine.
"""

from __future__ import annotations

SANDBOX_MODES = ("workspace-write", "read-only", "off")
"""The sandbox modes, in the order the help lists them."""
