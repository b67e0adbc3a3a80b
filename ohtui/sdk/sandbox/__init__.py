"""The sandbox: bubblewrap confines the agent's shell to the workspace, without a daemon.

In `workspace-write` mode the whole filesystem is read-only but for the workspace, the
conversation's own directory, the extra writable paths and a private /tmp; credential
paths, the application's own files and every other service's socket are out of reach;
without `network` the shell sees only its own loopback. `read-only` makes the workspace
read-only too. `off` runs the shell as it is.

The same boundary holds for the file editor and the task tracker: `Sandbox.check_write`
and `check_read` say why a path is out of bounds.
"""

from ohtui.sdk.sandbox.availability import Availability, probe
from ohtui.sdk.sandbox.boundary import Launch, Sandbox
from ohtui.sdk.sandbox.config import DEFAULT_HIDDEN, SandboxConfig, SandboxMode

__all__ = [
    "DEFAULT_HIDDEN",
    "Availability",
    "Launch",
    "Sandbox",
    "SandboxConfig",
    "SandboxMode",
    "probe",
]
