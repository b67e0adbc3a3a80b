"""FallbackStrategy: when the primary LLM fails for good, profiles answer in turn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM, LLMProfileStore
from ohtui.sdk.llm import (
    FallbackStrategy,
    LLMAuthenticationError,
    LLMServiceUnavailableError,
    Message,
    TextContent,
)
from ohtui.sdk.llm._litellm import litellm

USER = [Message(role="user", content=[TextContent(text="Write a haiku.")])]
USAGE = {"prompt_tokens": 100, "completion_tokens": 10}


@pytest.fixture(autouse=True, scope="module")
def _litellm_imported() -> None:
    """Import litellm up front: mapping a provider's error needs it, and its first import
    takes seconds that belong to no test."""
    litellm()


@pytest.fixture
def backup_server() -> Iterator[ScriptedLLMServer]:
    server = ScriptedLLMServer()
    try:
        yield server
    finally:
        server.close()


def save_profile(folder: Path, name: str, server: ScriptedLLMServer, model: str) -> None:
    llm = LLM(model=model, base_url=server.base_url, num_retries=0, timeout=10, usage_id=name)
    LLMProfileStore(folder).save(name, llm)


def primary(server: ScriptedLLMServer, folder: Path, *names: str) -> LLM:
    return LLM(
        model="openai/primary-model",
        base_url=server.base_url,
        num_retries=0,
        timeout=10,
        fallback_strategy=FallbackStrategy(fallback_llms=list(names), profile_store_dir=folder),
    )


def test_a_transient_failure_is_answered_by_the_first_fallback_that_works(
    llm_server: ScriptedLLMServer, backup_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    save_profile(tmp_path, "broken", llm_server, "openai/broken-model")
    save_profile(tmp_path, "backup", backup_server, "openai/backup-model")
    llm = primary(llm_server, tmp_path, "missing", "broken", "backup")
    llm_server.reply_error(503)  # the primary
    llm_server.reply_error(503)  # the fallback "broken", on the same server
    backup_server.reply_text("Old pond, a frog jumps.", usage=USAGE)

    response = llm.completion(USER)

    assert response.message.text == "Old pond, a frog jumps."
    assert [r["model"] for r in llm_server.requests] == ["primary-model", "broken-model"]
    assert backup_server.requests[0]["model"] == "backup-model"
    usages = llm.metrics.token_usages
    assert [(u.model, u.prompt_tokens) for u in usages] == [("openai/backup-model", 100)]
    assert llm.metrics.accumulated_token_usage.completion_tokens == 10


def test_each_call_starts_with_the_primary_again(
    llm_server: ScriptedLLMServer, backup_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    save_profile(tmp_path, "backup", backup_server, "openai/backup-model")
    llm = primary(llm_server, tmp_path, "backup")
    llm_server.reply_error(429)
    backup_server.reply_text("from the backup")
    llm_server.reply_text("from the primary")

    assert llm.completion(USER).message.text == "from the backup"
    assert llm.completion(USER).message.text == "from the primary"


def test_a_failure_a_fallback_cannot_help_with_is_raised_at_once(
    llm_server: ScriptedLLMServer, backup_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    save_profile(tmp_path, "backup", backup_server, "openai/backup-model")
    llm = primary(llm_server, tmp_path, "backup")
    llm_server.reply_error(401)
    with pytest.raises(LLMAuthenticationError):
        llm.completion(USER)
    assert backup_server.requests == []


def test_when_every_fallback_fails_the_primarys_error_stands(
    llm_server: ScriptedLLMServer, backup_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    save_profile(tmp_path, "backup", backup_server, "openai/backup-model")
    llm = primary(llm_server, tmp_path, "backup")
    llm_server.reply_error(503, "primary is down")
    backup_server.reply_error(500, "backup is down too")
    with pytest.raises(LLMServiceUnavailableError, match="primary is down"):
        llm.completion(USER)
    assert len(backup_server.requests) == 1


def test_the_strategy_is_not_saved_with_the_llm(tmp_path: Path) -> None:
    llm = LLM(
        model="openai/gpt-4o",
        fallback_strategy=FallbackStrategy(fallback_llms=["a"], profile_store_dir=tmp_path),
    )
    assert "fallback_strategy" not in llm.model_dump()
