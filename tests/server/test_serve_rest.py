"""`ohtui serve` REST routes (notes §1.3, statements 19-22, 25), raw httpx on loopback."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from llm_server import ScriptedLLMServer
from serve_helpers import Frames, create_payload, is_full_state, user_message
from server_process import ServerProcess

SOME_ID = "7d1c9f6e-4b9a-4a43-9a55-1f0e2d6c3b21"
"""A fixed conversation id (test ids must be the same in every xdist worker)."""


@pytest.fixture
def client(server: ServerProcess) -> Any:
    with server.client() as http:
        yield http


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def create(client: httpx.Client, llm: ScriptedLLMServer, workspace: Path, **extra: Any) -> str:
    response = client.post("/api/conversations", json=create_payload(llm, workspace, **extra))
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def wait_status(client: httpx.Client, cid: str, *statuses: str, timeout: float = 180) -> str:
    deadline = time.monotonic() + timeout
    status = ""
    while time.monotonic() < deadline:
        status = client.get(f"/api/conversations/{cid}").json()["execution_status"]
        if status in statuses:
            return status
        time.sleep(0.05)
    raise AssertionError(f"status {status}, wanted {statuses}")


def wait_kinds(client: httpx.Client, cid: str, done: Any, timeout: float = 10) -> list[str]:
    """The event kinds once `done(kinds)` holds (AssertionError after `timeout`)."""
    deadline = time.monotonic() + timeout
    kinds: list[str] = []
    while time.monotonic() < deadline:
        items = client.get(f"/api/conversations/{cid}/events/search").json()["items"]
        kinds = [e["kind"] for e in items]
        if done(kinds):
            return kinds
        time.sleep(0.05)
    raise AssertionError(f"events {kinds}")


def run_turn(client: httpx.Client, cid: str, text: str) -> None:
    assert client.post(f"/api/conversations/{cid}/events", json=user_message(text)).json() == {
        "success": True
    }
    assert client.post(f"/api/conversations/{cid}/run").status_code == 200
    wait_status(client, cid, "finished", "error", "waiting_for_confirmation", "paused")


# --- open probes and auth --------------------------------------------------------------


def test_probes_answer_without_a_key(server: ServerProcess) -> None:
    assert httpx.get(server.url + "/alive").json() == {"status": "ok"}
    assert httpx.get(server.url + "/health").status_code == 200
    assert httpx.get(server.url + "/ready").json() == {"status": "ready"}
    info = httpx.get(server.url + "/server_info", timeout=120).json()  # waits for the engine
    assert info["server"] == "ohtui"
    assert info["capabilities"] == ["per_action_confirmation", "checkpoints"]
    assert {"terminal", "file_editor", "task_tracker"} <= set(info["usable_tools"])


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/conversations/search"),
        ("POST", "/api/conversations"),
        ("GET", f"/api/conversations/{SOME_ID}"),
        ("POST", f"/api/conversations/{SOME_ID}/run"),
        ("GET", f"/api/conversations/{SOME_ID}/events/search"),
    ],
)
def test_api_needs_the_key(server: ServerProcess, method: str, path: str) -> None:
    missing = httpx.request(method, server.url + path)
    wrong = httpx.request(method, server.url + path, headers={"X-Session-API-Key": "nope"})
    assert missing.status_code == 401 and wrong.status_code == 401
    assert missing.json()["detail"].startswith("Unauthorized: send the session API key")


def test_keys_are_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import hmac

    from ohtui.server.auth import KeyChecker

    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    checker = KeyChecker("secret")
    assert checker.accepts("secret") and not checker.accepts("secreT")
    assert not checker.accepts(None)
    assert calls == [(b"secret", b"secret"), (b"secreT", b"secret")]


# --- create, get, list -----------------------------------------------------------------


def test_create_returns_conversation_info(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    response = client.post("/api/conversations", json=create_payload(llm_script, workspace))
    assert response.status_code == 201
    info = response.json()
    for key in (
        "id",
        "agent",
        "workspace",
        "persistence_dir",
        "execution_status",
        "confirmation_policy",
        "stats",
        "title",
    ):
        assert key in info, key
    assert info["execution_status"] == "idle"
    assert info["agent"]["llm"]["api_key"] == "**********"
    assert info["agent"]["system_prompt_extra"] == "ohtui-only"  # echoed as received
    assert info["workspace"]["working_dir"] == str(workspace)
    assert info["confirmation_policy"] == {"kind": "NeverConfirm"}
    assert "sk-test" not in response.text
    again = client.get(f"/api/conversations/{info['id']}")
    assert again.status_code == 200 and again.json()["id"] == info["id"]
    assert "sk-test" not in again.text


def test_create_with_an_existing_id_is_idempotent(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = str(uuid.uuid4())
    first = client.post(
        "/api/conversations", json=create_payload(llm_script, workspace, conversation_id=cid)
    )
    second = client.post(
        "/api/conversations", json=create_payload(llm_script, workspace, conversation_id=cid)
    )
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["id"] == second.json()["id"] == cid


def test_unknown_conversation_is_404(client: httpx.Client) -> None:
    response = client.get(f"/api/conversations/{uuid.uuid4()}")
    assert response.status_code == 404 and response.json() == {"detail": "Not Found"}
    assert client.get("/api/conversations/not-a-uuid").status_code == 404
    assert client.post(f"/api/conversations/{uuid.uuid4()}/run").status_code == 404


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"agent": None}, "send the agent as 'agent'"),
        ({"workspace": {}}, "'workspace' must be an object with a 'working_dir'"),
        ({"max_iterations": 0}, "max_iterations must be a positive integer"),
        ({"confirmation_policy": {"kind": "Maybe"}}, "confirmation_policy: Unexpected kind"),
        ({"conversation_id": "xyz"}, "conversation_id 'xyz' is not a UUID"),
    ],
)
def test_bad_payloads_are_422_with_a_sentence(
    client: httpx.Client,
    llm_script: ScriptedLLMServer,
    workspace: Path,
    change: dict[str, Any],
    message: str,
) -> None:
    payload = {**create_payload(llm_script, workspace), **change}
    if change.get("agent", 1) is None:
        del payload["agent"]
    response = client.post("/api/conversations", json=payload)
    assert response.status_code == 422
    assert message in response.json()["detail"]


def test_unknown_tool_is_422(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    payload = create_payload(llm_script, workspace)
    payload["agent"]["tools"].append({"name": "browser_tool_set"})
    response = client.post("/api/conversations", json=payload)
    assert response.status_code == 422
    assert "unknown tool 'browser_tool_set'" in response.json()["detail"]


def test_body_that_is_not_json_is_422(client: httpx.Client) -> None:
    response = client.post(
        "/api/conversations", content=b"{nope", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422 and "not JSON" in response.json()["detail"]


def test_search_and_count_conversations(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    ids = {create(client, llm_script, workspace) for _ in range(3)}
    total = client.get("/api/conversations/count").json()
    assert isinstance(total, int) and total >= 3
    seen: list[str] = []
    page_id = None
    while True:
        params = {"limit": 2, **({"page_id": page_id} if page_id else {})}
        page = client.get("/api/conversations/search", params=params).json()
        assert len(page["items"]) <= 2
        seen += [item["id"] for item in page["items"]]
        page_id = page["next_page_id"]
        if page_id is None:
            break
    assert ids <= set(seen) and len(seen) == len(set(seen)) == total
    idle = client.get("/api/conversations/search", params={"status": "idle"}).json()["items"]
    assert all(item["execution_status"] == "idle" for item in idle)


# --- a turn, events --------------------------------------------------------------------


@pytest.fixture
def finished(client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path) -> str:
    """A conversation with one finished turn that ran a command."""
    cid = create(client, llm_script, workspace)
    llm_script.reply_tool_call("terminal", {"command": "echo hi", "security_risk": "LOW"})
    llm_script.reply_text("All done: hi")
    run_turn(client, cid, "say hi")
    return cid


def test_turn_finishes_and_events_page(client: httpx.Client, finished: str) -> None:
    base = f"/api/conversations/{finished}/events"
    kinds = [e["kind"] for e in client.get(base + "/search").json()["items"]]
    assert kinds == [
        "SystemPromptEvent",
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "MessageEvent",
    ]
    assert client.get(base + "/count").json() == 5
    pages, page_id = [], None
    while True:
        params = {"limit": 2, **({"page_id": page_id} if page_id else {})}
        page = client.get(base + "/search", params=params).json()
        pages.append([e["kind"] for e in page["items"]])
        page_id = page["next_page_id"]
        if page_id is None:
            break
    assert [k for page in pages for k in page] == kinds and [len(p) for p in pages] == [2, 2, 1]
    newest = client.get(base + "/search", params={"sort_order": "TIMESTAMP_DESC", "limit": 1})
    assert newest.json()["items"][0]["kind"] == "MessageEvent"
    assert newest.json()["items"][0]["source"] == "agent"


def test_event_filters(client: httpx.Client, finished: str) -> None:
    base = f"/api/conversations/{finished}/events"
    messages = client.get(base + "/search", params={"kind": "MessageEvent"}).json()["items"]
    assert [m["source"] for m in messages] == ["user", "agent"]
    assert client.get(base + "/count", params={"source": "environment"}).json() == 1
    body = client.get(base + "/search", params={"body": "ALL DONE"}).json()["items"]
    assert [e["kind"] for e in body] == ["MessageEvent"]
    future = client.get(base + "/count", params={"timestamp__gte": "2999-01-01T00:00:00"})
    assert future.json() == 0
    past = client.get(base + "/count", params={"timestamp__lt": "2999-01-01T00:00:00"})
    assert past.json() == 5
    bad = client.get(base + "/search", params={"sort_order": "SIDEWAYS"})
    assert bad.status_code == 422 and "sort_order" in bad.json()["detail"]
    assert client.get(base + "/search", params={"limit": 101}).status_code == 422


def test_one_event_by_id(client: httpx.Client, finished: str) -> None:
    base = f"/api/conversations/{finished}/events"
    first = client.get(base + "/search", params={"limit": 1}).json()["items"][0]
    assert client.get(f"{base}/{first['id']}").json() == first
    assert client.get(f"{base}/nope").status_code == 404


def test_run_while_running_is_409(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = create(client, llm_script, workspace)
    llm_script.reply_text("slow", delay=1.5)
    client.post(f"/api/conversations/{cid}/events", json=user_message("hi"))
    assert client.post(f"/api/conversations/{cid}/run").status_code == 200
    conflict = client.post(f"/api/conversations/{cid}/run")
    assert conflict.status_code == 409
    assert conflict.json() == {
        "detail": "Conversation already running. Wait for completion or pause first."
    }
    assert wait_status(client, cid, "finished") == "finished"


def test_send_with_run_true_starts_a_run(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = create(client, llm_script, workspace)
    llm_script.reply_text("hi")
    client.post(f"/api/conversations/{cid}/events", json=user_message("hi", run=True))
    assert wait_status(client, cid, "finished") == "finished"
    bad = client.post(
        f"/api/conversations/{cid}/events", json={"role": "assistant", "content": "x"}
    )
    assert bad.status_code == 422 and "only user messages" in bad.json()["detail"]


def test_initial_message_runs_at_once(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    llm_script.reply_text("started")
    cid = create(client, llm_script, workspace, initial_message=user_message("go", run=True))
    assert wait_status(client, cid, "finished") == "finished"


# --- run controls ----------------------------------------------------------------------


def test_pause_mid_run_ends_paused(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = create(client, llm_script, workspace)
    llm_script.reply_tool_call("terminal", {"command": "echo 1", "security_risk": "LOW"}, delay=1)
    llm_script.reply_text("never asked")
    client.post(f"/api/conversations/{cid}/events", json=user_message("go"))
    client.post(f"/api/conversations/{cid}/run")
    wait_status(client, cid, "running")
    assert client.post(f"/api/conversations/{cid}/pause").json() == {"success": True}
    assert wait_status(client, cid, "paused") == "paused"
    wait_kinds(client, cid, lambda kinds: kinds[-1] == "PauseEvent")


def test_interrupt_mid_call_pauses_fast_and_is_recorded(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = create(client, llm_script, workspace)
    llm_script.reply_text("too slow", delay=6)
    client.post(f"/api/conversations/{cid}/events", json=user_message("go"))
    client.post(f"/api/conversations/{cid}/run")
    wait_status(client, cid, "running")
    time.sleep(0.3)  # the LLM call is in flight
    started = time.monotonic()
    assert client.post(f"/api/conversations/{cid}/interrupt").status_code == 200
    assert wait_status(client, cid, "paused", timeout=5) == "paused"
    assert time.monotonic() - started < 2
    kinds = wait_kinds(client, cid, lambda kinds: kinds[-1] == "PauseEvent")
    assert "InterruptEvent" in kinds  # the status is saved a moment before the PauseEvent


def test_confirmation_per_action(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = create(client, llm_script, workspace, confirmation_policy={"kind": "AlwaysConfirm"})
    llm_script.reply_tool_calls(
        [
            ("terminal", {"command": "echo one", "security_risk": "LOW"}),
            ("terminal", {"command": "echo two", "security_risk": "LOW"}),
        ]
    )
    llm_script.reply_text("ran one")
    run_turn(client, cid, "two commands")
    assert wait_status(client, cid, "waiting_for_confirmation")
    base = f"/api/conversations/{cid}/events"
    actions = client.get(base + "/search", params={"kind": "ActionEvent"}).json()["items"]
    one, two = (a["id"] for a in actions)
    respond = base + "/respond_to_confirmation"
    partial = client.post(respond, json={"accept": True, "action_ids": [one]})
    assert partial.status_code == 409 and two in partial.json()["detail"]
    bogus = client.post(respond, json={"accept": False, "reason": "x", "action_ids": ["nope"]})
    assert bogus.status_code == 422 and "not pending: nope" in bogus.json()["detail"]
    reject = client.post(respond, json={"accept": False, "reason": "not two", "action_ids": [two]})
    assert reject.status_code == 200
    assert wait_status(client, cid, "waiting_for_confirmation")  # one still waits
    assert client.post(respond, json={"accept": True, "action_ids": [one]}).status_code == 200
    assert wait_status(client, cid, "finished") == "finished"
    events = client.get(base + "/search").json()["items"]
    rejected = [e for e in events if e["kind"] == "UserRejectObservation"]
    ran = [e for e in events if e["kind"] == "ObservationEvent"]
    assert [r["action_id"] for r in rejected] == [two] and rejected[0][
        "rejection_reason"
    ] == "not two"
    assert [o["action_id"] for o in ran] == [one]


def test_reject_all_sets_idle(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = create(client, llm_script, workspace, confirmation_policy={"kind": "AlwaysConfirm"})
    llm_script.reply_tool_call("terminal", {"command": "echo x", "security_risk": "LOW"})
    run_turn(client, cid, "do it")
    respond = f"/api/conversations/{cid}/events/respond_to_confirmation"
    assert client.post(respond, json={"accept": False, "reason": "no"}).status_code == 200
    assert wait_status(client, cid, "idle") == "idle"
    assert client.post(respond, json={"accept": "yes"}).status_code == 422


def test_policy_analyzer_and_secrets(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = create(client, llm_script, workspace)
    base = f"/api/conversations/{cid}"
    policy = {"policy": {"kind": "ConfirmRisky", "threshold": "MEDIUM"}}
    assert client.post(base + "/confirmation_policy", json=policy).status_code == 200
    assert client.get(base).json()["confirmation_policy"]["kind"] == "ConfirmRisky"
    assert (
        client.post(base + "/security_analyzer", json={"security_analyzer": None}).status_code
        == 200
    )
    secrets = {"secrets": {"DEPLOY_TOKEN": "tok-abcdef123456"}}
    assert client.post(base + "/secrets", json=secrets).status_code == 200
    info = client.get(base)
    assert info.json()["secret_registry"]["secret_sources"]["DEPLOY_TOKEN"] == {
        "kind": "StaticSecret",
        "value": "**********",
    }
    assert "tok-abcdef123456" not in info.text
    bad = client.post(base + "/secrets", json={"secrets": {"1BAD": "x"}})
    assert bad.status_code == 422 and "must be usable as an environment variable" in bad.text


def test_ask_agent_records_nothing(
    client: httpx.Client, llm_script: ScriptedLLMServer, finished: str
) -> None:
    base = f"/api/conversations/{finished}"
    before = client.get(base + "/events/count").json()
    llm_script.reply_text("You said hi.")
    answer = client.post(base + "/ask_agent", json={"question": "what happened?"})
    assert answer.json() == {"response": "You said hi."}
    assert client.get(base + "/events/count").json() == before
    assert client.post(base + "/ask_agent", json={}).status_code == 422
    llm_script.reply_error(500)
    failed = client.post(base + "/ask_agent", json={"question": "again?"})
    assert failed.status_code == 500 and "could not answer" in failed.json()["detail"]


def test_condense_without_condenser_is_409(client: httpx.Client, finished: str) -> None:
    response = client.post(f"/api/conversations/{finished}/condense")
    assert response.status_code == 409
    assert response.json()["detail"].startswith("Cannot condense conversation:")


def test_condense_with_a_condenser(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    payload = create_payload(llm_script, workspace)
    payload["agent"]["condenser"] = {
        "kind": "LLMSummarizingCondenser",
        "llm": {**payload["agent"]["llm"], "usage_id": "condenser"},
        "max_size": 80,
        "keep_first": 1,
    }
    cid = client.post("/api/conversations", json=payload).json()["id"]
    for n in range(3):
        llm_script.reply_text(f"reply {n}")
        run_turn(client, cid, f"message {n}")
    llm_script.reply_text("A summary of the talk.")
    response = client.post(f"/api/conversations/{cid}/condense")
    assert response.status_code == 200, response.text
    kinds = [
        e["kind"] for e in client.get(f"/api/conversations/{cid}/events/search").json()["items"]
    ]
    assert "Condensation" in kinds


def test_patch_title_and_tags_then_delete(client: httpx.Client, finished: str) -> None:
    base = f"/api/conversations/{finished}"
    assert client.patch(base, json={"title": "Saying hi", "tags": {"team": "a"}}).json() == {
        "success": True
    }
    info = client.get(base).json()
    assert info["title"] == "Saying hi" and info["tags"] == {"team": "a"}
    assert client.patch(base, json={"title": "  "}).status_code == 422
    assert client.delete(base).json() == {"success": True}
    assert client.get(base).status_code == 404
    assert client.delete(base).status_code == 404


def test_autotitle_titles_before_the_first_step(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = create(client, llm_script, workspace, autotitle=True)
    llm_script.reply_text("Greeting the agent")
    llm_script.reply_text("hello")
    run_turn(client, cid, "hello there")
    assert client.get(f"/api/conversations/{cid}").json()["title"] == "Greeting the agent"


def test_full_state_follows_every_run(
    server: ServerProcess, client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = create(client, llm_script, workspace)
    frames = Frames(f"{server.ws_url}/sockets/events/{cid}", server.key)
    try:
        frames.wait_for(is_full_state("idle"))
        llm_script.reply_text("one")
        run_turn(client, cid, "first")
        frames.wait_for(is_full_state("finished"))
        statuses = [k for k in frames.kinds() if k.startswith(("execution_status", "full_state"))]
        assert statuses == [
            "full_state=idle",
            "execution_status=running",
            "execution_status=finished",
            "full_state=finished",
        ]
    finally:
        frames.close()


def test_create_with_secrets_and_settings(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = create(
        client,
        llm_script,
        workspace,
        secrets={"API_TOKEN": "tok-0123456789"},
        max_iterations=7,
        stuck_detection=False,
        tags={"ticket": "42"},
    )
    info = client.get(f"/api/conversations/{cid}")
    data = info.json()
    assert data["secret_registry"]["secret_sources"]["API_TOKEN"]["value"] == "**********"
    assert (data["max_iterations"], data["stuck_detection"], data["tags"]) == (
        7,
        False,
        {"ticket": "42"},
    )
    assert "tok-0123456789" not in info.text


def test_a_conversation_open_elsewhere_is_409(
    server: ServerProcess, client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    from ohtui.sdk import LLM, Agent, LocalConversation, Tool

    llm = LLM(model="openai/test-model", base_url=llm_script.base_url, api_key="sk-x")
    held = LocalConversation(
        Agent(llm=llm, tools=[Tool(name="terminal")]),
        workspace=workspace,
        persistence_dir=server.data_dir / "conversations",
        visualizer=None,
    )
    try:
        response = client.get(f"/api/conversations/{held.id}")
        assert response.status_code == 409
        assert "open" in response.json()["detail"].lower()
    finally:
        held.close()
    assert client.get(f"/api/conversations/{held.id}").status_code == 200  # let go: served


def test_lone_surrogates_from_a_client_or_the_model_are_replaced_not_a_failure(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    """JSON's "\\ud800" escape, sent by a client (a message, a title) or by the model: the
    conversation runs, saves, and serves its events as valid text."""
    import json

    def send(method: str, path: str, body: Any) -> httpx.Response:
        data = json.dumps(body)  # ASCII: the lone surrogates travel as "\ud800" escapes
        headers = {"Content-Type": "application/json"}
        return client.request(method, path, content=data, headers=headers)

    cid = create(client, llm_script, workspace)
    llm_script.reply_text("Answer \udfff.")
    sent = send("POST", f"/api/conversations/{cid}/events", user_message("hi \ud800"))
    assert sent.status_code == 200, sent.text
    assert client.post(f"/api/conversations/{cid}/run").status_code == 200
    assert wait_status(client, cid, "finished", "error") == "finished"
    assert send("PATCH", f"/api/conversations/{cid}", {"title": "T \udcff"}).status_code == 200
    events = client.get(f"/api/conversations/{cid}/events/search").json()["items"]
    texts = [e["llm_message"]["content"][0]["text"] for e in events if e["kind"] == "MessageEvent"]
    assert texts == ["hi \ufffd", "Answer \ufffd."]
    assert client.get(f"/api/conversations/{cid}").json()["title"] == "T \ufffd"
