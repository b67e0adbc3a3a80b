"""`ohtui acp`: ohtui's engine as an Agent Client Protocol agent on stdin and stdout, for
editors (Zed, JetBrains IDEs, Neovim plugins) and other front ends (Toad).

The same agent, tools, sandbox, approvals, rules, secrets, MCP servers, skills and saved
conversations as the TUI; the client is the UI. A front end of its own: it imports nothing
of the TUI, headless runs or the server. Its modules: `stdio` (the wire), `handshake`
(`initialize`, answered before the protocol package has loaded), `serve` (the process),
`agent` (the protocol's methods), `session` (one conversation: turns, approvals, cancel),
`updates` and `tool_calls` (events as session updates), `permissions`, `prompt_content`,
`client_mcp`, `opener`.
"""

from __future__ import annotations

__all__ = ["main"]


def main(argv: list[str]) -> int:
    """Run `ohtui acp ARGS`; returns the exit code."""
    from ohtui.acp.serve import main as serve_main

    return serve_main(argv)
