"""LLMProfileStore: profiles as the SDK's JSON files, with the API key never in clear."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr
from secret_service import SecretService

from ohtui.sdk import LLM, Cipher, LLMProfileStore
from ohtui.sdk.llm import llm_profile_store
from ohtui.sdk.llm.llm_profile_store import ProfileLimitExceeded
from ohtui.sdk.utils.os_keyring import read_secret

KEY = "sk-profile-0123456789abcdef"
REPO_ROOT = Path(__file__).resolve().parents[3]

UPSTREAM_PROFILE = {
    "model": "gpt-5.5",
    "api_key": "**********",
    "openrouter_site_url": "https://docs.all-hands.dev/",
    "num_retries": 5,
    "retry_min_wait": 8,
    "max_message_chars": 30000,
    "temperature": 0.0,
    "max_output_tokens": 64000,
    "modify_params": True,
    "log_completions": False,
    "log_completions_folder": "logs/completions",
    "reasoning_effort": "high",
    "extended_thinking_budget": 200000,
    "usage_id": "fast",
    "litellm_extra_body": {},
}


@pytest.fixture
def store(tmp_path: Path) -> LLMProfileStore:
    return LLMProfileStore(base_dir=tmp_path / "profiles")


def keyed_llm(**fields: object) -> LLM:
    defaults: dict[str, object] = {
        "model": "openai/gpt-4o",
        "api_key": SecretStr(KEY),
        "usage_id": "fast",
        "temperature": 0.2,
    }
    return LLM.model_validate({**defaults, **fields})


def profile_text(store: LLMProfileStore, name: str) -> str:
    return (store.base_dir / f"{name}.json").read_text(encoding="utf-8")


def test_a_profile_round_trips_with_its_key_redacted(store: LLMProfileStore) -> None:
    store.save("fast", keyed_llm(base_url="http://127.0.0.1:9/v1"))

    data = json.loads(profile_text(store, "fast"))
    assert data["api_key"] == "**********"
    assert data["base_url"] == "http://127.0.0.1:9/v1"
    assert data["schema_version"] == 1
    assert KEY not in profile_text(store, "fast")
    loaded = store.load("fast")
    assert (loaded.model, loaded.usage_id, loaded.temperature) == ("openai/gpt-4o", "fast", 0.2)
    assert loaded.api_key is None
    assert store.list() == ["fast.json"]


def test_with_a_cipher_the_key_is_saved_encrypted(
    store: LLMProfileStore, caplog: pytest.LogCaptureFixture
) -> None:
    cipher = Cipher(Cipher.generate_key())
    store.save("fast", keyed_llm(), include_secrets=True, cipher=cipher)

    saved = json.loads(profile_text(store, "fast"))["api_key"]
    assert saved.startswith("gAAAA") and KEY not in profile_text(store, "fast")
    loaded = store.load("fast", cipher=cipher)
    assert loaded.api_key is not None and loaded.api_key.get_secret_value() == KEY
    assert store.load("fast").api_key is None  # no cipher: no key, and a warning saying so
    assert "encrypted and no cipher was given" in caplog.text


def test_with_an_os_keyring_the_key_is_kept_there(
    store: LLMProfileStore, os_keyring: SecretService
) -> None:
    store.save("fast", keyed_llm(), include_secrets=True)

    text = profile_text(store, "fast")
    assert KEY not in text
    assert json.loads(text)["ohtui_api_key"] == "keyring"
    path = (store.base_dir / "fast.json").resolve()
    assert json.loads(read_secret(f"llm-profile:{path}") or "{}") == {"api_key": KEY}
    loaded = store.load("fast")
    assert loaded.api_key is not None and loaded.api_key.get_secret_value() == KEY

    store.rename("fast", "quick")
    moved = store.load("quick").api_key
    assert moved is not None and moved.get_secret_value() == KEY
    assert read_secret(f"llm-profile:{path}") is None
    store.delete("quick")
    assert read_secret(f"llm-profile:{(store.base_dir / 'quick.json').resolve()}") is None
    assert store.list() == []


def test_saving_without_secrets_forgets_a_key_kept_in_the_keyring(
    store: LLMProfileStore, os_keyring: SecretService
) -> None:
    store.save("fast", keyed_llm(), include_secrets=True)
    store.save("fast", keyed_llm())
    assert "ohtui_api_key" not in json.loads(profile_text(store, "fast"))
    assert read_secret(f"llm-profile:{(store.base_dir / 'fast.json').resolve()}") is None


def test_without_a_keyring_the_key_stays_in_this_process_only(
    store: LLMProfileStore, no_keyring: None, caplog: pytest.LogCaptureFixture
) -> None:
    store.save("fast", keyed_llm(), include_secrets=True)

    assert KEY not in profile_text(store, "fast")
    assert json.loads(profile_text(store, "fast"))["ohtui_api_key"] == "memory"
    assert "kept for this process only" in caplog.text
    loaded = store.load("fast")
    assert loaded.api_key is not None and loaded.api_key.get_secret_value() == KEY

    other = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from ohtui.sdk import LLMProfileStore; "
            "print(LLMProfileStore(sys.argv[1]).load('fast').api_key)",
            str(store.base_dir),
        ],
        cwd=REPO_ROOT,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert other.stdout.strip() == "None"
    assert "it loads without them" in other.stderr


@pytest.mark.parametrize("keep", ["cipher", "keyring", "redacted"])
def test_credential_headers_are_secrets_too(
    store: LLMProfileStore, keep: str, request: pytest.FixtureRequest
) -> None:
    headers = {"Authorization": "Bearer hdr-secret-77", "X-Trace": "plain-trace"}
    cipher = Cipher(Cipher.generate_key()) if keep == "cipher" else None
    if keep == "keyring":
        request.getfixturevalue("os_keyring")
    store.save(
        "h", keyed_llm(extra_headers=headers), include_secrets=keep != "redacted", cipher=cipher
    )

    text = profile_text(store, "h")
    assert "hdr-secret-77" not in text and KEY not in text
    assert json.loads(text)["extra_headers"]["X-Trace"] == "plain-trace"
    loaded = store.load("h", cipher=cipher)
    if keep == "redacted":
        assert loaded.extra_headers == {"X-Trace": "plain-trace"}
    else:
        assert loaded.extra_headers == headers


def test_an_upstream_profile_loads_with_the_fields_ohtui_lacks_ignored(
    store: LLMProfileStore,
) -> None:
    (store.base_dir / "fast.json").write_text(json.dumps(UPSTREAM_PROFILE))
    loaded = store.load("fast")
    assert (loaded.model, loaded.usage_id, loaded.temperature) == ("gpt-5.5", "fast", 0.0)
    assert loaded.max_output_tokens == 64000
    assert loaded.api_key is None


def test_a_plain_text_key_of_an_upstream_profile_is_read_with_a_warning(
    store: LLMProfileStore, caplog: pytest.LogCaptureFixture
) -> None:
    (store.base_dir / "old.json").write_text(json.dumps({"model": "openai/gpt-4o", "api_key": KEY}))
    loaded = store.load("old")
    assert loaded.api_key is not None and loaded.api_key.get_secret_value() == KEY
    assert "plain text" in caplog.text
    assert KEY not in caplog.text


def test_a_value_ohtui_cannot_take_is_dropped_but_a_bad_model_is_an_error(
    store: LLMProfileStore,
) -> None:
    (store.base_dir / "xhigh.json").write_text(
        json.dumps({"model": "openai/gpt-4o", "reasoning_effort": "xhigh"})
    )
    assert store.load("xhigh").reasoning_effort is None
    (store.base_dir / "nomodel.json").write_text(json.dumps({"model": ""}))
    with pytest.raises(ValueError, match="Failed to load profile 'nomodel'"):
        store.load("nomodel")
    (store.base_dir / "broken.json").write_text("{not json")
    with pytest.raises(ValueError, match="Failed to load profile 'broken'"):
        store.load("broken")
    (store.base_dir / "future.json").write_text(
        json.dumps({"model": "openai/gpt-4o", "schema_version": 99})
    )
    with pytest.raises(ValueError, match="schema_version 99"):
        store.load("future")


@pytest.mark.parametrize("name", ["", "../etc/passwd", ".hidden", "a/b", "x" * 65, "sp ace"])
def test_names_that_are_not_plain_file_names_are_refused(store: LLMProfileStore, name: str) -> None:
    with pytest.raises(ValueError, match="Invalid LLM profile name"):
        store.save(name, keyed_llm())
    assert list(store.base_dir.glob("*.json")) == []


def test_a_missing_profile_names_the_ones_there_are(store: LLMProfileStore) -> None:
    store.save("fast", keyed_llm())
    with pytest.raises(FileNotFoundError, match="Profiles: fast"):
        store.load("slow")
    store.delete("slow")  # nothing to delete: no error
    with pytest.raises(FileNotFoundError):
        store.rename("slow", "slower")
    store.save("slow", keyed_llm())
    with pytest.raises(FileExistsError):
        store.rename("fast", "slow")


def test_max_profiles_caps_new_profiles_only(store: LLMProfileStore) -> None:
    store.save("one", keyed_llm(), max_profiles=2)
    store.save("two", keyed_llm(), max_profiles=2)
    store.save("two", keyed_llm(temperature=None), max_profiles=2)  # replacing is fine
    with pytest.raises(ProfileLimitExceeded, match="Profile limit reached"):
        store.save("three", keyed_llm(), max_profiles=2)
    assert store.list() == ["one.json", "two.json"]


def test_summaries_say_whether_a_key_is_kept_without_reading_it(
    store: LLMProfileStore, no_keyring: None
) -> None:
    store.save("bare", LLM(model="openai/gpt-4o"))
    store.save("keyed", keyed_llm(), include_secrets=True)
    (store.base_dir / "broken.json").write_text("[]")
    summaries = store.list_summaries()
    assert [(s["name"], s["api_key_set"]) for s in summaries] == [
        ("bare", False),
        ("keyed", True),
    ]
    llm_profile_store._memory_keys.clear()
