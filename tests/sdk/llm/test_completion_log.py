"""`LLM(log_completions=True)`: one JSON file per call, as the SDK writes them, secrets out."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM, Agent, Conversation
from ohtui.sdk.conversation.secret_registry import SecretRegistry
from ohtui.sdk.llm import LLMCallContext, LLMServiceUnavailableError, Message, TextContent

KEY = "sk-live-0123456789abcdefXYZ"
TOKEN = "tok-deploy-9876543210"
NAME = re.compile(r"^openai__test-model-\d+\.\d{3}-[0-9a-f]{4}(-error)?\.json$")


def make_llm(server: ScriptedLLMServer, folder: Path, **overrides: Any) -> LLM:
    settings: dict[str, Any] = {
        "model": "openai/test-model",
        "base_url": server.base_url,
        "api_key": KEY,
        "num_retries": 0,
        "timeout": 10,
        "log_completions": True,
        "log_completions_folder": str(folder),
    }
    return LLM(**{**settings, **overrides})


def user(text: str) -> list[Message]:
    return [Message(role="user", content=[TextContent(text=text)])]


def only_log(folder: Path) -> tuple[Path, dict[str, Any]]:
    files = sorted(folder.iterdir())
    assert len(files) == 1, files
    return files[0], json.loads(files[0].read_text(encoding="utf-8"))


def test_a_call_is_written_with_its_request_and_answer(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    folder = tmp_path / "logs" / "completions"
    llm = make_llm(llm_server, folder, temperature=0.3)
    llm_server.reply_text("Hello back.", usage={"prompt_tokens": 12, "completion_tokens": 3})
    llm.completion(user("Say hello."))

    path, data = only_log(folder)
    assert NAME.match(path.name), path.name
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert data["messages"] == [{"role": "user", "content": "Say hello."}]
    assert data["kwargs"]["model"] == "openai/test-model"
    assert data["kwargs"]["temperature"] == 0.3
    assert "api_key" not in data["kwargs"]
    message = data["response"]["choices"][0]["message"]
    assert message["content"] == "Hello back."
    assert data["usage_summary"]["prompt_tokens"] == 12
    assert data["usage_summary"]["completion_tokens"] == 3
    assert data["latency_sec"] >= 0
    assert data["timestamp"] > 0
    assert KEY not in path.read_text(encoding="utf-8")


def test_the_api_key_is_masked_even_where_the_conversation_itself_holds_it(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm = make_llm(llm_server, tmp_path, extra_headers={"Authorization": "Bearer hdr-secret-42"})
    llm_server.reply_text(f"You said {KEY}.")
    llm.completion(user(f"My key is {KEY}."))

    path, data = only_log(tmp_path)
    text = path.read_text(encoding="utf-8")
    assert KEY not in text
    assert "hdr-secret-42" not in text
    assert "<secret-hidden>" in data["messages"][0]["content"]
    assert list(data["kwargs"]["extra_headers"]) == ["Authorization"]


def test_secrets_of_the_call_context_are_masked(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    registry = SecretRegistry()
    registry.update_secrets({"DEPLOY_TOKEN": TOKEN})
    llm = make_llm(llm_server, tmp_path)
    llm_server.reply_text("noted")
    context = LLMCallContext(mask=registry.mask_data)
    llm.completion(user(f"the token is {TOKEN}"), call_context=context)

    path, _ = only_log(tmp_path)
    assert TOKEN not in path.read_text(encoding="utf-8")


def test_a_conversation_masks_its_secrets_in_its_llms_logs(
    llm_server: ScriptedLLMServer, tmp_path: Path, workspace: Path
) -> None:
    # The conversation masks its own events; a call made with its LLM outside them (a
    # side question, a hook) is masked in the log through the context it binds.
    folder = tmp_path / "completions"
    llm = make_llm(llm_server, folder)
    conversation = Conversation(agent=Agent(llm=llm, tools=[]), workspace=str(workspace))
    conversation.update_secrets({"DEPLOY_TOKEN": TOKEN})
    llm_server.reply_text("noted")
    llm.completion(user(f"the token is {TOKEN}"))
    conversation.close()

    assert TOKEN in llm_server.requests[0]["messages"][-1]["content"]  # the model saw it
    path, _ = only_log(folder)
    assert TOKEN not in path.read_text(encoding="utf-8")


def test_a_failed_call_is_written_as_an_error_log(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm = make_llm(llm_server, tmp_path)
    llm_server.reply_error(503, f"down, key {KEY}")
    with pytest.raises(LLMServiceUnavailableError):
        llm.completion(user("hi"))

    path, data = only_log(tmp_path)
    assert path.name.endswith("-error.json")
    assert data["error"]["type"] == "LLMServiceUnavailableError"
    assert data["cost"] == 0.0
    assert KEY not in path.read_text(encoding="utf-8")


def test_the_responses_api_is_logged_with_its_input(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm = make_llm(llm_server, tmp_path, api_mode="responses")
    llm_server.reply_text("fine")
    llm.responses(
        [Message(role="system", content=[TextContent(text="Be brief.")]), *user("How are you?")]
    )

    _, data = only_log(tmp_path)
    assert data["llm_path"] == "responses"
    assert data["instructions"] == "Be brief."
    assert "How are you?" in json.dumps(data["input"])


def test_nothing_is_written_when_logging_is_off(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    folder = tmp_path / "completions"
    llm = make_llm(llm_server, folder, log_completions=False)
    llm_server.reply_text("ok")
    llm.completion(user("hi"))
    assert not folder.exists()


def test_an_unwritable_folder_does_not_fail_the_call(
    llm_server: ScriptedLLMServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    llm = make_llm(llm_server, blocker / "completions")
    llm_server.reply_text("still answered")
    assert llm.completion(user("hi")).message.text == "still answered"
    assert "could not write the completion log" in caplog.text
