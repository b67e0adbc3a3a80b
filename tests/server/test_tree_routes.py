"""`ohtui serve`'s conversation tree routes, raw httpx on loopback: `POST .../fork` and
`POST .../navigate` as the OpenHands agent server answers them, HEAD in every
ConversationInfo, and what "the conversation now" means after a move (the active branch)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from llm_server import ScriptedLLMServer
from serve_helpers import Frames, create_payload, user_message
from server_process import ServerProcess

from ohtui.sdk.conversation.impl.remote_catalog import RemoteCatalog
from ohtui.sdk.workspace.remote import RemoteWorkspace


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


def info(client: httpx.Client, cid: str) -> dict[str, Any]:
    response = client.get(f"/api/conversations/{cid}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def events(client: httpx.Client, cid: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = client.get(
        f"/api/conversations/{cid}/events/search", params={"limit": 100}
    ).json()["items"]
    return [e for e in items if e["kind"] != "ConversationStateUpdateEvent"]


def wait_status(client: httpx.Client, cid: str, *statuses: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    status = ""
    while time.monotonic() < deadline:
        status = info(client, cid)["execution_status"]
        if status in statuses:
            return status
        time.sleep(0.05)
    raise AssertionError(f"status {status}, wanted {statuses}")


def turn(client: httpx.Client, cid: str, text: str, status: str = "finished") -> None:
    sent = client.post(f"/api/conversations/{cid}/events", json=user_message(text, run=True))
    assert sent.status_code == 200, sent.text
    wait_status(client, cid, status)


def user_texts(items: list[dict[str, Any]]) -> list[str]:
    return [
        e["llm_message"]["content"][0]["text"]
        for e in items
        if e["kind"] == "MessageEvent" and e["source"] == "user"
    ]


def said_to_llm(llm: ScriptedLLMServer) -> list[str]:
    """The user messages of the last request the LLM got."""
    texts = []
    for message in llm.requests[-1]["messages"]:
        if message["role"] == "user":
            content = message["content"]
            texts.append(content if isinstance(content, str) else content[0]["text"])
    return texts


def two_turns(client: httpx.Client, llm: ScriptedLLMServer, workspace: Path, **extra: Any) -> str:
    cid = create(client, llm, workspace, **extra)
    llm.reply_text("First answer.")
    turn(client, cid, "first question")
    llm.reply_text("Second answer.")
    turn(client, cid, "second question")
    return cid


# --- fork ------------------------------------------------------------------------------


def test_a_fork_copies_everything_starts_idle_and_runs_on_its_own(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = two_turns(
        client,
        llm_script,
        workspace,
        tags={"team": "blue"},
        secrets={"TOKEN": "tok-123"},
        confirmation_policy={"kind": "ConfirmRisky", "threshold": "HIGH"},
    )
    source = info(client, cid)
    source_events = events(client, cid)
    assert source["leaf_event_id"] == source_events[-1]["id"]

    response = client.post(f"/api/conversations/{cid}/fork", json={})
    assert response.status_code == 201, response.text
    fork = response.json()
    fid = fork["id"]
    assert uuid.UUID(fid) != uuid.UUID(cid)
    assert fork["forked_from_conversation_id"] == cid  # dashed, as `id`
    assert fork["forked_from_event_id"] is None  # the whole conversation
    assert fork["leaf_event_id"] == source["leaf_event_id"]
    assert fork["head_is_empty"] is False
    assert fork["execution_status"] == "idle"
    assert fork["tags"] == {}  # as OpenHands: the source's tags are not copied
    assert fork["title"] == source["title"]
    assert fork["confirmation_policy"] == source["confirmation_policy"]
    assert fork["confirmation_policy"]["kind"] == "ConfirmRisky"
    assert fork["secret_registry"]["secret_sources"] == {
        "TOKEN": {"kind": "StaticSecret", "value": "**********"}
    }
    assert fork["ohtui_sandbox"] == source["ohtui_sandbox"]
    assert fork["agent"]["llm"]["model"] == source["agent"]["llm"]["model"]
    assert source["stats"]["usage_to_metrics"]["agent"]["call_count"] == 2
    fresh = fork["stats"]["usage_to_metrics"]["agent"]  # fresh metrics by default
    assert (fresh["call_count"], fresh["accumulated_cost"]) == (0, 0)
    assert [e["id"] for e in events(client, fid)] == [e["id"] for e in source_events]
    assert info(client, fid) | {"updated_at": None} == fork | {"updated_at": None}

    llm_script.reply_text("Third answer, in the fork.")
    turn(client, fid, "third question")
    assert said_to_llm(llm_script) == ["first question", "second question", "third question"]
    assert user_texts(events(client, fid))[-1] == "third question"
    assert [e["id"] for e in events(client, cid)] == [e["id"] for e in source_events]
    assert info(client, fid)["stats"]["usage_to_metrics"]["agent"]["call_count"] == 1
    assert info(client, cid)["forked_from_conversation_id"] is None


def test_a_fork_at_an_event_holds_its_branch_with_its_title_tags_and_metrics(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = two_turns(client, llm_script, workspace)
    first = next(e for e in events(client, cid) if e["kind"] == "MessageEvent")
    wanted = str(uuid.uuid4())
    response = client.post(
        f"/api/conversations/{cid}/fork",
        json={
            "id": wanted,
            "title": "Ask again",
            "tags": {"topic": "retry"},
            "reset_metrics": False,
            "from_event_id": first["id"],
        },
    )
    assert response.status_code == 201, response.text
    fork = response.json()
    assert fork["id"] == wanted
    assert (fork["title"], fork["tags"]) == ("Ask again", {"topic": "retry"})
    assert fork["forked_from_conversation_id"] == cid
    assert fork["forked_from_event_id"] == first["id"]
    assert fork["leaf_event_id"] == first["id"]
    assert fork["stats"]["usage_to_metrics"]["agent"]["call_count"] == 2
    branch = events(client, wanted)
    assert branch[-1]["id"] == first["id"]
    assert user_texts(branch) == ["first question"]
    assert fork["last_user_message_id"] == first["id"]

    listed = {i["id"]: i for i in client.get("/api/conversations/search").json()["items"]}
    assert listed[wanted]["forked_from_conversation_id"] == cid
    assert listed[wanted]["forked_from_event_id"] == first["id"]
    catalog = RemoteCatalog(
        RemoteWorkspace(host=str(client.base_url), api_key=client.headers["X-Session-API-Key"])
    )
    rows = {row.id: row for row in catalog.summaries()}
    assert rows[uuid.UUID(wanted).hex].forked_from == uuid.UUID(cid).hex
    assert rows[uuid.UUID(wanted).hex].forked_at == first["id"]
    assert rows[uuid.UUID(cid).hex].forked_from is None


def test_a_fork_is_refused_with_the_status_openhands_gives(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = create(client, llm_script, workspace)
    taken = create(client, llm_script, workspace)
    fork = f"/api/conversations/{cid}/fork"

    unknown = client.post(f"/api/conversations/{uuid.uuid4()}/fork", json={})
    assert (unknown.status_code, unknown.json()) == (
        404,
        {"detail": "Source conversation not found"},
    )
    assert client.post(
        f"/api/conversations/{uuid.uuid4()}/fork", json={"from_event_id": "x"}
    ).json() == {"detail": "Source conversation not found"}
    for id_ in (taken, cid):
        refused = client.post(fork, json={"id": id_})
        assert refused.status_code == 409
        assert f"Conversation with id {id_} already exists" in refused.json()["detail"]
    bad_event = client.post(fork, json={"from_event_id": "no-such-event"})
    assert (bad_event.status_code, bad_event.json()) == (
        400,
        {"detail": "Unknown from_event_id: no-such-event"},
    )
    for body, says in [
        ({"title": "x" * 201}, "'title' must be a string of 1 to 200 characters"),
        ({"title": "   "}, "'title' must be a string of 1 to 200 characters"),
        ({"id": "not-a-uuid"}, "conversation_id 'not-a-uuid' is not a UUID"),
        ({"tags": ["a"]}, "'tags' must be an object of string values"),
        ({"from_event_id": 7}, "'from_event_id' must be an event id"),
    ]:
        refused = client.post(fork, json=body)
        assert refused.status_code == 422, body
        assert refused.json()["detail"].startswith(says), refused.json()
    ids = {i["id"] for i in client.get("/api/conversations/search").json()["items"]}
    assert len(ids) == len({cid, taken} | ids)  # nothing made by a refused fork
    assert client.post(fork).status_code == 201  # no body: a fork of everything


# --- navigate --------------------------------------------------------------------------


def test_navigate_moves_head_and_the_next_turn_grows_a_sibling_branch(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path, server: ServerProcess
) -> None:
    cid = two_turns(client, llm_script, workspace)
    before = events(client, cid)
    first_user, second_user = [
        e for e in before if e["kind"] == "MessageEvent" and e["source"] == "user"
    ]
    first_answer = before[before.index(first_user) + 1]
    frames = Frames(f"{server.ws_url}/sockets/events/{cid}", server.key)
    try:
        moved = client.post(
            f"/api/conversations/{cid}/navigate", json={"event_id": first_answer["id"]}
        )
        assert moved.status_code == 200, moved.text
        assert moved.json()["leaf_event_id"] == first_answer["id"]
        assert moved.json()["last_user_message_id"] == first_user["id"]
        frames.wait_for(
            lambda f: f.get("key") == "leaf_event_id" and f.get("value") == first_answer["id"]
        )
    finally:
        frames.close()
    assert info(client, cid)["leaf_event_id"] == first_answer["id"]

    llm_script.reply_text("Another second answer.")
    turn(client, cid, "second question, asked again")
    assert said_to_llm(llm_script) == ["first question", "second question, asked again"]
    after = events(client, cid)
    assert [e["id"] for e in after[: len(before)]] == [e["id"] for e in before]  # all kept
    asked_again = after[len(before)]
    assert asked_again["parent_id"] == first_answer["id"]  # a sibling of second_user
    assert second_user["parent_id"] == first_answer["id"]
    now = info(client, cid)
    assert now["leaf_event_id"] == after[-1]["id"]
    assert now["last_user_message_id"] == asked_again["id"]

    emptied = client.post(f"/api/conversations/{cid}/navigate", json={})
    assert emptied.status_code == 200
    assert (emptied.json()["leaf_event_id"], emptied.json()["head_is_empty"]) == (None, True)


def test_navigate_is_refused_for_an_unknown_conversation_or_event_a_bad_body_or_a_run(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = create(client, llm_script, workspace)
    path = f"/api/conversations/{cid}/navigate"
    unknown = client.post(f"/api/conversations/{uuid.uuid4()}/navigate", json={"event_id": "x"})
    assert (unknown.status_code, unknown.json()) == (404, {"detail": "Conversation not found"})
    missing = client.post(path, json={"event_id": "no-such-event"})
    assert (missing.status_code, missing.json()) == (
        404,
        {"detail": "Unknown event_id: no-such-event"},
    )
    assert client.post(path).status_code == 422  # no body at all, as OpenHands
    wrong = client.post(path, json={"event_id": 3})
    assert wrong.status_code == 422
    assert wrong.json()["detail"].startswith("'event_id' must be an event id")

    llm_script.reply_text("Slow answer.", delay=1.5)
    client.post(f"/api/conversations/{cid}/events", json=user_message("hello", run=True))
    wait_status(client, cid, "running")
    first = events(client, cid)[0]["id"]
    busy = client.post(path, json={"event_id": first})
    assert busy.status_code == 409
    assert "The agent is running" in busy.json()["detail"]
    wait_status(client, cid, "finished")
    assert info(client, cid)["leaf_event_id"] == events(client, cid)[-1]["id"]  # not moved


def test_actions_left_on_an_abandoned_branch_are_not_pending(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = create(client, llm_script, workspace, confirmation_policy={"kind": "AlwaysConfirm"})
    llm_script.reply_tool_call("terminal", {"command": "echo hi > hi.txt"})
    turn(client, cid, "make hi.txt", status="waiting_for_confirmation")
    waiting = events(client, cid)
    action = next(e for e in waiting if e["kind"] == "ActionEvent")
    question = next(e for e in waiting if e["kind"] == "MessageEvent")

    moved = client.post(f"/api/conversations/{cid}/navigate", json={"event_id": question["id"]})
    assert moved.status_code == 200
    accepted = client.post(
        f"/api/conversations/{cid}/events/respond_to_confirmation",
        json={"accept": True, "action_ids": [action["id"]]},
    )
    assert accepted.status_code == 422
    assert accepted.json()["detail"] == f"not pending: {action['id']}"
    assert not (workspace / "hi.txt").exists()

    llm_script.reply_text("Not making it, then.")
    turn(client, cid, "never mind the file")
    assert user_texts(events(client, cid))[-1] == "never mind the file"
    assert said_to_llm(llm_script) == ["make hi.txt", "never mind the file"]
    assert not (workspace / "hi.txt").exists()


# --- tries, written after the routes, not designed around them ----------------------------


def test_tries_at_the_tree_routes_get_clear_refusals_and_change_nothing(
    client: httpx.Client, llm_script: ScriptedLLMServer, workspace: Path
) -> None:
    cid = two_turns(client, llm_script, workspace)
    other = create(client, llm_script, workspace)
    llm_script.reply_text("Other answer.")
    turn(client, other, "elsewhere")
    foreign = events(client, other)[-1]["id"]
    head = info(client, cid)["leaf_event_id"]
    count = len(client.get("/api/conversations/search", params={"limit": 100}).json()["items"])

    for body, status in (
        ({"id": "../../etc/passwd"}, 422),
        ({"id": cid}, 409),
        ({"title": "   "}, 422),
        ({"title": "t" * 201}, 422),
        ({"from_event_id": foreign}, 400),
        ({"from_event_id": "' OR 1=1 --"}, 400),
        ({"from_event_id": "__root__"}, 400),
        ({"reset_metrics": [1]}, 422),
    ):
        response = client.post(f"/api/conversations/{cid}/fork", json=body)
        assert response.status_code == status, (body, response.text)
        assert "Traceback" not in response.text
    for body, status in (
        ({"event_id": "__root__"}, 404),
        ({"event_id": foreign}, 404),
        ({"event_id": "x" * 10_000}, 404),
        ({"event_id": 5}, 422),
    ):
        response = client.post(f"/api/conversations/{cid}/navigate", json=body)
        assert response.status_code == status, (body, response.text)
    assert info(client, cid)["leaf_event_id"] == head
    after = client.get("/api/conversations/search", params={"limit": 100}).json()["items"]
    assert len(after) == count  # no fork was made by a refused request
