"""The `ohtui acp` process: arguments, stdout kept for the protocol, logs to the log file,
and the connection served until stdin closes (or SIGTERM), when every session is closed:
runs stopped, their commands and MCP servers ended.

`initialize` is answered at once: the agent-client-protocol package takes about a second to
import (its schema is hundreds of pydantic models) and the engine as much again, so they
load on a thread (asyncio too) while the main thread reads the first messages, and an
`initialize` that comes meanwhile is answered from `handshake` (the answer the package's
route gives). Everything else waits for them, in order.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ohtui.acp.handshake import initialize_result, version_problem
from ohtui.acp.stdio import Empty, StdioTransport, error_response, protect_stdout

if TYPE_CHECKING:
    from ohtui.acp.opener import AcpOptions

logger = logging.getLogger(__name__)

STARTED = time.monotonic()
"""About when the process started (this module is among the first it imports)."""


def build_parser() -> argparse.ArgumentParser:
    """`ohtui acp`'s arguments: this run's overrides of the settings."""
    from ohtui.settings.choices import ConfirmationPolicy
    from ohtui.settings.sandbox_modes import SANDBOX_MODES

    parser = argparse.ArgumentParser(
        prog="ohtui acp",
        description="Serve ohtui's agent to an editor over the Agent Client Protocol (JSON-RPC "
        "on stdin and stdout). The editor starts it; see the README's 'Editors (ACP)'.",
    )
    parser.add_argument("-m", "--model", help="the model to use, e.g. anthropic/claude-sonnet-4-5")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint")
    parser.add_argument(
        "--confirm",
        choices=[policy.value for policy in ConfirmationPolicy],
        default=None,
        help="which actions the editor is asked about (its mode; default: as configured)",
    )
    parser.add_argument(
        "--sandbox", choices=SANDBOX_MODES, default=None, help="as for ohtui (bubblewrap)"
    )
    parser.add_argument("--config", type=Path, metavar="PATH", help="use this config.toml")
    return parser


def main(argv: list[str]) -> int:
    """Parse the arguments, then serve the protocol until stdin closes."""
    args = build_parser().parse_args(argv)
    protocol = protect_stdout()
    transport = StdioTransport(sys.stdin.buffer, protocol)
    transport.start()
    loaded = Loading()
    threading.Thread(target=loaded.run, name="acp-load", daemon=True).start()
    # The loading thread would hold the interpreter for 5 ms at a time: let the reader and
    # the answer to initialize in sooner meanwhile.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        held = early(transport, loaded)
        loaded.wait()
    finally:
        sys.setswitchinterval(interval)
    if loaded.error is not None:
        raise loaded.error
    if held == [None]:
        return 0  # the input ended with nothing asked but initialize
    transport.hold(held)
    import asyncio  # loaded by now

    code = 0
    try:
        asyncio.run(serve(options_from(args), transport))
    except Exception:  # a bug of ours: logged, and the process still ends cleanly
        logger.exception("ohtui acp failed")
        code = 1
    logging.shutdown()
    sys.stderr.flush()
    # Everything the sessions started is closed by now; the interpreter's teardown of the
    # engine's modules (and threads left waiting on a network call) is not worth waiting for:
    # a client gives an agent a second or two after closing stdin, then kills it.
    os._exit(code)


def options_from(args: argparse.Namespace) -> AcpOptions:
    """The options `ohtui acp ARGS` names, with the environment's overrides."""
    from ohtui.acp.opener import AcpOptions
    from ohtui.settings import paths
    from ohtui.settings.overrides import run_overrides

    return AcpOptions(
        config_file=args.config.expanduser() if args.config else paths.config_file(),
        overrides=run_overrides(
            os.environ,
            model=args.model,
            base_url=args.base_url,
            policy=args.confirm,
            sandbox=args.sandbox,
            server=None,
        ),
        environ=os.environ,
    )


class Loading:
    """What the connection needs, loaded on a thread (seconds of imports): asyncio, the
    protocol package, ohtui's agent and the engine; and the log file."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            from ohtui.logs import log_to_file

            handler = log_to_file()
            import asyncio  # noqa: F401

            import acp.agent.connection  # noqa: F401

            import ohtui.acp.agent  # noqa: F401

            handler.addFilter(answered_errors)
        except BaseException as exc:  # noqa: BLE001 - raised on the main thread
            self.error = exc
        finally:
            self.done.set()

    def wait(self) -> None:
        self.done.wait()


def answered_errors(record: logging.LogRecord) -> bool:
    """Whether to log a record: not the protocol package's traceback of an error response
    ohtui raised on purpose (an unknown session, a missing key), which the client has got."""
    from acp import RequestError

    error = record.exc_info[1] if record.exc_info else None
    return not isinstance(error, RequestError)


def early(transport: StdioTransport, loaded: Loading) -> list[Any]:
    """Read messages until everything has loaded, answering `initialize`; the others are
    given back, in order (None last: the input ended)."""
    held: list[Any] = []
    while not loaded.done.is_set():
        message = transport.next(timeout=0.02)
        if isinstance(message, Empty):
            continue
        if message is None:
            held.append(None)
            break
        if message.get("method") == "initialize" and "id" in message and not held:
            params = message.get("params")
            problem = version_problem(params)
            if problem is not None:
                reply = error_response(message["id"], -32602, "Invalid params", problem)
            else:
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result(params)}
            transport.write(reply)
            ANSWERED.append(time.monotonic())
            continue
        held.append(message)
    return held


ANSWERED: list[float] = []
"""When `initialize` was answered before the package had loaded (logged once it has)."""


async def serve(options: AcpOptions, transport: StdioTransport) -> None:
    """Serve one client on the transport until its input ends."""
    import asyncio

    from acp.agent.connection import AgentSideConnection

    from ohtui.acp.agent import OhtuiAgent

    if ANSWERED:
        logger.info("initialize answered %.0f ms after start", (ANSWERED[0] - STARTED) * 1000)
    loop = asyncio.get_running_loop()
    transport.attach(loop)
    agent = OhtuiAgent(options)
    # OhtuiAgent has the methods ohtui serves; the router answers the rest method_not_found.
    connection = AgentSideConnection(cast(Any, agent), transport, listening=False)
    listening = asyncio.ensure_future(connection.listen())
    for signum in (signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, listening.cancel)  # as if stdin had closed
    try:
        await listening
    except asyncio.CancelledError:
        logger.info("ohtui acp: stopped by a signal")
    finally:
        ending = time.monotonic()
        await agent.shutdown()
        logger.info("sessions closed in %.0f ms", (time.monotonic() - ending) * 1000)
        # Requests still in flight end with the connection (their failures are logged).
        with contextlib.suppress(Exception):
            await connection.close()
