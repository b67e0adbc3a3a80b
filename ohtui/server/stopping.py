"""How `ohtui serve` ends: SIGHUP (its terminal or SSH session closed), SIGTERM (a service
manager) and SIGINT (Ctrl+C) alike. The server stops accepting connections, then closes
every conversation (its running command stopped, everything that command started killed,
its state saved; a client still connected meanwhile is answered 503), then the connections;
then the process exits 0. A second signal stops waiting for the connections; it cannot cut
the closing of the conversations short (a few seconds at most: a command that ignores
SIGTERM is killed after two). Started under
`nohup` (SIGHUP ignored), it keeps ignoring SIGHUP. SIGKILL leaves no time for any of it:
the agents' shells then die with the process on their own (`ohtui.sdk.utils.spawn`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import threading
from collections.abc import Iterator
from types import FrameType

import uvicorn

from ohtui.server.app import Engine

STOP_SIGNALS = (signal.SIGHUP, signal.SIGTERM, signal.SIGINT)
"""Each ends the server cleanly."""

logger = logging.getLogger("ohtui.server")


class StoppingServer(uvicorn.Server):
    """uvicorn's server, ended by any of STOP_SIGNALS, closing the conversations before the
    connections (uvicorn would wait for the connections first, and knows no SIGHUP)."""

    def __init__(self, config: uvicorn.Config, engine: Engine) -> None:
        super().__init__(config)
        self.engine = engine
        self.stopped_by: str | None = None

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Handle STOP_SIGNALS while serving (signals reach only the main thread)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        # Started under `nohup` (SIGHUP ignored), a closed terminal must not stop it.
        nohup = signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        wanted = [sig for sig in STOP_SIGNALS if not (nohup and sig is signal.SIGHUP)]
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in wanted}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """Stop serving; a second signal stops waiting for the connections."""
        if self.should_exit:
            self.force_exit = True
        self.should_exit = True
        self.stopped_by = self.stopped_by or signal.Signals(sig).name

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Stop accepting, close the conversations, then what uvicorn closes."""
        logger.info("%s: stopping", self.stopped_by or "asked to stop")
        for server in self.servers:  # no new connection while the conversations close
            server.close()
        await asyncio.get_running_loop().run_in_executor(None, self.engine.close)
        await super().shutdown(sockets)
