"""How secret fields are written when a model is dumped: the serialization context decides.

`context={"expose_secrets": True}` (or `"plaintext"`) writes them in clear, for a trusted
caller; `"encrypted"`, or a `cipher` in the context, writes them encrypted with that cipher;
anything else redacts them.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from ohtui.sdk.utils.cipher import Cipher


class SecretExposure(StrEnum):
    """How a dump writes secret values."""

    REDACTED = "redacted"
    ENCRYPTED = "encrypted"
    PLAINTEXT = "plaintext"

    @classmethod
    def of(cls, context: Mapping[str, Any] | None) -> SecretExposure:
        """The exposure a serialization context asks for (REDACTED when it asks for none)."""
        context = context or {}
        asked = context.get("expose_secrets")
        if asked is True or asked == cls.PLAINTEXT:
            return cls.PLAINTEXT
        if asked == cls.ENCRYPTED or context.get("cipher") is not None:
            return cls.ENCRYPTED
        return cls.REDACTED


def dump_secret(value: str, context: Mapping[str, Any] | None) -> str | None:
    """`value` as the context asks: in clear, encrypted, or None (redacted)."""
    exposure = SecretExposure.of(context)
    if exposure is SecretExposure.PLAINTEXT:
        return value
    if exposure is SecretExposure.ENCRYPTED:
        cipher = (context or {}).get("cipher")
        if not isinstance(cipher, Cipher):
            raise ValueError(
                "expose_secrets='encrypted' needs a Cipher in the serialization context "
                "(context={'cipher': Cipher(secret_key=...)})"
            )
        return cipher.encrypt(value)
    return None
