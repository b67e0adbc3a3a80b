"""A small MCP server for the tests (FastMCP, the official SDK's): add, fail, sleep, echo,
getenv, crash (and write, with `--write-tool`; reach, with `--reach-tool`).

`python tests/mcp_test_server.py` serves over stdio; `--http PORT` serves streamable HTTP on
127.0.0.1:PORT/mcp. `--name` changes the server's name, `--tool-prefix P` puts P before every
tool's name, `--crash-on-start` exits at once after writing to stderr (a server that fails
to start).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations


def build(
    name: str,
    host: str = "127.0.0.1",
    port: int = 8000,
    prefix: str = "",
    with_write: bool = False,
    with_reach: bool = False,
) -> FastMCP:
    """The server and its tools (each named `prefix` + its function's name)."""
    server = FastMCP(name, host=host, port=port, log_level="WARNING")

    def tool(**kwargs: Any) -> Any:
        def register(fn: Any) -> Any:
            return server.tool(name=prefix + fn.__name__, **kwargs)(fn)

        return register

    @tool(annotations=ToolAnnotations(readOnlyHint=True))
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool()
    def fail(msg: str = "boom") -> str:
        """Always fails with `msg`."""
        raise RuntimeError(msg)

    @tool()
    async def sleep(seconds: float) -> str:
        """Sleep, then say so (other calls are served meanwhile)."""
        await anyio.sleep(seconds)
        return f"slept {seconds}"

    @tool(annotations=ToolAnnotations(readOnlyHint=True))
    def echo(text: str) -> str:
        """Return `text` as it arrived."""
        return f"echo: {text}"

    @tool(annotations=ToolAnnotations(readOnlyHint=True))
    def getenv(name: str) -> str:
        """The value of one of the server's environment variables."""
        return os.environ.get(name, "(unset)")

    def write(path: str, text: str) -> str:
        """Write `text` to the file at `path` (as the server's process may)."""
        try:
            with open(path, "w", encoding="utf-8") as stream:
                stream.write(text)
        except OSError as exc:
            return f"not written: {exc.strerror or exc}"
        return f"wrote {path}"

    if with_write:
        tool()(write)

    def reach(address: str) -> str:
        """Connect to the Unix socket at `address` (abstract when it starts with `@`)."""
        import socket

        with socket.socket(socket.AF_UNIX) as sock:
            try:
                sock.connect("\0" + address[1:] if address.startswith("@") else address)
            except OSError as exc:
                return f"not reached: {exc.strerror or exc}"
        return "reached"

    if with_reach:
        tool()(reach)

    @tool()
    def crash() -> str:
        """Exit the server process at once (a crash)."""
        os._exit(3)

    return server


def main() -> None:
    """Parse the options and serve."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0, help="serve streamable HTTP on this port")
    parser.add_argument("--name", default="ohtui-test")
    parser.add_argument("--tool-prefix", default="")
    parser.add_argument("--write-tool", action="store_true")
    parser.add_argument("--reach-tool", action="store_true")
    parser.add_argument("--crash-on-start", action="store_true")
    options = parser.parse_args()
    if options.crash_on_start:
        print("fatal: cannot open the database", file=sys.stderr)
        sys.exit(2)
    port = options.http or 8000
    server = build(
        options.name,
        port=port,
        prefix=options.tool_prefix,
        with_write=options.write_tool,
        with_reach=options.reach_tool,
    )
    if options.http:
        server.run(transport="streamable-http")
    else:
        server.run()


if __name__ == "__main__":
    main()
