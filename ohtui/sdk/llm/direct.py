"""Chat completions straight over HTTP, for OpenAI-compatible servers (`openai/…` + base URL,
or a LiteLLM proxy: `litellm_proxy/…`).

litellm walks every message of a request several times on the way out (and its logging
once more after the answer): with a long history that is tens of milliseconds per call,
growing with every step. An OpenAI-compatible server needs none of that: the request is
the messages as they are, so this module sends them with httpx, from a connection pool per
server, with the body built from each message's cached JSON (see `wire`). Answers are
parsed into plain objects with the attributes litellm's have, so the caller reads both the
same way. Other providers, and requests with options this module does not know, stay with
litellm (`is_direct`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from ohtui.sdk.llm.wire import encode_messages

PREFIX = "openai/"
PREFIXES = (PREFIX, "litellm_proxy/")
"""Providers that are an OpenAI-compatible server at the base URL (a LiteLLM proxy is one)."""
_IGNORED = frozenset(
    {"drop_params", "num_retries", "max_retries", "_skip_mcp_handler", "custom_llm_provider"}
)
"""Request options that need nothing sent: we retry ourselves, and send only known fields."""
_SENT = frozenset(
    {
        "temperature",
        "top_p",
        "max_tokens",
        "reasoning_effort",
        "tools",
        "stream",
        "stream_options",
        "prompt_cache_key",
    }
)
_HANDLED = _SENT | _IGNORED | {"model", "messages", "api_key", "api_base", "timeout"}
_HANDLED |= {"extra_headers", "api_version"}

_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


class ProviderError(Exception):
    """An HTTP error answer from the server: its status, its own words, its response."""

    def __init__(self, status_code: int, message: str, response: Any) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.response = response


class BadRequestError(ProviderError):
    """400: the server refused the request (a context-window overflow says so here)."""


class AuthenticationError(ProviderError):
    """401: the API key was rejected."""


class PermissionDeniedError(ProviderError):
    """403: the key may not use this model."""


class NotFoundError(ProviderError):
    """404: no such model (or route)."""


class UnprocessableEntityError(ProviderError):
    """422: the server could not process the request."""


class RateLimitError(ProviderError):
    """429: rate limited."""


class InternalServerError(ProviderError):
    """5xx: the server failed."""


_ERRORS: dict[int, type[ProviderError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


def is_direct(request: dict[str, Any]) -> bool:
    """Whether this litellm-style request can go straight to an OpenAI-compatible server."""
    return (
        serves(
            str(request.get("model", "")),
            request.get("api_base"),
            request.get("custom_llm_provider"),
            request.get("api_version"),
        )
        and request.keys() <= _HANDLED
    )


def serves(model: str, base_url: str | None, provider: str | None, api_version: str | None) -> bool:
    """Whether calls to this model go straight to an OpenAI-compatible server (unless a
    request carries options only litellm handles)."""
    return (
        model.startswith(PREFIXES)
        and bool(base_url)
        and provider in (None, "openai", "litellm_proxy")
        and api_version is None
    )


def client_for(base_url: str) -> Any:
    """The pooled HTTP client of one server (made on first use, shared by threads)."""
    client = _clients.get(base_url)
    if client is None:
        import httpx

        with _clients_lock:
            client = _clients.get(base_url)
            if client is None:
                limits = httpx.Limits(max_keepalive_connections=4, keepalive_expiry=60)
                client = httpx.Client(
                    limits=limits,
                    timeout=httpx.Timeout(300.0, connect=10.0),
                    # Loading the CA bundle costs a quarter second; plain HTTP needs none.
                    verify=not base_url.startswith("http://"),
                )
                _clients[base_url] = client
    return client


def connect(base_url: str, api_key: str | None = None, timeout: float = 5.0) -> None:
    """Open a pooled connection to `base_url` ahead of the first request (any answer will
    do; an unreachable server is left for the first request to report)."""
    try:
        client_for(base_url).get(
            f"{base_url.rstrip('/')}/models", headers=_headers(api_key, None), timeout=timeout
        )
    except Exception:  # noqa: BLE001 - a warm-up; the real request reports any problem
        return


def completion(**request: Any) -> Any:
    """Send one chat-completions request (see `is_direct`); the answer, or an iterator of
    chunks when `stream` is set. HTTP errors raise ProviderError; httpx's own (timeouts,
    refused connections) pass through."""
    base_url = str(request["api_base"]).rstrip("/")
    body = _body(request)
    headers = _headers(request.get("api_key"), request.get("extra_headers"))
    client = client_for(base_url)
    url = f"{base_url}/chat/completions"
    timeout = request.get("timeout")
    if request.get("stream"):
        return _stream(client, url, body, headers, timeout)
    response = client.post(url, content=body, headers=headers, timeout=timeout)
    if response.status_code >= 400:
        raise _error(response)
    return _parse(response.text)  # bytes that are not UTF-8 read as U+FFFD, as streamed ones


def _body(request: dict[str, Any]) -> bytes:
    fields: dict[str, Any] = {"model": str(request["model"]).partition("/")[2]}
    fields.update({k: request[k] for k in _SENT if request.get(k) is not None})
    head = json.dumps(fields, separators=(",", ":"))
    return f'{head[:-1]},"messages":{encode_messages(request["messages"])}}}'.encode()


def _headers(api_key: str | None, extra: dict[str, str] | None) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    headers.update(extra or {})
    return headers


def _stream(client: Any, url: str, body: bytes, headers: dict[str, str], timeout: Any) -> Any:
    """Start the request now (errors raise here); the chunks as they arrive."""
    request = client.build_request("POST", url, content=body, headers=headers, timeout=timeout)
    response = client.send(request, stream=True)
    if response.status_code >= 400:
        try:
            response.read()
        finally:
            response.close()
        raise _error(response)
    return _chunks(response)


def _chunks(response: Any) -> Iterator[Any]:
    try:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            if data:
                yield _parse(data)
    finally:
        response.close()


def _parse(data: bytes | str) -> Any:
    return json.loads(data, object_hook=lambda fields: SimpleNamespace(**fields))


def _error(response: Any) -> ProviderError:
    text = response.text
    message = text
    try:
        error = json.loads(text).get("error")
        if isinstance(error, dict):
            message = str(error.get("message") or text)
        elif error:
            message = str(error)
    except (ValueError, AttributeError):
        pass
    status = response.status_code
    kind = _ERRORS.get(status, InternalServerError if status >= 500 else ProviderError)
    return kind(status, message or f"HTTP {status}", response)
