"""Confining a conversation's commands as the settings say, or saying why they run
unconfined (the sandbox cannot start here, or ohtui's own code is within its reach)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ohtui.settings import paths

if TYPE_CHECKING:
    from ohtui.sdk import BaseConversation
    from ohtui.sdk.sandbox import SandboxConfig


def install_sandbox(
    conversation: BaseConversation, config: SandboxConfig, config_file: Path | None = None
) -> str | None:
    """Confine the conversation's tools as `config` says, where the sandbox starts; else run
    with `off` and return what to tell the user (what is missing or failed, how to fix it).

    The sandbox is tried with the agent's real shell first, so the mode shown is the mode in
    force. ohtui's own files (`config_file`: the config.toml in use) are out of the agent's
    reach whatever the mode.
    """
    from ohtui.sdk.sandbox import SandboxMode, probe

    def install(chosen: SandboxConfig) -> None:
        conversation.set_sandbox(
            chosen,
            private_paths=paths.private_paths(config_file),
            protected_paths=paths.protected_paths(),
        )

    off = config.model_copy(update={"mode": SandboxMode.OFF})
    if config.mode is not SandboxMode.OFF:
        availability = probe()
        if not availability.available:
            install(off)
            return availability.message
    install(config)
    problem = conversation.check_sandbox()
    if problem:
        install(off)
        return (
            f"No sandbox: {problem}. Commands run unconfined; /sandbox tries again, and "
            "`ohtui --sandbox off` runs without one on purpose."
        )
    own_code = _own_code_in_reach(conversation, config)
    if own_code:
        return (
            f"ohtui itself runs from {own_code}, which sandboxed commands may change: the "
            "next ohtui run would run what they wrote, unconfined. Install ohtui outside the "
            "workspace (pipx install ohtui) for the sandbox to hold."
        )
    if config.mode is not SandboxMode.OFF and config.network:
        from ohtui.sdk.sandbox import landlock

        if landlock.abi_version() < landlock.SCOPE_ABI:
            return (
                "With the network on, sandboxed commands can reach abstract sockets (an X "
                "server, some D-Bus buses): this kernel cannot refuse them (Landlock scopes "
                "need Linux 6.12). Without `network = true` they are out of reach."
            )
    return None


def _own_code_in_reach(conversation: BaseConversation, config: SandboxConfig) -> str | None:
    """Where ohtui's code or its Python environment lies in a path the sandbox lets commands
    write (a virtual environment in the workspace), if it does."""
    import os
    import sys

    import ohtui
    from ohtui.sdk.sandbox import SandboxMode
    from ohtui.sdk.sandbox.boundary import within

    if config.mode is not SandboxMode.WORKSPACE_WRITE:
        return None
    workspace = conversation.workspace.working_dir
    writable = [
        os.path.realpath(os.path.join(workspace, os.path.expanduser(p)))
        for p in (workspace, *config.writable)
    ]
    code = [sys.prefix, os.path.dirname(os.path.abspath(ohtui.__file__))]  # the ohtui package
    for path in map(os.path.realpath, code):
        if within(path, writable):
            return path
    return None
