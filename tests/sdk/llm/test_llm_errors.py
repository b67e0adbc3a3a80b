"""Tests of LLM error mapping and retries, over real HTTP against the scripted server."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM
from ohtui.sdk.llm import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMContextWindowExceedError,
    LLMError,
    LLMRateLimitError,
    LLMServiceUnavailableError,
    LLMTimeoutError,
    Message,
    TextContent,
)
from ohtui.sdk.llm._litellm import litellm

MODEL = "openai/test-model"
USER = [Message(role="user", content=[TextContent(text="hello")])]


@pytest.fixture(autouse=True, scope="module")
def _litellm_imported() -> None:
    """Import litellm up front so that its seconds-long first import skews no timing."""
    litellm()


def make_llm(server_url: str, **overrides: Any) -> LLM:
    settings: dict[str, Any] = {
        "model": MODEL,
        "base_url": server_url,
        "api_key": "sk-test",
        "num_retries": 0,
        "timeout": 10,
        "retry_min_wait": 0.01,
        "retry_max_wait": 0.05,
    }
    settings.update(overrides)
    return LLM(**settings)


def closed_port_url() -> str:
    """The base URL of a port nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# ------------------------------------------------------------------ mapping


@pytest.mark.parametrize(
    ("status", "message", "code", "expected", "hint"),
    [
        (401, "Incorrect API key provided.", "invalid_api_key", LLMAuthenticationError, "API key"),
        (429, "Rate limit reached.", "rate_limit_exceeded", LLMRateLimitError, "rate limited"),
        (400, "Invalid value for 'temperature'.", None, LLMBadRequestError, "refused"),
        (500, None, None, LLMServiceUnavailableError, "try again"),
        (502, None, None, LLMServiceUnavailableError, "try again"),
        (503, None, None, LLMServiceUnavailableError, "try again"),
    ],
    ids=["401", "429", "400", "500", "502", "503"],
)
def test_http_errors_map_to_our_types(
    llm_server: ScriptedLLMServer,
    status: int,
    message: str | None,
    code: str | None,
    expected: type[LLMError],
    hint: str,
) -> None:
    llm = make_llm(llm_server.base_url)
    llm_server.reply_error(status, message, code=code)
    with pytest.raises(expected) as info:
        llm.completion(USER)
    error = info.value
    assert type(error) is expected
    assert f"'{MODEL}'" in error.message
    assert hint in error.message
    assert error.model == MODEL
    assert error.status_code == status
    assert str(error) == error.message
    if message:
        assert message in error.message  # the provider's own words are kept
    assert "litellm." not in error.message
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize("key", ["sk-a-real-looking-key-0123456789", "sk-test"])
def test_an_error_quoting_the_key_never_repeats_it(llm_server: ScriptedLLMServer, key: str) -> None:
    llm = make_llm(llm_server.base_url, api_key=key)
    hexed = key.encode().hex()
    llm_server.reply_error(401, f"Incorrect API key provided: {key} (hex {hexed}).")
    with pytest.raises(LLMAuthenticationError) as info:
        llm.completion(USER)
    if len(key) >= 8:
        assert "Incorrect API key provided: <secret-hidden> (hex <secret-hidden>)." in str(
            info.value
        )
        assert key not in str(info.value) and hexed not in str(info.value)
    else:  # a placeholder such as the tests' own "sk-test" is not worth hiding
        assert f"provided: {key} (hex {hexed})." in str(info.value)


def test_context_window_error(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url)
    llm_server.reply_context_window_error(limit=8192, used=9000)
    with pytest.raises(LLMContextWindowExceedError) as info:
        llm.completion(USER)
    message = info.value.message
    assert f"'{MODEL}'" in message
    assert "8192" in message
    assert "condenser" in message and "start a new conversation" in message
    assert not info.value.retryable


def test_plain_400_is_not_a_context_window_error(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url)
    llm_server.reply_error(400)
    with pytest.raises(LLMBadRequestError) as info:
        llm.completion(USER)
    assert not isinstance(info.value, LLMContextWindowExceedError)
    assert f"'{MODEL}'" in info.value.message
    assert llm_server.base_url in info.value.message


def test_404_unknown_model(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url)
    llm_server.reply_error(
        404,
        "The model `test-model` does not exist or you do not have access to it.",
        code="model_not_found",
    )
    with pytest.raises(LLMBadRequestError) as info:
        llm.completion(USER)
    message = info.value.message
    assert f"'{MODEL}'" in message
    assert "does not exist" in message
    assert "Check the model name" in message
    assert info.value.status_code == 404


