"""WebSocketCallbackClient.wait_until_ready: live once the server's state snapshot arrived,
against a real socket server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from websockets.sync.server import ServerConnection, serve

from ohtui.sdk.conversation.impl.websocket_client import SocketStatus, WebSocketCallbackClient

STATE = {"kind": "ConversationStateUpdateEvent", "key": "full_state", "value": {}}
EVENT = {"kind": "PauseEvent", "id": "e1", "source": "user"}


@contextmanager
def socket_server(handler: Callable[[ServerConnection], None]) -> Iterator[str]:
    with serve(handler, "127.0.0.1", 0) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        host, port = server.socket.getsockname()[:2]
        try:
            yield f"ws://{host}:{port}/sockets/events/x"
        finally:
            server.shutdown()


def client(url: str, frames: list[dict[str, Any]]) -> WebSocketCallbackClient:
    socket = WebSocketCallbackClient(url, frames.append, backoff_base=0.05)
    socket.start()
    return socket


def hold(connection: ServerConnection) -> None:
    try:
        connection.recv(timeout=10)
    except Exception:  # the client went away
        return


def test_ready_once_the_state_snapshot_was_handled_not_on_an_earlier_event() -> None:
    release = threading.Event()

    def handler(connection: ServerConnection) -> None:
        connection.send(json.dumps(EVENT))
        release.wait(5)
        connection.send(json.dumps(STATE))
        hold(connection)

    frames: list[dict[str, Any]] = []
    with socket_server(handler) as url:
        socket = client(url, frames)
        try:
            assert socket.wait_until_ready(0.5) is False  # an event is not the snapshot
            assert [f["kind"] for f in frames] == ["PauseEvent"]
            release.set()
            assert socket.wait_until_ready(5) is True
            assert frames[-1]["kind"] == "ConversationStateUpdateEvent"  # handled first
        finally:
            socket.stop()


def test_a_fatal_close_ends_the_wait_at_once() -> None:
    def handler(connection: ServerConnection) -> None:
        connection.close(code=4001, reason="bad key")

    with socket_server(handler) as url:
        socket = client(url, [])
        start = time.monotonic()
        try:
            assert socket.wait_until_ready(20) is False
            assert time.monotonic() - start < 5
            assert socket.status is SocketStatus.FAILED and socket.close_code == 4001
        finally:
            socket.stop()
