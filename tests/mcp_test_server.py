"""A small MCP server for the tests (FastMCP, the official SDK's): add, fail, sleep, echo,
getenv, crash.

`python tests/mcp_test_server.py` serves over stdio; `--http PORT` serves streamable HTTP on
127.0.0.1:PORT/mcp. `--name` changes the server's name, `--crash-on-start` exits at once
after writing to stderr (a server that fails to start).
"""

from __future__ import annotations

import argparse
import os
import sys

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations


def build(name: str, host: str = "127.0.0.1", port: int = 8000) -> FastMCP:
    """The server and its tools."""
    server = FastMCP(name, host=host, port=port, log_level="WARNING")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def fail(msg: str = "boom") -> str:
        """Always fails with `msg`."""
        raise RuntimeError(msg)

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Sleep, then say so (other calls are served meanwhile)."""
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def echo(text: str) -> str:
        """Return `text` as it arrived."""
        return f"echo: {text}"

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def getenv(name: str) -> str:
        """The value of one of the server's environment variables."""
        return os.environ.get(name, "(unset)")

    @server.tool()
    def crash() -> str:
        """Exit the server process at once (a crash)."""
        os._exit(3)

    return server


def main() -> None:
    """Parse the options and serve."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0, help="serve streamable HTTP on this port")
    parser.add_argument("--name", default="ohtui-test")
    parser.add_argument("--crash-on-start", action="store_true")
    options = parser.parse_args()
    if options.crash_on_start:
        print("fatal: cannot open the database", file=sys.stderr)
        sys.exit(2)
    server = build(options.name, port=options.http or 8000)
    if options.http:
        server.run(transport="streamable-http")
    else:
        server.run()


if __name__ == "__main__":
    main()
