"""Mapping litellm / provider exceptions to our LLMError types with actionable messages."""

from __future__ import annotations

import errno
import ipaddress
import re
import sys
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ohtui.sdk.llm._litellm import litellm
from ohtui.sdk.llm._litellm import loaded as _litellm_module
from ohtui.sdk.llm.exceptions import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMContextWindowExceedError,
    LLMError,
    LLMRateLimitError,
    LLMServiceUnavailableError,
    LLMTimeoutError,
)
from ohtui.sdk.utils.masking import forms_to_mask, mask_text

if TYPE_CHECKING:
    from ohtui.sdk.llm.llm import LLM

_PREFIX = re.compile(r"^(litellm\.\w+:\s*)+|(\w+Exception - )", re.IGNORECASE)
_MISSING_KEY_HINTS = (
    "missing credentials",
    "api_key client option must be set",
    "no api key",
    "api key not found",
)
_TIMEOUT_TYPES = ("TimeoutException", "ReadTimeout", "ConnectTimeout", "APITimeoutError")
_CONTEXT_HINTS = (
    "context length",
    "context window",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "input is too long",
)


class _NoLitellm:
    """Stands in for litellm when it was never imported: then no exception can be one of its
    types, and mapping an error of the direct path must not pay seconds to import it."""

    def __getattr__(self, name: str) -> type:
        return type(name, (Exception,), {})


def _litellm_types() -> Any:
    imported = _litellm_module() is not None or "litellm" in sys.modules
    return litellm() if imported else _NoLitellm()


def provider_message(exc: BaseException, limit: int = 300) -> str:
    """The provider's own words, without litellm's prefixes, cut to `limit` characters."""
    text = str(getattr(exc, "message", None) or exc).strip()
    text = _PREFIX.sub("", text).strip()
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    # The caller's advice follows: end the provider's words as a sentence.
    return text if text.endswith((".", "!", "?", "…")) else f"{text}."


def _retry_after(exc: BaseException) -> float | None:
    # litellm keeps the real response headers here; `exc.response` is often a stand-in.
    headers: Any = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and everything it wraps (litellm nests provider errors several deep)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 8:
        seen.append(current)
        current = (
            getattr(current, "original_exception", None) or current.__cause__ or current.__context__
        )
    return seen


def _is_timeout(chain: list[BaseException], lib: Any) -> bool:
    return any(
        isinstance(e, lib.Timeout)
        or type(e).__name__ in _TIMEOUT_TYPES
        or "timed out" in str(e).lower()
        for e in chain
    )


def _is_unreachable(chain: list[BaseException], lib: Any) -> bool:
    return any(
        (isinstance(e, lib.APIConnectionError) and not isinstance(e, lib.InternalServerError))
        or type(e).__name__ in ("ConnectError", "RemoteProtocolError")
        or "connection error" in str(e).lower()
        or "connection refused" in str(e).lower()
        for e in chain
    )


def _refused_here(exc: BaseException, base_url: str | None) -> bool:
    """Whether a server on this machine (a loopback base URL) refused the connection."""
    if not base_url:
        return False
    host = (urlsplit(base_url).hostname or "").lower()
    if host != "localhost":
        try:
            if not ipaddress.ip_address(host).is_loopback:
                return False
        except ValueError:
            return False
    return any(
        isinstance(e, ConnectionRefusedError)
        or getattr(e, "errno", None) == errno.ECONNREFUSED
        or "connection refused" in str(e).lower()
        for e in _chain(exc)
    )


def _category(exc: BaseException, lib: Any, said: str, status: int | None) -> str:
    chain = _chain(exc)
    if isinstance(exc, lib.ContextWindowExceededError) or (
        status == 400 and any(h in said.lower() for h in _CONTEXT_HINTS)
    ):
        return "context"
    if isinstance(exc, lib.AuthenticationError | lib.PermissionDeniedError) or status in (401, 403):
        return "auth"
    if any(hint in said.lower() for hint in _MISSING_KEY_HINTS):
        return "no_key"
    if isinstance(exc, lib.RateLimitError) or status == 429:
        return "rate_limit"
    if _is_timeout(chain, lib):
        return "timeout"
    if any(isinstance(e, UnicodeDecodeError) for e in chain) or "codec can't decode" in said:
        return "not_text"
    if isinstance(exc, lib.NotFoundError) or status == 404:
        return "not_found"
    if _is_unreachable(chain, lib):
        return "unreachable"
    if isinstance(exc, lib.ServiceUnavailableError | lib.InternalServerError | lib.BadGatewayError):
        return "server"
    if isinstance(status, int) and status >= 500:
        return "server"
    if isinstance(exc, lib.BadRequestError | lib.UnprocessableEntityError) or status in (400, 422):
        return "bad_request"
    if isinstance(exc, lib.UnsupportedParamsError):
        return "bad_request"
    return "other"


