"""Secret sources as the SDK has them: SecretSource instances, StaticSecret, and LookupSecret
fetched over real HTTP from a server on 127.0.0.1, in a registry and in a conversation.

A looked-up value is exported only to a command that names the secret, fetched afresh for
it (or when a caller asks for it by name), and fetched once by masking, so that it is masked
wherever it shows; each fetch has a timeout. It is never saved or logged, and its credential
headers are saved redacted or encrypted.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from ohtui.sdk import LLM, Agent, Conversation, ObservationEvent, Tool
from ohtui.sdk.conversation import (
    Cipher,
    LookupSecret,
    SecretRegistry,
    SecretSource,
    SecretsUnavailableWarning,
    StaticSecret,
    secret_registry,
)
from ohtui.sdk.conversation.secret_registry import SecretMaskingFilter
from ohtui.sdk.secret import secrets as secret_sources
from ohtui.sdk.tools.terminal import TerminalObservation

MASK = "<secret-hidden>"
VALUE = "vault-value-4242"
BEARER = "Bearer vault-auth-9911"


@dataclass
class VaultServer:
    """A secret server: answers GET with `body` after `delay` s, recording each request."""

    status: int = 200
    body: str = VALUE
    delay: float = 0.0
    requests: list[dict[str, str]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def vault() -> Iterator[VaultServer]:
    state = VaultServer()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append({"path": self.path, **dict(self.headers)})
            time.sleep(state.delay)
            payload = state.body.encode()
            try:
                self.send_response(state.status)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:  # the client gave up (the timeout test)
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    state.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.server.daemon_threads = True
    thread = threading.Thread(target=state.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.server.shutdown()
        state.server.server_close()


class CountingSource(SecretSource):
    """A custom source (module-level: sources are found again by class name on load)."""

    calls: int = 0

    def get_value(self) -> str | None:
        self.calls += 1
        return f"counted-value-{self.calls}"


class BrokenSource(SecretSource):
    def get_value(self) -> str | None:
        raise OSError("the vault is down")


# --- SecretSource instances ---------------------------------------------------------------


def test_source_instances_are_accepted_beside_strings_and_functions() -> None:
    registry = SecretRegistry()
    counting = CountingSource(description="a rotating token")
    registry.update_secrets(
        {
            "PLAIN": "plain-value-1",
            "STATIC": StaticSecret(value=SecretStr("static-value-2"), description="db"),
            "COUNTED": counting,
            "FUNC": lambda: "func-value-3",
        }
    )
    assert registry.secret_sources["COUNTED"] is counting
    assert counting.calls == 0  # adding a source fetches nothing
    # A fixed value is masked at once; masking fetches a looked-up one once to know it.
    assert registry.mask_secrets_in_output("static-value-2 func-value-3") == f"{MASK} {MASK}"
    assert counting.calls == 1
    assert registry.get_secrets_as_env_vars("echo $COUNTED $STATIC") == {
        "COUNTED": "counted-value-2",
        "STATIC": "static-value-2",
    }
    assert registry.mask_secrets_in_output("counted-value-1 counted-value-2") == f"{MASK} {MASK}"
    assert counting.calls == 2
    assert registry.get_secret_infos() == [
        {"name": "PLAIN", "description": None},
        {"name": "STATIC", "description": "db"},
        {"name": "COUNTED", "description": "a rotating token"},
        {"name": "FUNC", "description": None},
    ]


def test_get_secret_value_resolves_one_secret_and_masks_it_from_then_on() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"COUNTED": CountingSource(), "BROKEN": BrokenSource()})
    assert registry.get_secret_value("COUNTED") == "counted-value-1"
    assert registry.mask_secrets_in_output("counted-value-1") == MASK
    assert registry.get_secret_value("BROKEN") is None
    assert registry.get_secret_value("MISSING") is None


def test_get_all_secrets_as_env_vars_resolves_all_but_the_excluded_and_failing() -> None:
    registry = SecretRegistry()
    registry.update_secrets(
        {"KEEP": "keep-value", "DROP": "drop-value", "BROKEN": BrokenSource(), "EMPTY": ""}
    )
    assert registry.get_all_secrets_as_env_vars(exclude={"DROP"}) == {"KEEP": "keep-value"}


def test_track_exported_values_masks_them_and_ignores_empty_ones() -> None:
    registry = SecretRegistry()
    registry.track_exported_values({"REAL": "handed-out-value", "EMPTY": ""})
    assert registry.mask_secrets_in_output("x handed-out-value y") == f"x {MASK} y"
    assert registry.mask_secrets_in_output("hello") == "hello"
    assert registry.get_secrets_as_env_vars("echo $REAL") == {}  # masked, not a secret


def test_a_failing_source_is_skipped_and_its_error_logged_without_values(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = SecretRegistry()
    registry.update_secrets({"BROKEN": BrokenSource(), "GOOD": "good-value-77"})
    with caplog.at_level(logging.DEBUG):
        env = registry.get_secrets_as_env_vars("echo $BROKEN $GOOD")
    assert env == {"GOOD": "good-value-77"}
    assert "BROKEN" in caplog.text and "the vault is down" in caplog.text
    assert "good-value-77" not in caplog.text


# --- masking fetches what it does not know yet ---------------------------------------------


class FlakySource(SecretSource):
    """Fails while `failing` is set; counts every lookup."""

    failing: bool = True
    calls: int = 0

    def get_value(self) -> str | None:
        self.calls += 1
        if self.failing:
            raise OSError("the vault is down")
        return "recovered-value-42"


def test_masking_masks_what_it_can_when_a_source_fails() -> None:
    registry = SecretRegistry()
    counting = CountingSource()
    registry.update_secrets({"BROKEN": BrokenSource(), "COUNTED": counting})
    assert registry.has_values  # there is something to fetch
    assert registry.mask_secrets_in_output("leak: counted-value-1") == f"leak: {MASK}"
    assert registry.mask_secrets_in_output("again: counted-value-1") == f"again: {MASK}"
    assert counting.calls == 1  # fetched once, then known


def test_a_failing_source_is_asked_again_only_after_the_back_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    flaky = FlakySource()
    registry = SecretRegistry()
    registry.update_secrets({"FLAKY": flaky})
    for _ in range(25):
        assert registry.mask_secrets_in_output("recovered-value-42") == "recovered-value-42"
    assert flaky.calls == 1

    monkeypatch.setattr(secret_registry, "FAILED_LOOKUP_RETRY_SECONDS", 0.05)
    time.sleep(0.1)
    flaky.failing = False
    assert registry.mask_secrets_in_output("recovered-value-42") == MASK
    assert registry.mask_secrets_in_output("recovered-value-42") == MASK
    assert flaky.calls == 2


def test_a_replaced_source_is_fetched_again_and_the_old_value_stays_masked() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"TOKEN": lambda: "first-value-1"})
    assert registry.mask_secrets_in_output("first-value-1") == MASK
    registry.update_secrets({"TOKEN": lambda: "second-value-2"})
    assert registry.mask_secrets_in_output("first-value-1 second-value-2") == f"{MASK} {MASK}"


def test_a_source_is_fetched_once_however_many_threads_mask_at_the_same_time() -> None:
    started = threading.Event()
    release = threading.Event()
    calls: list[int] = []

    def slow() -> str:
        calls.append(1)
        started.set()
        release.wait(5)
        return "slow-value-99"

    registry = SecretRegistry()
    registry.update_secrets({"SLOW": slow})
    results: list[str] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(registry.mask_secrets_in_output("slow-value-99"))
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    assert started.wait(5)
    time.sleep(0.05)  # the others are waiting for that fetch, not starting their own
    release.set()
    for thread in threads:
        thread.join(5)
    assert calls == [1]
    assert results == [MASK, MASK, MASK]


def test_log_records_are_masked_with_known_values_without_fetching(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = SecretRegistry()
    counting = CountingSource()
    registry.update_secrets({"COUNTED": counting, "FIXED": "fixed-value-88"})
    logger = logging.getLogger("test-secret-sources-filter")
    logger.addFilter(SecretMaskingFilter(registry))
    with caplog.at_level(logging.INFO, logger=logger.name):
        logger.info("fixed-value-88 counted-value-1")
    assert counting.calls == 0
    assert f"{MASK} counted-value-1" in caplog.text


def test_a_lookup_failing_under_a_masking_log_filter_is_asked_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The failure is logged, and the log filter masks that record: it must not ask again.
    flaky = FlakySource()
    registry = SecretRegistry()
    registry.update_secrets({"FLAKY": flaky})
    logger = logging.getLogger(secret_registry.__name__)
    masking = SecretMaskingFilter(registry)
    logger.addFilter(masking)
    try:
        with caplog.at_level(logging.WARNING, logger=logger.name):
            assert registry.mask_secrets_in_output("text") == "text"
    finally:
        logger.removeFilter(masking)
    assert flaky.calls == 1
    assert "FLAKY" in caplog.text


# --- StaticSecret: what loads back as None -------------------------------------------------


@pytest.mark.parametrize("saved", ["**********", "", "   ", None])
def test_a_redacted_or_empty_static_value_loads_back_as_none(saved: str | None) -> None:
    secret = StaticSecret.model_validate({"kind": "StaticSecret", "value": saved})
    assert secret.value is None
    assert secret.get_value() is None
    registry = SecretRegistry.model_validate(
        {"secret_sources": {"KEY": {"kind": "StaticSecret", "value": saved}}}
    )
    assert registry.get_secrets_as_env_vars("echo $KEY") == {}
    assert registry.unavailable == {}


def test_a_value_the_sdk_saved_encrypted_in_place_is_decrypted() -> None:
    cipher = Cipher(secret_key="a shared key")
    token = cipher.encrypt("in-place-value-12")
    saved = {"secret_sources": {"KEY": {"kind": "StaticSecret", "value": token}}}
    registry = SecretRegistry.model_validate(saved, context={"cipher": cipher})
    assert registry.get_secrets_as_env_vars("echo $KEY") == {"KEY": "in-place-value-12"}
    assert registry.mask_secrets_in_output("in-place-value-12") == MASK

    with pytest.warns(SecretsUnavailableWarning, match="KEY"):
        wrong = SecretRegistry.model_validate(
            saved, context={"cipher": Cipher(secret_key="another key")}
        )
    assert wrong.get_secrets_as_env_vars("echo $KEY") == {}


@pytest.mark.parametrize("asked", [1, "yes", False, None, "redacted"])
def test_only_an_explicit_plaintext_request_exposes_values(asked: Any) -> None:
    registry = SecretRegistry()
    registry.update_secrets({"KEY": "the-value-31"})
    assert "the-value-31" not in registry.model_dump_json(context={"expose_secrets": asked})
    assert "the-value-31" in registry.model_dump_json(context={"expose_secrets": "plaintext"})


def test_an_encrypted_dump_needs_a_cipher_and_never_falls_back_to_plaintext() -> None:
    registry = SecretRegistry()
    registry.update_secrets({"KEY": "the-value-32"})
    with pytest.raises(ValueError, match="needs a Cipher"):
        registry.model_dump_json(context={"expose_secrets": "encrypted"})
    cipher = Cipher(secret_key="k")
    dumped = registry.model_dump_json(context={"expose_secrets": "encrypted", "cipher": cipher})
    assert "the-value-32" not in dumped
    restored = SecretRegistry.model_validate_json(dumped, context={"cipher": cipher})
    assert restored.get_secret_value("KEY") == "the-value-32"


def test_the_llm_key_is_never_dumped_unless_plaintext_is_asked_for() -> None:
    llm = LLM(model="openai/x", api_key=SecretStr("sk-never-shown-1"))
    for context in ({}, {"expose_secrets": 1}, {"cipher": Cipher(secret_key="k")}):
        assert "sk-never-shown-1" not in llm.model_dump_json(context=context)
    assert "sk-never-shown-1" in llm.model_dump_json(context={"expose_secrets": True})


# --- LookupSecret over HTTP ----------------------------------------------------------------


def test_a_lookup_is_exported_only_to_a_command_naming_it_and_masked_after_one_fetch(
    vault: VaultServer,
) -> None:
    registry = SecretRegistry()
    source = LookupSecret(url=f"{vault.url}/secrets/DB", headers={"Authorization": BEARER})
    registry.update_secrets({"DB_TOKEN": source})
    assert registry.get_secrets_as_env_vars("echo $OTHER; echo db_token") == {}
    assert vault.requests == []

    assert registry.mask_secrets_in_output(f"text {VALUE}") == f"text {MASK}"
    assert registry.mask_secrets_in_output(f"again {VALUE}") == f"again {MASK}"
    [request] = vault.requests  # masking asked once
    assert request["path"] == "/secrets/DB"
    assert request["Authorization"] == BEARER

    assert registry.get_secrets_as_env_vars("psql $DB_TOKEN") == {"DB_TOKEN": VALUE}
    assert len(vault.requests) == 2  # a command gets the value fetched for it


@pytest.mark.parametrize("status", [401, 404, 500])
def test_a_failed_lookup_exports_nothing_and_logs_no_credential(
    vault: VaultServer, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    vault.status = status
    registry = SecretRegistry()
    registry.update_secrets(
        {"DB_TOKEN": LookupSecret(url=vault.url, headers={"Authorization": BEARER})}
    )
    with caplog.at_level(logging.DEBUG):
        assert registry.get_secrets_as_env_vars("psql $DB_TOKEN") == {}
    assert str(status) in caplog.text
    assert "vault-auth-9911" not in caplog.text
    assert VALUE not in caplog.text


def test_the_fetched_value_is_never_logged(
    vault: VaultServer, caplog: pytest.LogCaptureFixture
) -> None:
    registry = SecretRegistry()
    registry.update_secrets(
        {"DB_TOKEN": LookupSecret(url=vault.url, headers={"X-Vault-Token": "hvs-secret-55"})}
    )
    with caplog.at_level(logging.DEBUG):
        assert registry.get_secret_value("DB_TOKEN") == VALUE
    assert VALUE not in caplog.text
    assert "hvs-secret-55" not in caplog.text


def test_a_slow_lookup_times_out(vault: VaultServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secret_sources, "LOOKUP_TIMEOUT_SECONDS", 0.3)
    vault.delay = 5.0
    registry = SecretRegistry()
    registry.update_secrets({"DB_TOKEN": LookupSecret(url=vault.url)})
    started = time.monotonic()
    assert registry.get_secrets_as_env_vars("psql $DB_TOKEN") == {}
    assert time.monotonic() - started < 3.0


def test_a_relative_url_is_fetched_from_the_agent_server(
    vault: VaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OH_INTERNAL_SERVER_URL", f"{vault.url}/")
    for url in ("api/secrets/KEY", "/api/secrets/KEY"):
        source = LookupSecret(url=url)
        assert source.url == f"{vault.url}/api/secrets/KEY"
        assert source.get_value() == VALUE
    monkeypatch.delenv("OH_INTERNAL_SERVER_URL")
    assert LookupSecret(url="/a").url == "http://127.0.0.1:8000/a"
    with pytest.raises(ValueError, match="needs a URL"):
        LookupSecret(url=" ")


def test_credential_headers_never_show_in_repr_or_a_plain_dump() -> None:
    source = LookupSecret(
        url="https://vault.example/v1/db",
        headers={
            "Authorization": BEARER,
            "X-Auth": "short-auth-1",
            "Cookie": "session=abc123",
            "X-Api-Key": "key-1",
            "Author": "jane@example.com",
            "Content-Type": "application/json",
        },
    )
    for shown in (repr(source), str(source), json.dumps(source.model_dump(mode="json"))):
        for value in (BEARER, "short-auth-1", "abc123", "key-1"):
            assert value not in shown
    assert source.model_dump(mode="json")["headers"] == {
        "Authorization": "**********",
        "X-Auth": "**********",
        "Cookie": "**********",
        "X-Api-Key": "**********",
        "Author": "jane@example.com",
        "Content-Type": "application/json",
    }
    # Loaded back, the redacted headers are dropped, not sent as asterisks.
    restored = LookupSecret.model_validate(source.model_dump(mode="json"))
    assert restored.headers == {"Author": "jane@example.com", "Content-Type": "application/json"}


def test_credential_headers_round_trip_encrypted(vault: VaultServer) -> None:
    cipher = Cipher(secret_key="k")
    registry = SecretRegistry()
    registry.update_secrets(
        {"DB_TOKEN": LookupSecret(url=vault.url, headers={"Authorization": BEARER})}
    )
    saved = registry.model_dump_json(context={"cipher": cipher})
    assert "vault-auth-9911" not in saved and VALUE not in saved
    restored = SecretRegistry.model_validate_json(saved, context={"cipher": cipher})
    assert restored.get_secrets_as_env_vars("echo $DB_TOKEN") == {"DB_TOKEN": VALUE}
    assert vault.requests[-1]["Authorization"] == BEARER


def test_a_plaintext_header_sent_with_a_cipher_is_kept() -> None:
    cipher = Cipher(secret_key="k")
    source = LookupSecret.model_validate(
        {"url": "http://127.0.0.1:1/x", "headers": {"X-Session-API-Key": "plain-session"}},
        context={"cipher": cipher},
    )
    assert source.headers == {"X-Session-API-Key": "plain-session"}


def test_a_lookup_in_a_conversation_survives_a_resume(
    llm: LLM, llm_server: Any, vault: VaultServer, workspace: Path, persistence_dir: Path
) -> None:
    key = Cipher.generate_key()

    def open_conversation(**kwargs: Any) -> Any:
        agent = Agent(llm=llm, tools=[Tool(name="terminal")])
        return Conversation(
            agent=agent,
            workspace=workspace,
            persistence_dir=persistence_dir,
            visualizer=None,
            cipher=Cipher(key),
            **kwargs,
        )

    secrets = {"DB_TOKEN": LookupSecret(url=vault.url, headers={"Authorization": BEARER})}
    conv = open_conversation(secrets=secrets)
    conversation_id = conv.id
    conv.close()
    database = b"".join(p.read_bytes() for p in persistence_dir.rglob("conversations.db*"))
    assert database and b"vault-auth-9911" not in database
    assert vault.requests == []

    resumed = open_conversation(conversation_id=conversation_id)
    try:
        # The model does not know the value: the command checks only its length.
        command = f'test "${{#DB_TOKEN}}" = {len(VALUE)} && echo OK'
        llm_server.reply_tool_call("terminal", {"command": command})
        llm_server.reply_text("Done.")
        resumed.send_message("check the token")
        resumed.run()
        [observation] = [
            e.observation for e in resumed.state.events if isinstance(e, ObservationEvent)
        ]
        assert isinstance(observation, TerminalObservation)
        assert observation.exit_code == 0 and "OK" in observation.text
        assert vault.requests[-1]["Authorization"] == BEARER
    finally:
        resumed.close()


def test_the_lookup_client_is_the_modules_httpx_imported_on_first_access() -> None:
    import httpx

    import ohtui.sdk.secret.secrets as secrets_module

    assert secrets_module.httpx is httpx  # where code written against the SDK finds it
    with pytest.raises(AttributeError, match="has no attribute 'requests'"):
        secrets_module.requests  # noqa: B018
