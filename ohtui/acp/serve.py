"""The `ohtui acp` process: arguments, stdout kept for the protocol, logs to the log file,
and the connection served until stdin closes (or SIGTERM), when every session is closed:
runs stopped, their commands and MCP servers ended.

`initialize` is answered at once: the agent-client-protocol package takes about a second to
import (its schema is hundreds of pydantic models), so it loads on a thread while the first
message is read, and an `initialize` that comes meanwhile is answered from `handshake`
(the same answer the package's route gives). Everything else waits for it, in order.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ohtui.acp.handshake import initialize_result, version_problem
from ohtui.acp.stdio import StdioTransport, error_response, protect_stdout

if TYPE_CHECKING:
    from ohtui.acp.opener import AcpOptions

logger = logging.getLogger(__name__)

STARTED = time.monotonic()


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
    from ohtui.acp.opener import AcpOptions
    from ohtui.logs import log_to_file
    from ohtui.settings import paths
    from ohtui.settings.overrides import run_overrides

    args = build_parser().parse_args(argv)
    protocol = protect_stdout()
    log_to_file()
    options = AcpOptions(
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
    try:
        asyncio.run(serve(options, sys.stdin.buffer, protocol))
    except Exception:  # a bug of ours: logged, and the process still ends cleanly
        logger.exception("ohtui acp failed")
        return 1
    finally:
        logging.shutdown()
    return 0


def _load() -> Any:
    """The protocol package and ohtui's agent (seconds of imports: off the loop)."""
    from acp.agent.connection import AgentSideConnection

    import ohtui.acp.agent  # noqa: F401 - the engine's event and tool types, loaded now

    return AgentSideConnection


async def serve(options: AcpOptions, source: IO[bytes], sink: IO[bytes]) -> None:
    """Serve one client on these streams until the input ends."""
    loop = asyncio.get_running_loop()
    transport = StdioTransport(source, sink)
    transport.start(loop)
    loaded: asyncio.Future[Any] = loop.create_future()

    def load() -> None:
        try:
            result = _load()
        except BaseException as exc:  # noqa: BLE001 - raised on the loop
            loop.call_soon_threadsafe(_settle, loaded, None, exc)
        else:
            loop.call_soon_threadsafe(_settle, loaded, result, None)

    threading.Thread(target=load, name="acp-load", daemon=True).start()
    held = await _early(transport, loaded)
    if held == [None]:
        return  # the input ended with nothing asked but initialize
    transport.hold(held)
    connection_class = await loaded
    from ohtui.acp.agent import OhtuiAgent

    agent = OhtuiAgent(options)
    connection = connection_class(agent, transport, listening=False)
    main_task = asyncio.current_task()
    for signum in (signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, lambda: main_task and main_task.cancel())
    try:
        await connection.listen()
    except asyncio.CancelledError:
        logger.info("ohtui acp: stopped by a signal")
    finally:
        await agent.shutdown()
        # Requests still in flight end with the connection (their failures are logged).
        with contextlib.suppress(Exception):
            await connection.close()


async def _early(transport: StdioTransport, loaded: asyncio.Future[Any]) -> list[Any]:
    """Read messages until the protocol package has loaded, answering `initialize`; the
    others are given back, in order (None last: the input ended)."""
    held: list[Any] = []
    while not loaded.done():
        receiving = asyncio.ensure_future(transport.receive())
        await asyncio.wait({receiving, loaded}, return_when=asyncio.FIRST_COMPLETED)
        if not receiving.done():
            receiving.cancel()
            break
        message = receiving.result()
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
            await transport.send(reply)
            logger.info(
                "initialize answered %.0f ms after start", (time.monotonic() - STARTED) * 1000
            )
            continue
        held.append(message)
    return held


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
