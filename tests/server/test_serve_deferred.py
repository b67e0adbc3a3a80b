"""Deferred init (OH_DEFERRED_INIT): `/api/*` answers 503 until `POST /api/init`, which
wants the server's secret key in X-Init-API-Key; `GET /api/init` is open, as upstream's."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from server_process import ServerProcess

INIT_KEY = "bootstrap-secret-key-for-tests-32b!"


@pytest.fixture(scope="module")
def dormant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(
        tmp_path_factory.mktemp("serve-dormant"),
        env={"OH_DEFERRED_INIT": "true", "OH_SECRET_KEY": INIT_KEY},
    ).start()
    try:
        yield process
    finally:
        process.stop()


def test_a_dormant_server_opens_on_init(dormant: ServerProcess) -> None:
    url = dormant.url
    assert httpx.get(url + "/api/init", timeout=30).json() == {"state": "dormant", "error": None}
    with dormant.client() as client:
        closed = client.get("/api/conversations/count")
        assert closed.status_code == 503
        assert "POST /api/init" in closed.json()["detail"]
        # The session key is not the init key.
        assert client.post("/api/init", json={}).status_code == 401
    assert httpx.get(url + "/api/conversations/count", timeout=30).status_code == 401
    refused = httpx.post(
        url + "/api/init",
        json={"conversations_path": "/tmp/x"},
        headers={"X-Init-API-Key": INIT_KEY},
        timeout=30,
    )
    assert refused.status_code == 422 and "conversations_path" in refused.json()["detail"]
    opened = httpx.post(
        url + "/api/init",
        json={"env": {"DEMO_VARIABLE": "1"}, "session_api_keys": ["new-session-key-42"]},
        headers={"X-Init-API-Key": INIT_KEY},
        timeout=30,
    )
    assert opened.status_code == 200, opened.text
    assert opened.json()["state"] == "ready"
    assert httpx.get(url + "/api/init", timeout=30).json()["state"] == "ready"
    again = httpx.post(url + "/api/init", json={}, headers={"X-Init-API-Key": INIT_KEY})
    assert again.status_code == 400
    # The keys delivered replace the one the server started with.
    with dormant.client() as client:
        assert client.get("/api/conversations/count").status_code == 401
    new = {"X-Session-API-Key": "new-session-key-42"}
    assert httpx.get(url + "/api/conversations/count", headers=new, timeout=30).json() == 0


def test_a_server_not_started_dormant_has_no_init(server: ServerProcess) -> None:
    response = httpx.get(server.url + "/api/init", timeout=30)
    assert response.status_code == 404
    assert "OH_DEFERRED_INIT" in response.json()["detail"]
