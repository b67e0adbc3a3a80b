"""SecretRegistry: secrets the agent's commands may use, exported only where referenced and
masked everywhere they could show."""

from __future__ import annotations

import logging
import re
import threading
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, Self

from pydantic import BaseModel as _BaseModel
from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    SerializationInfo,
    SerializeAsAny,
    ValidationInfo,
    model_serializer,
    model_validator,
)

from ohtui.sdk.utils.cipher import Cipher, CipherError
from ohtui.sdk.utils.masking import (
    SECRET_MASK,
    forms_to_mask,
    mask_text,
    partial_at_end,
    partial_at_start,
)
from ohtui.sdk.utils.models import DiscriminatedUnionMixin

logger = logging.getLogger(__name__)

SecretValue = str | Callable[[], str]
MIN_MASKED_LENGTH = 4
"""Shorter values are not masked: replacing every "a" or "1" would wreck all output."""
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_STRUCTURAL_KEYS = frozenset(
    {
        "kind",
        "id",
        "source",
        "role",
        "type",
        "timestamp",
        "tool_call_id",
        "tool_name",
        "action_id",
        "llm_response_id",
        "security_risk",
        "origin",
        "status",
        "name",
    }
)


class SecretsUnavailableWarning(UserWarning):
    """Saved secrets could not be restored (no cipher, or the wrong one)."""


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
    """A fixed value. Saved redacted, or encrypted when the conversation has a cipher."""

    value: SecretStr | None = None
    encrypted_value: str | None = Field(default=None, description="Only in saved form.")

    def get_value(self) -> str | None:
        """The value."""
        return self.value.get_secret_value() if self.value is not None else None

    @model_validator(mode="before")
    @classmethod
    def _decrypt(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict) or not data.get("encrypted_value"):
            return data
        data = dict(data)
        token = data.pop("encrypted_value")
        cipher = (info.context or {}).get("cipher")
        if cipher is None:
            data["restore_error"] = "they were saved encrypted and no cipher was given"
        else:
            try:
                data["value"] = SecretStr(cipher.decrypt(token))
            except CipherError:
                data["restore_error"] = "the cipher given is not the one they were saved with"
        return data

    @model_serializer(mode="wrap")
    def _serialize(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        context = info.context or {}
        secret = self.get_value()
        data["value"] = None
        data["encrypted_value"] = None
        if secret is not None:
            if context.get("expose_secrets"):
                data["value"] = secret
            elif isinstance(context.get("cipher"), Cipher):
                data["encrypted_value"] = context["cipher"].encrypt(secret)
        return data


class LookupSecret(SecretSource):
    """A value fetched by a function when a command first needs it. Never saved."""

    _fn: Callable[[], str] | None = PrivateAttr(default=None)

    @classmethod
    def from_callable(cls, fn: Callable[[], str], description: str | None = None) -> Self:
        """Wrap a no-argument function returning the value."""
        source = cls(description=description)
        source._fn = fn
        return source

    def get_value(self) -> str | None:
        """Call the function (None when there is none, e.g. after a resume)."""
        return self._fn() if self._fn is not None else None


class SecretRegistry(_BaseModel):
    """Secrets by name. A command gets, as environment variables, only the secrets it names;
    every value known so far, and its encoded forms (see `utils.masking`), is masked
    as `<secret-hidden>` in text given to `mask_*`."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    secret_sources: dict[str, SerializeAsAny[SecretSource]] = Field(default_factory=dict)

    _known: set[str] = PrivateAttr(default_factory=set)
    _forms: tuple[str, ...] | None = PrivateAttr(default=None)
    _lock: threading.RLock = PrivateAttr(default_factory=threading.RLock)
    _unavailable: dict[str, str] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: Any, /) -> None:
        """Learn the static values; warn once about saved values that could not be restored."""
        for key, source in self.secret_sources.items():
            value = source.get_value()
            if value:
                self._learn(value)
            if source.restore_error:
                self._unavailable[key] = source.restore_error
        if self._unavailable:
            names = ", ".join(sorted(self._unavailable))
            reason = next(iter(self._unavailable.values()))
            message = f"The saved secrets {names} could not be restored: {reason}. Set them again."
            warnings.warn(message, SecretsUnavailableWarning, stacklevel=2)

    @property
    def unavailable(self) -> dict[str, str]:
        """Secrets that were saved but could not be restored, with the reason."""
        return dict(self._unavailable)

    @property
    def has_values(self) -> bool:
        """Whether any secret value is known (so masking has something to do)."""
        return bool(self._known)

    def update_secrets(self, secrets: Mapping[str, SecretValue]) -> None:
        """Add or replace secrets: values, or functions called when a command needs them."""
        with self._lock:
            for key, value in secrets.items():
                if not _KEY.match(key):
                    raise ValueError(
                        f"secret name {key!r} must be usable as an environment variable "
                        "(letters, digits and _, not starting with a digit)"
                    )
                if isinstance(value, str):
                    self.secret_sources[key] = StaticSecret(value=SecretStr(value))
                    if value:
                        self._learn(value)
                elif callable(value):
                    self.secret_sources[key] = LookupSecret.from_callable(value)
                else:
                    raise TypeError(f"secret {key!r} must be a string or a function returning one")
                self._unavailable.pop(key, None)

    def add_masked_value(self, value: str) -> None:
        """Mask `value` like a secret's, without making it one: no command can get it by any
        name, and it is never saved (e.g. the LLM's own API key)."""
        if value:
            with self._lock:
                self._learn(value)

    def find_secrets_in_text(self, text: str) -> set[str]:
        """The names of secrets that `text` mentions (as whole words, e.g. `$API_KEY`)."""
        with self._lock:
            keys = list(self.secret_sources)
        return {
            k for k in keys if re.search(rf"(?<![A-Za-z0-9_]){re.escape(k)}(?![A-Za-z0-9_])", text)
        }

    def get_secrets_as_env_vars(self, command: str) -> dict[str, str]:
        """The secrets `command` names, resolved now, as environment variables to export."""
        env: dict[str, str] = {}
        for key in sorted(self.find_secrets_in_text(command)):
            with self._lock:
                source = self.secret_sources.get(key)
            if source is None:
                continue
            try:
                value = source.get_value()
            except Exception:  # a failing lookup must not break the command
                logger.warning("the secret %s could not be fetched", key, exc_info=True)
                continue
            if value:
                with self._lock:
                    self._learn(value)
                env[key] = value
        return env

    def mask_secrets_in_output(self, text: str) -> str:
        """`text` with every known secret value (current or earlier), plain or encoded,
        replaced by the mask."""
        return mask_text(text, self._values_to_mask())

    def mask_fragment(self, text: str, cut_before: bool, cut_after: bool) -> str:
        """Mask a piece cut out of a longer text: a value it holds only part of, at a cut
        edge, is masked too (the part that is shown would give the value away)."""
        text = self.mask_secrets_in_output(text)
        forms = self._values_to_mask()
        if cut_after:
            size = max((partial_at_end(text, f, MIN_MASKED_LENGTH) for f in forms), default=0)
            text = text[:-size] + SECRET_MASK if size else text
        if cut_before:
            size = max((partial_at_start(text, f, MIN_MASKED_LENGTH) for f in forms), default=0)
            text = SECRET_MASK + text[size:] if size else text
        return text

    def mask_data(self, data: Any) -> Any:
        """JSON-like data with secrets masked in its free-text strings.

        Keys, and the values of identifier or enum fields (ids, kinds, roles...), are left
        alone: they never hold secrets, and masking them would break the data's shape.
        """
        if isinstance(data, str):
            return self.mask_secrets_in_output(data)
        if isinstance(data, list):
            return [self.mask_data(item) for item in data]
        if isinstance(data, dict):
            return {k: v if k in _STRUCTURAL_KEYS else self.mask_data(v) for k, v in data.items()}
        return data

    def values_to_mask(self) -> tuple[str, ...]:
        """Every form of every known value long enough to mask, longest first."""
        return self._values_to_mask()

    def _learn(self, value: str) -> None:
        """Remember a value to mask (the caller holds the lock)."""
        if value not in self._known:
            self._known.add(value)
            self._forms = None

    def _values_to_mask(self) -> tuple[str, ...]:
        with self._lock:
            if self._forms is None:
                values = (v for v in self._known if len(v) >= MIN_MASKED_LENGTH)
                self._forms = forms_to_mask(values)
            return self._forms


_TRACEBACKS = logging.Formatter()
"""Formats a record's traceback, for the filter to mask it before any handler prints it."""


class SecretMaskingFilter(logging.Filter):
    """A logging filter that masks a registry's secrets in every record it passes."""

    def __init__(self, registry: SecretRegistry) -> None:
        super().__init__()
        self._registry = registry

    def filter(self, record: logging.LogRecord) -> bool:
        """Mask the formatted message (and drop the args it was formatted from), the
        traceback and the stack."""
        if self._registry.has_values:
            mask = self._registry.mask_secrets_in_output
            record.msg = mask(record.getMessage())
            record.args = None
            if record.exc_info and not record.exc_text:
                # Formatters print exc_text when it is set, instead of formatting exc_info.
                record.exc_text = _TRACEBACKS.formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = mask(record.exc_text)
            if record.stack_info:
                record.stack_info = mask(record.stack_info)
        return True


class StreamMasker:
    """Masks secrets in text that arrives in pieces, where a value may span two pieces.

    It holds back the end of the text while that end could be the start of a secret, so a
    value split across chunks is still masked; `flush` releases what is held.
    """

    def __init__(self, registry: SecretRegistry) -> None:
        self._registry = registry
        self._held = ""

    def feed(self, text: str) -> str:
        """The part of the text so far that is safe to show."""
        buffer = self._registry.mask_secrets_in_output(self._held + text)
        forms = self._registry.values_to_mask()
        keep = max((partial_at_end(buffer, form) for form in forms), default=0)
        self._held = buffer[len(buffer) - keep :] if keep else ""
        return buffer[: len(buffer) - keep]

    def flush(self) -> str:
        """Whatever is still held, masked."""
        held, self._held = self._held, ""
        return self._registry.mask_secrets_in_output(held)
