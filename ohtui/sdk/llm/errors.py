"""Mapping litellm / provider exceptions to our LLMError types with actionable messages."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ohtui.sdk.llm._litellm import litellm
from ohtui.sdk.llm.exceptions import (
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMContextWindowExceedError,
    LLMError,
    LLMRateLimitError,
    LLMServiceUnavailableError,
    LLMTimeoutError,
)

if TYPE_CHECKING:
    from ohtui.sdk.llm.llm import LLM

_PREFIX = re.compile(r"^(litellm\.\w+:\s*)+|(\w+Exception - )", re.IGNORECASE)
_CONTEXT_HINTS = (
    "context length",
    "context window",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "input is too long",
)


def provider_message(exc: BaseException, limit: int = 300) -> str:
    """The provider's own words, without litellm's prefixes, cut to `limit` characters."""
    text = str(getattr(exc, "message", None) or exc).strip()
    text = _PREFIX.sub("", text).strip()
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


def map_error(exc: BaseException, llm: LLM) -> LLMError:
    """Turn any exception from a completion call into the matching LLMError."""
    lib = litellm()
    model = llm.model
    where = f" at {llm.base_url}" if llm.base_url else ""
    said = provider_message(exc)
    status = getattr(exc, "status_code", None)
    error: LLMError
    if isinstance(exc, lib.ContextWindowExceededError) or (
        isinstance(exc, lib.BadRequestError) and any(h in said.lower() for h in _CONTEXT_HINTS)
    ):
        error = LLMContextWindowExceedError(
            f"The conversation no longer fits the context window of '{model}': {said} "
            "Condense the history or start a new conversation.",
            model=model,
            status_code=status,
        )
    elif isinstance(exc, lib.AuthenticationError | lib.PermissionDeniedError):
        error = LLMAuthenticationError(
            f"The provider{where} rejected the credentials for '{model}': {said} "
            "Check the API key (and that it is allowed to use this model).",
            model=model,
            status_code=status,
        )
    elif isinstance(exc, lib.RateLimitError):
        error = LLMRateLimitError(
            f"'{model}' is rate limited by the provider: {said} "
            "Wait a little and try again, or use a key with a higher limit.",
            model=model,
            status_code=status,
        )
    elif isinstance(exc, lib.Timeout):
        error = LLMTimeoutError(
            f"'{model}'{where} did not answer within {llm.timeout:g} s. "
            "Try again, or raise the LLM timeout.",
            model=model,
            status_code=status,
        )
    elif isinstance(exc, lib.NotFoundError):
        error = LLMBadRequestError(
            f"The provider{where} does not know the model '{model}': {said} "
            "Check the model name (for an OpenAI-compatible server, 'openai/<name>').",
            model=model,
            status_code=status,
        )
    elif isinstance(exc, lib.APIConnectionError) and not isinstance(exc, lib.InternalServerError):
        error = LLMServiceUnavailableError(
            f"Cannot reach '{model}'{where}: {said} "
            "Check the base URL, that the server is running, and your network.",
            model=model,
            status_code=status,
        )
    elif isinstance(
        exc, lib.ServiceUnavailableError | lib.InternalServerError | lib.BadGatewayError
    ) or (isinstance(status, int) and status >= 500):
        error = LLMServiceUnavailableError(
            f"The provider{where} failed to answer for '{model}' ({status or 'server error'}): "
            f"{said} This is usually temporary; try again shortly.",
            model=model,
            status_code=status,
        )
    elif isinstance(
        exc, lib.BadRequestError | lib.UnprocessableEntityError | lib.UnsupportedParamsError
    ):
        error = LLMBadRequestError(
            f"The provider{where} refused the request for '{model}': {said}",
            model=model,
            status_code=status,
        )
    else:
        error = LLMError(
            f"The call to '{model}'{where} failed: {type(exc).__name__}: {said}",
            model=model,
            status_code=status,
        )
    error.retry_after = _retry_after(exc)  # type: ignore[attr-defined]
    return error