def map_error(exc: BaseException, llm: LLM) -> LLMError:
    """Turn any exception from a completion call into the matching LLMError."""
    lib = _litellm_types()
    model = llm.model
    where = f" at {llm.base_url}" if llm.base_url else ""
    said = provider_message(exc)
    key = llm.maskable_key
    if key is not None:  # a provider may quote the key it rejected
        said = mask_text(said, forms_to_mask([key]))
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    category = _category(exc, lib, said, status)
    messages: dict[str, tuple[type[LLMError], str]] = {
        "context": (
            LLMContextWindowExceedError,
            f"The conversation no longer fits the context window of '{model}': {said} "
            "Shorten it (an agent with a condenser condenses it) or start a new conversation.",
        ),
        "auth": (
            LLMAuthenticationError,
            f"The provider{where} rejected the credentials for '{model}': {said} "
            "Check the API key (and that it is allowed to use this model).",
        ),
        "no_key": (
            LLMAuthenticationError,
            f"No API key for '{model}'. Set it (e.g. OHTUI_API_KEY, or the provider's own "
            "variable such as OPENAI_API_KEY) and try again.",
        ),
        "rate_limit": (
            LLMRateLimitError,
            f"'{model}' is rate limited by the provider: {said} "
            "Wait a little and try again, or use a key with a higher limit.",
        ),
        "timeout": (
            LLMTimeoutError,
            f"'{model}'{where} did not answer within {llm.timeout:g} s. "
            "Try again, or raise the LLM timeout.",
        ),
        "not_found": (
            LLMBadRequestError,
            f"The provider{where} does not know the model '{model}': {said} Check the model "
            "name (for an OpenAI-compatible server, 'openai/<name>').",
        ),
        "not_text": (
            LLMError,
            f"'{model}'{where} answered with bytes that are not UTF-8 text, which litellm "
            f"cannot read: {said} An OpenAI-compatible server ('openai/<name>' with a base "
            "URL) is read by ohtui itself, such bytes shown as \ufffd. Try again, or fix the "
            "server's encoding.",
        ),
        "unreachable": (
            LLMServiceUnavailableError,
            f"Cannot reach '{model}'{where}: {said} "
            "Check the base URL, that the server is running, and your network.",
        ),
        "server": (
            LLMServiceUnavailableError,
            f"The provider{where} failed to answer for '{model}' ({status or 'server error'}): "
            f"{said} This is usually temporary; try again shortly.",
        ),
        "bad_request": (
            LLMBadRequestError,
            f"The provider{where} refused the request for '{model}': {said}",
        ),
        "other": (
            LLMError,
            f"The call to '{model}'{where} failed: {type(exc).__name__}: {said}",
        ),
    }
    if category == "unreachable" and _refused_here(exc, llm.base_url):
        category = "refused_here"
        messages[category] = (
            LLMServiceUnavailableError,
            f"Nothing is listening at {llm.base_url} for '{model}' (connection refused). "
            "Start the server, or check the base URL's host and port.",
        )
    error_type, message = messages[category]
    error = error_type(
        message,
        model=model,
        status_code=None if category in ("unreachable", "refused_here") else status,
    )
    if category == "refused_here":
        # This machine said no at once: no server listens there, and waiting ~30 s of
        # backoff will not start one.
        error.retryable = False
    error.retry_after = _retry_after(exc)
    server = llm.base_url or "the provider"
    summaries = {
        "context": "the conversation no longer fits the context window",
        "auth": "the API key was rejected",
        "no_key": "no API key",
        "rate_limit": "rate limited by the provider",
        "timeout": f"no answer within {llm.timeout:g} s",
        "not_found": f"unknown model '{model}'",
        "unreachable": f"cannot reach {server}",
        "refused_here": f"nothing listens at {server}",
        "server": f"{server} failed ({status or 'server error'})",
        "bad_request": "the request was refused",
        "not_text": "the answer was not UTF-8 text",
    }
    error.summary = summaries.get(category, error.summary)
    return error
