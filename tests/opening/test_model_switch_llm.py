"""The LLM /model switches to: the key of the new model's provider (the keyring, a variable),
the address kept only for the same provider, a missing key refused with how to set one."""

from __future__ import annotations

from pathlib import Path

import pytest

from ohtui.opening.model_switch import MissingKeyError, switched_llm, usage_id_for
from ohtui.sdk import LLM
from ohtui.settings.profile import Profile
from ohtui.settings.secrets import SecretStore, probe_keyring


def profile(tmp_path: Path, environ: dict[str, str] | None = None) -> Profile:
    path = tmp_path / "config.toml"
    path.write_text('[llm]\nmodel = "openai/local"\n', encoding="utf-8")
    return Profile(path, use_keyring=True, environ=environ or {}).load()


CURRENT = LLM(
    model="openai/local",
    base_url="http://127.0.0.1:9/v1",
    api_key="sk-local",
    usage_id="agent",
    stream=True,
    timeout=42.0,
    num_retries=1,
)


def test_another_provider_takes_its_key_from_the_keyring_and_no_address(
    tmp_path: Path, os_keyring: object
) -> None:
    SecretStore(probe_keyring()).set_api_key("anthropic", "sk-ant-from-keyring")
    llm = switched_llm(profile(tmp_path), CURRENT, "anthropic/claude-sonnet-4-5")
    assert llm.model == "anthropic/claude-sonnet-4-5"
    assert llm.api_key is not None and llm.api_key.get_secret_value() == "sk-ant-from-keyring"
    assert llm.base_url is None  # the local server's address is not Anthropic's
    assert llm.usage_id == usage_id_for("anthropic/claude-sonnet-4-5") != CURRENT.usage_id
    assert (llm.stream, llm.timeout, llm.num_retries) == (True, 42.0, 1)  # the rest kept
    assert llm.metrics is not CURRENT.metrics


def test_the_same_provider_keeps_the_address_and_its_key(tmp_path: Path, no_keyring: None) -> None:
    llm = switched_llm(profile(tmp_path), CURRENT, "openai/other")
    assert llm.base_url == CURRENT.base_url
    assert llm.api_key is not None and llm.api_key.get_secret_value() == "sk-local"


def test_a_variable_gives_the_key(tmp_path: Path, no_keyring: None) -> None:
    environ = {"GEMINI_API_KEY": "g-key"}
    llm = switched_llm(profile(tmp_path, environ), CURRENT, "gemini/gemini-2.5-pro")
    assert llm.api_key is not None and llm.api_key.get_secret_value() == "g-key"


def test_a_missing_key_is_refused_saying_where_to_set_it(tmp_path: Path, no_keyring: None) -> None:
    with pytest.raises(MissingKeyError) as caught:
        switched_llm(profile(tmp_path), CURRENT, "mistral/mistral-large-latest")
    said = str(caught.value)
    assert "No API key for mistral (mistral/mistral-large-latest)." in said
    assert "MISTRAL_API_KEY" in said and "/settings" in said
    assert "goes on with the model it has" in said


def test_an_unknown_provider_is_named_with_how_models_are_named(
    tmp_path: Path, no_keyring: None
) -> None:
    with pytest.raises(MissingKeyError) as caught:
        switched_llm(profile(tmp_path), CURRENT, "claude/sonnet")
    said = str(caught.value)
    assert "'claude' is not a provider ohtui knows (in 'claude/sonnet')" in said
    assert "anthropic/claude-sonnet-4-5" in said and "CLAUDE_API_KEY" not in said


def test_a_local_provider_needs_no_key(tmp_path: Path, no_keyring: None) -> None:
    llm = switched_llm(profile(tmp_path), CURRENT, "ollama/llama3")
    assert llm.api_key is None and llm.base_url is None


def test_an_empty_name_is_refused(tmp_path: Path, no_keyring: None) -> None:
    with pytest.raises(ValueError, match="Name a model"):
        switched_llm(profile(tmp_path), CURRENT, "  ")