def test_plain_404_is_a_bad_request_naming_the_model(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url)
    llm_server.reply_error(404)
    with pytest.raises(LLMBadRequestError) as info:
        llm.completion(USER)
    assert f"'{MODEL}'" in info.value.message
    assert info.value.status_code == 404


def test_plain_404_says_to_check_the_model_name(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url)
    llm_server.reply_error(404)
    with pytest.raises(LLMBadRequestError) as info:
        llm.completion(USER)
    assert "Check the model name" in info.value.message


def test_403_is_an_authentication_error(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url)
    llm_server.reply_error(403, "You are not allowed to use this model.")
    with pytest.raises(LLMAuthenticationError) as info:
        llm.completion(USER)
    assert f"'{MODEL}'" in info.value.message


def test_timeout(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url, timeout=0.3)
    llm_server.reply_text("too slow", delay=3)
    started = time.monotonic()
    with pytest.raises(LLMTimeoutError) as info:
        llm.completion(USER)
    assert time.monotonic() - started < 2.5
    message = info.value.message
    assert f"'{MODEL}'" in message
    assert "0.3 s" in message
    assert "timeout" in message
    assert info.value.retryable


def test_stalled_stream_is_a_timeout(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url, timeout=0.3, stream=True)
    llm_server.reply_text("one two three", chunk_delay=1.5)
    with pytest.raises(LLMTimeoutError) as info:
        llm.completion(USER)
    assert f"'{MODEL}'" in info.value.message


def test_stalled_stream_fails_with_a_retryable_error(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url, timeout=0.3, stream=True)
    llm_server.reply_text("one two three", chunk_delay=1.5)
    started = time.monotonic()
    with pytest.raises(LLMError) as info:
        llm.completion(USER)
    assert time.monotonic() - started < 1.4
    assert info.value.retryable
    assert f"'{MODEL}'" in info.value.message


def test_connection_refused(llm_server: ScriptedLLMServer) -> None:
    url = closed_port_url()
    llm = make_llm(url)
    with pytest.raises(LLMServiceUnavailableError) as info:
        llm.completion(USER)
    message = info.value.message
    assert url in message
    assert f"'{MODEL}'" in message


def test_connection_refused_says_the_server_cannot_be_reached() -> None:
    llm = make_llm(closed_port_url())
    with pytest.raises(LLMServiceUnavailableError) as info:
        llm.completion(USER)
    assert info.value.status_code is None
    assert "Start the server" in info.value.message


def test_original_exception_is_chained(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url)
    llm_server.reply_error(401)
    with pytest.raises(LLMAuthenticationError) as info:
        llm.completion(USER)
    assert info.value.__cause__ is not None
    assert "AuthenticationError" in type(info.value.__cause__).__name__


def test_retry_after_header_is_kept_on_the_error(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url)
    llm_server.reply_error(429, headers={"Retry-After": "7"})
    with pytest.raises(LLMRateLimitError) as info:
        llm.completion(USER)
    assert info.value.retry_after == 7.0  # type: ignore[attr-defined]


# ------------------------------------------------------------------ retries


def test_server_errors_are_retried_until_success(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url, num_retries=2)
    llm_server.reply_error(503)
    llm_server.reply_error(503)
    llm_server.reply_text("third time lucky")
    response = llm.completion(USER)
    assert response.message.text == "third time lucky"
    assert len(llm_server.requests) == 3
    assert llm.metrics.call_count == 1


def test_mixed_retryable_errors_are_retried(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url, num_retries=3)
    llm_server.reply_error(500)
    llm_server.reply_error(429)
    llm_server.reply_error(502)
    llm_server.reply_text("ok")
    assert llm.completion(USER).message.text == "ok"
    assert len(llm_server.requests) == 4


def test_timeouts_are_retried(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url, num_retries=1, timeout=0.3)
    llm_server.reply_text("slow", delay=2)
    llm_server.reply_text("fast")
    assert llm.completion(USER).message.text == "fast"
    assert len(llm_server.requests) == 2


def test_retry_after_is_honoured(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url, num_retries=1, retry_min_wait=0.01, retry_max_wait=5)
    llm_server.reply_error(429, headers={"Retry-After": "0.5"})
    llm_server.reply_text("ok")
    started = time.monotonic()
    assert llm.completion(USER).message.text == "ok"
    elapsed = time.monotonic() - started
    assert 0.45 <= elapsed < 3
    assert len(llm_server.requests) == 2


