"""SecretRegistry: secrets the agent's commands may use, exported only where referenced and
masked everywhere they could show."""

from __future__ import annotations

import logging
import re
import threading
import time
import warnings
from collections.abc import Callable, Collection, Mapping
from typing import Any

from pydantic import ConfigDict, Field, PrivateAttr, SecretStr, SerializeAsAny

from ohtui.sdk.secret.secrets import LookupSecret, SecretSource, StaticSecret
from ohtui.sdk.utils.masking import (
    SECRET_MASK,
    forms_to_mask,
    mask_text,
    partial_at_end,
    partial_at_start,
)
from ohtui.sdk.utils.models import FastPrivateModel

logger = logging.getLogger(__name__)

SecretValue = str | SecretSource | Callable[[], str]
"""A secret as given: its value, a source, or a function returning the value when needed."""
MIN_MASKED_LENGTH = 4
"""Shorter values are not masked: replacing every "a" or "1" would wreck all output."""
FAILED_LOOKUP_RETRY_SECONDS = 60.0
"""How long masking leaves a secret whose source failed before asking that source again."""
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


class SecretRegistry(FastPrivateModel):
    """Secrets by name. A command gets, as environment variables, only the secrets it names;
    every value known so far, and its encoded forms (see `utils.masking`), is masked
    as `<secret-hidden>` in text given to `mask_*`.

    A fixed value is masked from the start. A looked-up one is masked once it has been
    handed out (`_exported_values` holds the latest value handed out per name; it is not
    saved), and masking fetches each source it has no value of yet, once, so a value that
    reaches some output without a command naming it (a token in a git remote URL) is masked
    too; a source that fails is asked again at most every FAILED_LOOKUP_RETRY_SECONDS, and
    masking goes on with what it knows. Log records are masked with the values known, never
    by fetching. Earlier values stay masked after a secret changes.
    """

    model_config = ConfigDict(defer_build=True, extra="forbid")

    secret_sources: dict[str, SerializeAsAny[SecretSource]] = Field(default_factory=dict)

    _known: set[str] = PrivateAttr(default_factory=set)
    _exported_values: dict[str, str] = PrivateAttr(default_factory=dict)
    _forms: tuple[str, ...] | None = PrivateAttr(default=None)
    _lock: threading.RLock = PrivateAttr(default_factory=threading.RLock)
    _unavailable: dict[str, str] = PrivateAttr(default_factory=dict)
    _unfetched: set[str] = PrivateAttr(default_factory=set)
    _failed_lookups: dict[str, float] = PrivateAttr(default_factory=dict)  # monotonic times
    _fetch_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _fetching: threading.local = PrivateAttr(default_factory=threading.local)

    def model_post_init(self, context: Any, /) -> None:
        """Learn the static values; warn once about saved values that could not be restored."""
        for key, source in self.secret_sources.items():
            if isinstance(source, StaticSecret) and (value := source.get_value()):
                self._learn(value)
            if source.restore_error:
                self._unavailable[key] = source.restore_error
            elif not isinstance(source, StaticSecret):
                self._unfetched.add(key)
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
        """Whether masking has something to do: a value is known, or a source may give one
        that has not been fetched yet."""
        return bool(self._known or self._unfetched)

    def update_secrets(self, secrets: Mapping[str, SecretValue]) -> None:
        """Add or replace secrets: values, sources, or functions called when a command
        needs them."""
        with self._lock:
            for key, value in secrets.items():
                if not _KEY.match(key):
                    raise ValueError(
                        f"secret name {key!r} must be usable as an environment variable "
                        "(letters, digits and _, not starting with a digit)"
                    )
                if isinstance(value, str):
                    source: SecretSource = StaticSecret(value=SecretStr(value))
                elif isinstance(value, SecretSource):
                    source = value
                elif callable(value):
                    source = LookupSecret.from_callable(value)
                else:
                    raise TypeError(
                        f"secret {key!r} must be a string, a SecretSource or a function "
                        "returning a string"
                    )
                # A fixed value is masked from now on; a looked-up one once it is fetched.
                if isinstance(source, StaticSecret):
                    if known := source.get_value():
                        self._learn(known)
                    self._unfetched.discard(key)
                else:
                    self._unfetched.add(key)
                self._failed_lookups.pop(key, None)
                self.secret_sources[key] = source
                self._unavailable.pop(key, None)

    def add_masked_value(self, value: str) -> None:
        """Mask `value` like a secret's, without making it one: no command can get it by any
        name, and it is never saved (e.g. the LLM's own API key)."""
        if value:
            with self._lock:
                self._learn(value)

    def track_exported_values(self, values: Mapping[str, str]) -> None:
        """Record these secrets' values as handed out (by name), and mask them from now on;
        empty values are ignored (masking "" would splice the mask between characters)."""
        with self._lock:
            for name, value in values.items():
                if value:
                    self._exported_values[name] = value
                    self._learn(value)
                    self._unfetched.discard(name)
                    self._failed_lookups.pop(name, None)

    def find_secrets_in_text(self, text: str) -> set[str]:
        """The names of secrets that `text` mentions anywhere, in any case (as the SDK
        finds them). Commands get fewer: only the names they hold as whole words."""
        with self._lock:
            keys = list(self.secret_sources)
        folded = text.casefold()
        return {key for key in keys if key.casefold() in folded}

    def get_secrets_as_env_vars(self, command: str) -> dict[str, str]:
        """The secrets `command` names, resolved now, as environment variables to export.

        A name counts only as a whole word in its exact case (`$API_KEY`, `${API_KEY}`), the
        way the shell reads it, so a command never gets a secret it cannot refer to.
        """
        with self._lock:
            keys = list(self.secret_sources)
        named = {key for key in keys if _whole_word(key).search(command)}
        return self._resolve_all(sorted(named))

    def get_all_secrets_as_env_vars(self, exclude: Collection[str] | None = None) -> dict[str, str]:
        """Every secret but those in `exclude`, resolved now, as environment variables: for
        a consumer whose commands cannot be read (prefer `get_secrets_as_env_vars`)."""
        with self._lock:
            keys = [key for key in self.secret_sources if key not in (exclude or ())]
        return self._resolve_all(keys)

    def get_secret_value(self, name: str) -> str | None:
        """The value of one secret, resolved now (None if there is no such secret or its
        lookup failed); it is masked from now on."""
        with self._lock:
            source = self.secret_sources.get(name)
        if source is None:
            return None
        try:
            value = source.get_value()
        except Exception:  # a failing lookup must not break its caller
            logger.warning("the secret %s could not be fetched", name, exc_info=True)
            return None
        if value:
            self.track_exported_values({name: value})
        return value

    def get_secret_infos(self) -> list[dict[str, str | None]]:
        """The name and description of every secret (never its value), e.g. for a prompt."""
        with self._lock:
            return [
                {"name": name, "description": source.description}
                for name, source in self.secret_sources.items()
            ]

    def _resolve_all(self, keys: Collection[str]) -> dict[str, str]:
        """The non-empty values of `keys`; failing lookups are left out."""
        env: dict[str, str] = {}
        for key in keys:
            if value := self.get_secret_value(key):
                env[key] = value
        return env

    def mask_secrets_in_output(self, text: str) -> str:
        """`text` with every secret value (current or earlier), plain or encoded, replaced
        by the mask; sources not fetched yet are fetched first (see the class)."""
        self._fetch_unfetched()
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
        """Every form of every value long enough to mask, longest first (sources not
        fetched yet are fetched first)."""
        self._fetch_unfetched()
        return self._values_to_mask()

    def _mask_known(self, text: str) -> str:
        """`text` masked with the values known now: no source is asked (for log records,
        which a failing lookup itself writes)."""
        return mask_text(text, self._values_to_mask())

    def _fetch_unfetched(self) -> None:
        """Fetch, once, each source whose value masking does not know yet; one that failed
        is left alone for FAILED_LOOKUP_RETRY_SECONDS."""
        if not self._unfetched or getattr(self._fetching, "active", False):
            return
        with self._lock:
            due = [name for name in self._unfetched if self._may_ask(name)]
        if not due:
            return
        self._fetching.active = True
        try:
            with self._fetch_lock:  # one fetch per source, whichever thread masks first
                for name in due:
                    with self._lock:
                        if name not in self._unfetched or not self._may_ask(name):
                            continue  # fetched (or failed) on another thread meanwhile
                    if not self.get_secret_value(name):
                        with self._lock:
                            self._failed_lookups[name] = time.monotonic()
        finally:
            self._fetching.active = False

    def _may_ask(self, name: str) -> bool:
        """Whether masking may ask this secret's source now (the caller holds the lock)."""
        failed_at = self._failed_lookups.get(name)
        return failed_at is None or time.monotonic() - failed_at >= FAILED_LOOKUP_RETRY_SECONDS

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


def _whole_word(name: str) -> re.Pattern[str]:
    """Matches `name` where the shell would read it as one name."""
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")


class SecretMaskingFilter(logging.Filter):
    """A logging filter that masks a registry's secrets in every record it passes."""

    def __init__(self, registry: SecretRegistry) -> None:
        super().__init__()
        self._registry = registry

    def filter(self, record: logging.LogRecord) -> bool:
        """Mask the formatted message (and drop the args it was formatted from), the
        traceback and the stack."""
        if self._registry.has_values:
            mask = self._registry._mask_known
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
