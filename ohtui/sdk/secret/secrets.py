"""Where a secret's value comes from: a fixed value, or one looked up when a command needs it.

Sources are saved with the conversation: values redacted, or encrypted when the dump's
context carries a cipher (see `utils.exposure`). A redacted value loads back as None.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Self
from urllib.parse import urljoin, urlsplit

from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    SerializationInfo,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_serializer,
    model_validator,
)

from ohtui.sdk.utils.cipher import Cipher
from ohtui.sdk.utils.exposure import SecretExposure, dump_secret
from ohtui.sdk.utils.models import DiscriminatedUnionMixin
from ohtui.sdk.utils.secret_headers import is_secret_header

REDACTED = "**********"
"""How a redacted value is written where a string must stand (pydantic's SecretStr form)."""
LOOKUP_TIMEOUT_SECONDS = 30.0
SERVER_URL_ENV = "OH_INTERNAL_SERVER_URL"
"""The agent server a relative lookup URL is resolved against."""
DEFAULT_SERVER_URL = "http://127.0.0.1:8000"
_FERNET_PREFIX = "gAAAAA"
"""How every Fernet token starts (its version byte and timestamp), so a saved value that
looks like one is decrypted rather than taken for the secret itself."""


def _is_blank(value: str) -> bool:
    """An empty or redacted value: nothing usable was saved."""
    return not value.strip() or value == REDACTED


class SecretSource(DiscriminatedUnionMixin, ABC):
    """Where a secret's value comes from."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    description: str | None = None
    restore_error: str | None = Field(
        default=None, exclude=True, description="Why a saved value could not be restored."
    )

    @abstractmethod
    def get_value(self) -> str | None:
        """The current value, or None when there is none."""


class StaticSecret(SecretSource):
    """A fixed value."""

    value: SecretStr | None = None
    encrypted_value: str | None = Field(default=None, description="Only in saved form.")

    def get_value(self) -> str | None:
        """The value."""
        return self.value.get_secret_value() if self.value is not None else None

    @model_validator(mode="before")
    @classmethod
    def _restore(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        cipher = (info.context or {}).get("cipher")
        token = data.pop("encrypted_value", None)
        value = data.get("value")
        plain = value.get_secret_value() if isinstance(value, SecretStr) else value
        if isinstance(plain, str) and cipher is not None and plain.startswith(_FERNET_PREFIX):
            token = plain  # the SDK saves an encrypted value in place of the value
        if token:
            data["value"] = cipher.decrypt(token) if cipher is not None else None
            if cipher is None:
                data["restore_error"] = "they were saved encrypted and no cipher was given"
            elif data["value"] is None:
                data["restore_error"] = "the cipher given is not the one they were saved with"
        elif isinstance(plain, str) and _is_blank(plain):
            data["value"] = None
        return data

    @model_serializer(mode="wrap")
    def _serialize(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        secret = self.get_value()
        exposure = SecretExposure.of(info.context)
        data["value"] = secret if exposure is SecretExposure.PLAINTEXT else None
        data["encrypted_value"] = (
            dump_secret(secret, info.context)
            if secret is not None and exposure is SecretExposure.ENCRYPTED
            else None
        )
        return data


class LookupSecret(SecretSource):
    """A value looked up when a command first needs it: fetched with an HTTP GET of `url`
    (sending `headers`), or returned by a function (`from_callable`; a function is never
    saved, so after a resume such a secret has no value until it is set again).

    The value is never saved or logged. Headers whose names mark a credential are saved
    redacted or encrypted like a value; put credentials in headers, not in the URL, which
    is saved as given.
    """

    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict, repr=False)

    _fn: Callable[[], str] | None = PrivateAttr(default=None)

    @classmethod
    def from_callable(cls, fn: Callable[[], str], description: str | None = None) -> Self:
        """Wrap a no-argument function returning the value."""
        source = cls(description=description)
        source._fn = fn
        return source

    def get_value(self) -> str | None:
        """Fetch the value now (None when there is no URL and no function)."""
        if self._fn is not None:
            return self._fn()
        if self.url is None:
            return None
        import httpx  # imported on first use: the engine starts without it

        response = httpx.get(self.url, headers=self.headers, timeout=LOOKUP_TIMEOUT_SECONDS)
        response.raise_for_status()
        return response.text

    @field_validator("url")
    @classmethod
    def _absolute_url(cls, url: str | None) -> str | None:
        if url is None:
            return None
        if not url.strip():
            raise ValueError("a LookupSecret needs a URL to fetch (or use from_callable)")
        parts = urlsplit(url)
        if parts.scheme or parts.netloc:
            return url
        server = os.environ.get(SERVER_URL_ENV) or DEFAULT_SERVER_URL
        return urljoin(server.rstrip("/") + "/", url.lstrip("/"))

    @field_validator("headers")
    @classmethod
    def _restore_headers(cls, headers: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        cipher = (info.context or {}).get("cipher")
        restored: dict[str, str] = {}
        for name, value in headers.items():
            if not is_secret_header(name):
                restored[name] = value
            elif not _is_blank(value):
                # A header sent in clear alongside encrypted secrets stays as it is.
                secret = cipher.decrypt(value) if isinstance(cipher, Cipher) else None
                restored[name] = secret.get_secret_value() if secret is not None else value
        return restored

    @field_serializer("headers")
    def _save_headers(self, headers: dict[str, str], info: SerializationInfo) -> dict[str, str]:
        saved: dict[str, str] = {}
        for name, value in headers.items():
            if is_secret_header(name):
                saved[name] = dump_secret(value, info.context) or REDACTED
            else:
                saved[name] = value
        return saved


def __getattr__(name: str) -> Any:
    """`httpx`, the lookups' HTTP client, imported on first access (as `get_value` does), so
    the module's attribute is where the SDK's has it without the engine loading it early."""
    if name == "httpx":
        import httpx

        return httpx
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