def test_retry_after_is_capped_at_retry_max_wait(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url, num_retries=1, retry_min_wait=0.01, retry_max_wait=0.3)
    llm_server.reply_error(429, headers={"Retry-After": "30"})
    llm_server.reply_text("ok")
    started = time.monotonic()
    assert llm.completion(USER).message.text == "ok"
    elapsed = time.monotonic() - started
    assert 0.25 <= elapsed < 3
    assert len(llm_server.requests) == 2


def test_backoff_grows_but_is_capped(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(
        llm_server.base_url,
        num_retries=3,
        retry_min_wait=0.1,
        retry_multiplier=2,
        retry_max_wait=0.25,
    )
    for _ in range(3):
        llm_server.reply_error(503)
    llm_server.reply_text("ok")
    started = time.monotonic()
    assert llm.completion(USER).message.text == "ok"
    elapsed = time.monotonic() - started
    # waits: 0.1, 0.2, min(0.4, 0.25) = 0.55 s
    assert 0.5 <= elapsed < 3


@pytest.mark.parametrize(
    ("status", "expected"),
    [(401, LLMAuthenticationError), (400, LLMBadRequestError)],
    ids=["401", "400"],
)
def test_non_retryable_errors_are_not_retried(
    llm_server: ScriptedLLMServer, status: int, expected: type[LLMError]
) -> None:
    llm = make_llm(llm_server.base_url, num_retries=3)
    llm_server.reply_error(status)
    llm_server.reply_text("never sent")
    with pytest.raises(expected) as info:
        llm.completion(USER)
    assert len(llm_server.requests) == 1
    assert llm_server.pending() == 1
    assert "gave up" not in info.value.message


def test_context_window_error_is_not_retried(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url, num_retries=3)
    llm_server.reply_context_window_error()
    with pytest.raises(LLMContextWindowExceedError):
        llm.completion(USER)
    assert len(llm_server.requests) == 1


def test_exhausted_retries_say_how_many_attempts(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url, num_retries=2)
    for _ in range(3):
        llm_server.reply_error(503)
    with pytest.raises(LLMServiceUnavailableError) as info:
        llm.completion(USER)
    assert "gave up after 3 attempts" in info.value.message
    assert "gave up after 3 attempts" in str(info.value)
    assert f"'{MODEL}'" in info.value.message
    assert len(llm_server.requests) == 3
    assert llm.metrics.call_count == 0


def test_exhausted_rate_limit_retries(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url, num_retries=1)
    llm_server.reply_error(429)
    llm_server.reply_error(429)
    with pytest.raises(LLMRateLimitError, match="gave up after 2 attempts"):
        llm.completion(USER)
    assert len(llm_server.requests) == 2


def test_a_refused_connection_on_this_machine_fails_at_once() -> None:
    """Nothing listens on that loopback port: backing off ~30 s will not start a server, so
    the default four retries are not spent (issue 29: it took 46 s)."""
    llm = make_llm(closed_port_url(), num_retries=4, retry_min_wait=2, retry_max_wait=30)
    started = time.monotonic()
    with pytest.raises(LLMServiceUnavailableError) as info:
        llm.completion(USER)
    assert time.monotonic() - started < 1.5
    assert not info.value.retryable
    assert "Nothing is listening at http://127.0.0.1:" in info.value.message
    assert "gave up" not in info.value.message
    assert info.value.summary.startswith("nothing listens at")


@pytest.mark.parametrize("base_url", ["http://10.1.2.3:8000/v1", "https://api.example.com/v1"])
def test_a_refused_connection_elsewhere_is_still_retried(base_url: str) -> None:
    """A remote server refusing may be restarting behind its balancer: keep the backoff."""
    from ohtui.sdk.llm.errors import map_error

    lib = litellm()
    cause = ConnectionRefusedError(111, "Connection refused")
    error = lib.APIConnectionError(message="Connection refused", llm_provider="openai", model="m")
    error.__cause__ = cause
    mapped = map_error(error, make_llm(base_url))
    assert isinstance(mapped, LLMServiceUnavailableError)
    assert mapped.retryable
    assert "Cannot reach" in mapped.message


def test_without_retries_no_attempt_count_is_added(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server.base_url, num_retries=0)
    llm_server.reply_error(503)
    with pytest.raises(LLMServiceUnavailableError) as info:
        llm.completion(USER)
    assert "gave up" not in info.value.message
