"""How an MCP server is launched: the sandbox it must start in, its transport (stdio, SSE or
streamable HTTP), the folder a stdio server starts in and the secrets its settings name."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from ohtui.sdk.mcp.config import SECRET_REFERENCE, MCPServerSpec
from ohtui.sdk.mcp.failures import SettingError
from ohtui.sdk.mcp.requests import http_streams

if TYPE_CHECKING:
    from ohtui.sdk.sandbox import Sandbox

NEUTRAL_FOLDER = "/"
"""Where a stdio server without `cwd` starts, unless it is sandboxed: a folder the agent
cannot write (as Claude Desktop starts its servers)."""


@dataclass(frozen=True)
class ServerLauncher:
    """Launches a conversation's servers: in its workspace, with its secrets and sandbox."""

    working_dir: str | None
    secret: Callable[[str], str | None] | None
    sandbox: Callable[[], Sandbox | None] | None

    def confinement(self, spec: MCPServerSpec) -> Sandbox | None:
        """The sandbox a server starts in: the conversation's, for a `sandboxed` stdio server.

        Such a server (a project's, trusted to run confined) never runs unconfined: with the
        conversation's sandbox off, or bubblewrap unable to run, `SettingError` says why it
        is not started and what to do. Asked at every start, reconnects and /mcp included.
        """
        if spec.transport != "stdio" or not spec.sandboxed or self.sandbox is None:
            return None
        sandbox = self.sandbox()
        if sandbox is None or not sandbox.active:
            raise SettingError(
                "not started: it runs only in the sandbox (as it was trusted), and the "
                "sandbox is off; turn it on with /sandbox, then start the server in /mcp"
            )
        from ohtui.sdk.sandbox import probe

        availability = probe()
        if not availability.available:
            raise SettingError(
                "not started: it runs only in the sandbox (as it was trusted), and "
                f"{availability.problem}. {availability.fix}".strip()
            )
        return sandbox

    def transport(
        self, spec: MCPServerSpec, errlog: TextIO | None, sandbox: Sandbox | None = None
    ) -> Any:
        """The SDK's transport context for a server: stdio (in `sandbox`, if given),
        streamable HTTP or SSE."""
        if spec.transport == "stdio":
            from mcp import StdioServerParameters
            from mcp.client.stdio import get_default_environment, stdio_client

            env = {**get_default_environment(), **self.filled(spec, "env", spec.env)}
            cwd = self.folder(spec)
            argv = [spec.command or "", *spec.args]
            if sandbox is not None:
                # Sockets are named by the server's variables and by ours (where its runtime
                # folder is); what the launch changes applies to the server's.
                launch = sandbox.launch(
                    in_folder(argv, cwd, sandbox.workspace), {**os.environ, **env}
                )
                # The SDK starts it through anyio, which runs nothing of ours before exec:
                # the launch's kernel restriction is taken on by a wrapper instead.
                argv, env = launch.wrapped_argv(), launch.environment(env)
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
            return stdio_client(params, errlog=errlog) if errlog else stdio_client(params)
        headers = self.filled(spec, "headers", spec.headers)
        if spec.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(spec.url or "", headers=headers)
        return http_streams(spec.url or "", headers)

    def folder(self, spec: MCPServerSpec) -> str | None:
        """The folder a stdio server starts in: its `cwd` (a relative one within the
        workspace); without one, the workspace for a `sandboxed` server, else NEUTRAL_FOLDER:
        started in the workspace, `python -m name` or `npx name` would run a file the agent
        may have written there, with the user's rights."""
        cwd = spec.cwd
        if cwd is None:
            return self.working_dir if spec.sandboxed else NEUTRAL_FOLDER
        if self.working_dir and not os.path.isabs(cwd):
            return os.path.join(self.working_dir, cwd)
        return cwd

    def filled(self, spec: MCPServerSpec, key: str, values: dict[str, str]) -> dict[str, str]:
        """`env` or `headers` with the secrets they name filled in; ValueError names the
        missing one."""
        out: dict[str, str] = {}
        for name, value in values.items():

            def fill(match: Any, name: str = name) -> str:
                secret = match.group(1) or match.group(2)
                found = self.secret(secret) if self.secret else None
                if found is None:
                    raise SettingError(
                        f"`{key}.{name}` names the secret '{secret}', which is not set: add it "
                        "under Secrets in /settings (it is kept in the keyring)"
                    )
                return found

            out[name] = SECRET_REFERENCE.sub(fill, value)
        return out


def in_folder(argv: list[str], cwd: str | None, workspace: str) -> list[str]:
    """`argv` run in `cwd` (the sandbox starts its command in the workspace)."""
    if cwd is None or os.path.realpath(cwd) == os.path.realpath(workspace):
        return argv
    return ["/bin/sh", "-c", 'cd -- "$1" && shift && exec "$@"', "sh", cwd, *argv]
