"""A TCP proxy on loopback whose connections a test can cut, as a flaky network would."""

from __future__ import annotations

import contextlib
import socket
import threading


class TCPProxy:
    """Forwards 127.0.0.1:<port> to `target_port`; `drop()` cuts every open connection."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._refusing = False
        threading.Thread(target=self._accept, name="tcp-proxy", daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def drop(self) -> None:
        """Reset every connection now open (new ones are accepted as before)."""
        with self._lock:
            sockets, self._open = self._open, set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def cut(self) -> None:
        """Reset every open connection and refuse new ones until `restore()`: the network
        is down for as long as the test needs."""
        self._refusing = True
        self.drop()

    def restore(self) -> None:
        """Accept connections again after `cut()`."""
        self._refusing = False

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        self.drop()

    def __enter__(self) -> TCPProxy:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._refusing:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open |= {client, upstream}
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
