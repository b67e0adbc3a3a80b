"""Our own LLM errors: each says what went wrong and what the user can do about it."""

from __future__ import annotations


class LLMError(Exception):
    """An LLM call failed. `message` is written for the person at the keyboard."""

    retryable = False

    def __init__(self, message: str, *, model: str | None = None, status_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.model = model
        self.status_code = status_code
        self.retry_after: float | None = None  # seconds the provider asked us to wait
        self.summary = "the LLM call failed"
        """What went wrong in a few words, for a status line ("cannot reach <url>")."""

    def __str__(self) -> str:
        return self.message


class LLMAuthenticationError(LLMError):
    """The provider refused the credentials (401/403)."""


class LLMRateLimitError(LLMError):
    """The provider is rate limiting us (429)."""

    retryable = True


class LLMContextWindowExceedError(LLMError):
    """The request does not fit the model's context window."""


class LLMServiceUnavailableError(LLMError):
    """The provider could not be reached or failed on its side (5xx, connection errors)."""

    retryable = True


class LLMTimeoutError(LLMError):
    """The model did not answer in time."""

    retryable = True


class LLMBadRequestError(LLMError):
    """The provider refused the request as malformed or unsupported (400/404/422)."""


class LLMNoResponseError(LLMError):
    """The provider answered with no message at all."""

    retryable = True


class LLMCancelledError(LLMError):
    """The call was abandoned on request (the user interrupted)."""
