"""The OpenAI-compatible gateway (`/v1`) on a real `ohtui serve`: a stored profile is a
model, a chat completion runs an agent turn, the conversation header continues it."""

from __future__ import annotations

import httpx
from llm_server import ScriptedLLMServer
from server_process import ServerProcess

HEADER = "X-OpenHands-ServerConversation-ID"


def test_a_chat_completion_runs_an_agent_turn(
    server: ServerProcess, llm_script: ScriptedLLMServer
) -> None:
    bearer = {"Authorization": f"Bearer {server.key}"}
    with server.client() as client:
        llm = {"model": "openai/test-model", "base_url": llm_script.base_url, "api_key": "sk-x"}
        llm["num_retries"] = 0
        assert client.post("/api/profiles/demo", json={"llm": llm}).status_code == 201
    models = httpx.get(server.url + "/v1/models", headers=bearer, timeout=30).json()
    assert "openhands_demo" in [m["id"] for m in models["data"]]

    llm_script.reply_tool_call("finish", {"message": "first answer"})
    body = {
        "model": "openhands_demo",
        "messages": [
            {"role": "system", "content": "Answer directly."},
            {"role": "user", "content": "What does a gateway do?"},
        ],
    }
    first = httpx.post(server.url + "/v1/chat/completions", json=body, headers=bearer, timeout=60)
    assert first.status_code == 200, first.text
    assert first.json()["choices"][0]["message"] == {
        "role": "assistant",
        "content": "first answer",
    }
    conversation_id = first.headers[HEADER]
    system = llm_script.requests[-1]["messages"][0]
    assert "Answer directly." in str(system["content"])

    llm_script.reply_text("second answer")
    follow = {"model": "openhands_demo", "messages": [{"role": "user", "content": "And?"}]}
    second = httpx.post(
        server.url + "/v1/chat/completions",
        json=follow,
        headers={**bearer, HEADER: conversation_id},
        timeout=60,
    )
    assert second.status_code == 200, second.text
    assert second.json()["choices"][0]["message"]["content"] == "second answer"
    assert second.headers[HEADER] == conversation_id
    with server.client() as client:
        events = client.get(f"/api/conversations/{conversation_id}/events/count").json()
        assert events >= 4
        client.delete(f"/api/conversations/{conversation_id}")
        client.delete("/api/profiles/demo")


def test_the_gateway_refuses_what_it_cannot_serve(server: ServerProcess) -> None:
    bearer = {"Authorization": f"Bearer {server.key}"}
    url = server.url + "/v1/chat/completions"
    user = [{"role": "user", "content": "hi"}]
    assert httpx.post(url, json={"model": "gpt-4o", "messages": user}).status_code == 401
    wrong = {"Authorization": "Bearer not-the-key"}
    assert httpx.get(server.url + "/v1/models", headers=wrong, timeout=30).status_code == 401
    unknown = httpx.post(url, json={"model": "gpt-4o", "messages": user}, headers=bearer)
    assert unknown.status_code == 404 and "/v1/models" in unknown.json()["error"]["message"]
    missing = httpx.post(url, json={"model": "openhands_nope", "messages": user}, headers=bearer)
    assert missing.status_code == 404
    no_user = {"model": "openhands_nope", "messages": [{"role": "system", "content": "x"}]}
    assert httpx.post(url, json=no_user, headers=bearer).status_code == 400
    streamed = {"model": "openhands_nope", "messages": user, "stream": True}
    assert httpx.post(url, json=streamed, headers=bearer).status_code == 400
    assert httpx.post(url, json={"messages": user}, headers=bearer).status_code == 422
