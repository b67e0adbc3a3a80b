"""`ohtui serve` bounds what one request may cost it: a body's size (counted as it arrives,
with or without Content-Length) and its JSON nesting; the same for socket messages."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from pathlib import Path

import httpx
import psutil
import pytest
from llm_server import ScriptedLLMServer
from serve_helpers import Frames, create_payload, is_full_state
from server_process import TEST_KEY, ServerProcess

from ohtui.server.limits import MAX_BODY_BYTES, MAX_DEPTH, MAX_VALUES

MIB = 1 << 20


def rss(server: ServerProcess) -> int:
    assert server.process is not None
    return int(psutil.Process(server.process.pid).memory_info().rss)


def raw_post(
    server: ServerProcess,
    path: str,
    chunks: int,
    chunk: bytes,
    *,
    chunked: bool,
    length: int | None = None,
) -> tuple[int, str, int]:
    """POST `chunks` x `chunk` on a raw socket, stopping when the server answers; (status,
    body, bytes sent)."""
    head = [
        f"POST {path} HTTP/1.1",
        f"Host: 127.0.0.1:{server.port}",
        f"X-Session-API-Key: {TEST_KEY}",
        "Content-Type: application/json",
    ]
    if chunked:
        head.append("Transfer-Encoding: chunked")
    else:
        head.append(f"Content-Length: {length if length is not None else chunks * len(chunk)}")
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sent = 0
    try:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        sock.setblocking(False)
        for _ in range(chunks):
            data = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" if chunked else chunk
            view = memoryview(data)
            while view:
                try:
                    if sock.recv(1, socket.MSG_PEEK):
                        raise StopIteration
                except BlockingIOError:
                    pass
                try:
                    n = sock.send(view)
                except BlockingIOError:
                    time.sleep(0.001)
                    continue
                view = view[n:]
            sent += len(chunk)
        if chunked:
            sock.sendall(b"0\r\n\r\n")
    except (StopIteration, BrokenPipeError, ConnectionResetError):
        pass
    sock.setblocking(True)
    answer = b""
    try:
        while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < _length(answer):
            data = sock.recv(65536)
            if not data:
                break
            answer += data
    finally:
        sock.close()
    status = int(answer.split(b" ", 2)[1])
    return status, answer.split(b"\r\n\r\n", 1)[1].decode(errors="replace"), sent


def _length(answer: bytes) -> int:
    for line in answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":", 1)[1])
    return 1 << 30


@pytest.mark.parametrize("chunked", [True, False])
def test_a_huge_body_is_refused_as_it_arrives(server: ServerProcess, chunked: bool) -> None:
    """The issue's 300 MB body took the server from 69 MB to 918 MB: now it reads no more
    than the limit and answers 413."""
    httpx.get(server.url + "/server_info", timeout=120)  # the engine loaded
    before = rss(server)
    status, body, sent = raw_post(
        server, "/api/conversations", 96, b" " * MIB, chunked=chunked, length=None
    )
    assert status == 413, body
    assert "larger than" in json.loads(body)["detail"]
    assert sent < MAX_BODY_BYTES + 16 * MIB  # it stopped reading near the limit
    assert rss(server) - before < 48 * MIB


def test_a_declared_huge_body_is_refused_before_it_is_sent(server: ServerProcess) -> None:
    status, body, sent = raw_post(
        server, "/api/conversations", 0, b"", chunked=False, length=300 * MIB
    )
    assert status == 413 and sent == 0
    assert "300 MiB" in json.loads(body)["detail"] or "larger than" in json.loads(body)["detail"]


def test_many_tiny_chunks_add_up(server: ServerProcess) -> None:
    status, _, _ = raw_post(
        server, "/api/conversations", (MAX_BODY_BYTES // 65536) + 4, b" " * 65536, chunked=True
    )
    assert status == 413


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 200_000 + b"]" * 200_000,
        b'{"a":' * 200_000 + b"1" + b"}" * 200_000,
        b'[{"a":' * 100_000 + b"1" + b"}]" * 100_000,
        b"[" * 200_000,  # never closed
    ],
    ids=["arrays", "objects", "mixed", "unclosed"],
)
def test_deep_nesting_is_422_with_a_sentence(server: ServerProcess, body: bytes) -> None:
    with server.client() as client:
        response = client.post(
            "/api/conversations", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    assert "nested more than" in detail or "holds more than" in detail
    assert "RecursionError" not in response.text


def nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


def test_nesting_up_to_the_limit_is_fine(
    server: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path
) -> None:
    with server.client() as client:
        fits = {**create_payload(llm_script, tmp_path), "extra": nested(MAX_DEPTH - 1)}
        assert client.post("/api/conversations", json=fits).status_code == 201
        over = {**create_payload(llm_script, tmp_path), "extra": nested(MAX_DEPTH)}
        response = client.post("/api/conversations", json=over)
        assert response.status_code == 422
        assert f"nested more than {MAX_DEPTH} levels deep" in response.json()["detail"]


def test_brackets_in_strings_are_not_nesting(
    server: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path
) -> None:
    with server.client() as client:
        cid = client.post("/api/conversations", json=create_payload(llm_script, tmp_path)).json()[
            "id"
        ]
        title = '\\"[{' * 5000 + '"' + "[" * 5000
        response = client.patch(f"/api/conversations/{cid}", json={"title": title})
        assert response.status_code == 200, response.text
        assert client.get(f"/api/conversations/{cid}").json()["title"] == title


def test_a_huge_number_is_422(server: ServerProcess) -> None:
    with server.client() as client:
        response = client.post(
            "/api/conversations",
            content=b'{"max_iterations": ' + b"9" * 100_000 + b"}",
            headers={"Content-Type": "application/json"},
        )
    assert response.status_code == 422, response.text


def test_a_huge_header_is_refused(server: ServerProcess) -> None:
    """uvicorn (h11) reads at most 64 KiB of headers: it drops the connection."""
    try:
        response = httpx.get(
            server.url + "/api/conversations/count",
            headers={"X-Session-API-Key": TEST_KEY, "Cookie": "a" * (1 << 20)},
        )
    except httpx.TransportError:
        pass
    else:
        assert response.status_code in (400, 413, 431)
    assert httpx.get(server.url + "/alive").status_code == 200


# --- the event socket -----------------------------------------------------------------


@pytest.fixture
def conversation(server: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path) -> str:
    with server.client() as client:
        response = client.post("/api/conversations", json=create_payload(llm_script, tmp_path))
    return str(response.json()["id"])


def test_a_huge_socket_message_closes_the_socket(server: ServerProcess, conversation: str) -> None:
    frames = Frames(f"{server.ws_url}/sockets/events/{conversation}", TEST_KEY)
    frames.wait_for(is_full_state())
    before = rss(server)
    with contextlib.suppress(Exception):  # the server may close while we still send
        frames.send({"role": "user", "content": "x" * (MAX_BODY_BYTES + MIB)})
    assert frames.wait_closed() == 1009  # message too big
    assert rss(server) - before < 48 * MIB


def test_a_deep_socket_message_is_answered_and_the_socket_stays(
    server: ServerProcess, conversation: str, llm_script: ScriptedLLMServer
) -> None:
    frames = Frames(f"{server.ws_url}/sockets/events/{conversation}", TEST_KEY)
    try:
        frames.wait_for(is_full_state())
        frames._socket.send("[" * 200_000 + "]" * 200_000)
        error = frames.wait_for(lambda f: f.get("kind") == "ServerErrorEvent")
        assert f"nested more than {MAX_DEPTH} levels deep" in error["detail"]
        llm_script.reply_text("still here")
        frames.send({"role": "user", "content": [{"type": "text", "text": "hi"}]})
        frames.wait_for(is_full_state("finished"), timeout=180)
    finally:
        frames.close()


def test_a_binary_socket_message_is_answered(server: ServerProcess, conversation: str) -> None:
    frames = Frames(f"{server.ws_url}/sockets/events/{conversation}", TEST_KEY)
    try:
        frames.wait_for(is_full_state())
        frames._socket.send(b"\x00\x01binary")
        error = frames.wait_for(lambda f: f.get("kind") == "ServerErrorEvent")
        assert "text" in error["detail"]
    finally:
        frames.close()


# --- tries of the same classes, not designed around -----------------------------------


def test_a_body_of_exactly_the_limit_is_read(server: ServerProcess) -> None:
    body = b"{" + b" " * (MAX_BODY_BYTES - 2) + b"}"
    status, text, _ = raw_post(
        server, "/api/conversations", 1, body, chunked=False, length=MAX_BODY_BYTES
    )
    assert status == 422 and "send the agent" in text  # read and parsed, not refused
    status, _, _ = raw_post(server, "/api/conversations", 1, body + b" ", chunked=True, length=None)
    assert status == 413


def test_many_keys_are_422(server: ServerProcess) -> None:
    body = json.dumps({f"k{n}": 0 for n in range(MAX_VALUES + 1)}).encode()
    with server.client() as client:
        response = client.post(
            "/api/conversations", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 422
    assert "values" in response.json()["detail"]


def test_a_string_of_backslashes_and_quotes_is_no_nesting(
    server: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path
) -> None:
    with server.client() as client:
        cid = client.post("/api/conversations", json=create_payload(llm_script, tmp_path)).json()[
            "id"
        ]
        title = "\\" * 100_001 + '"[' * 1000
        assert client.patch(f"/api/conversations/{cid}", json={"title": title}).status_code == 200


def test_a_deep_first_frame_before_auth(server: ServerProcess, conversation: str) -> None:
    from websockets.sync.client import connect

    with connect(f"{server.ws_url}/sockets/events/{conversation}") as socket_:
        socket_.send("[" * 200_000)
        with contextlib.suppress(Exception):
            socket_.recv(timeout=15)
        assert socket_.close_code == 4001
    assert httpx.get(server.url + "/alive").status_code == 200
