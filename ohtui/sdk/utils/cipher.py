"""Cipher: encrypts secrets at rest with Fernet (AES-128-CBC + HMAC-SHA256, from `cryptography`)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any, overload

from pydantic import SecretStr


class Cipher:
    """Encrypts and decrypts secrets with one key.

    `secret_key` is a Fernet key (as made by `Cipher.generate_key()`) or any passphrase,
    which is turned into one with SHA-256 (prefer a generated key kept in the OS keyring).
    """

    def __init__(self, secret_key: str | bytes) -> None:
        raw = secret_key.encode() if isinstance(secret_key, str) else secret_key
        if not raw:
            raise ValueError("a cipher key must not be empty")
        self._key = (
            raw if _is_fernet_key(raw) else base64.urlsafe_b64encode(hashlib.sha256(raw).digest())
        )
        self._fernet: Any = None

    @staticmethod
    def generate_key() -> str:
        """A new random key."""
        from cryptography.fernet import Fernet

        return Fernet.generate_key().decode()

    def _get_fernet(self) -> Any:
        if self._fernet is None:
            from cryptography.fernet import Fernet  # imported on first use: it is not small

            self._fernet = Fernet(self._key)
        return self._fernet

    @overload
    def encrypt(self, secret: None) -> None: ...
    @overload
    def encrypt(self, secret: str | SecretStr) -> str: ...
    def encrypt(self, secret: str | SecretStr | None) -> str | None:
        """The encrypted, URL-safe token for `secret` (None for None)."""
        if secret is None:
            return None
        text = secret.get_secret_value() if isinstance(secret, SecretStr) else secret
        return str(self._get_fernet().encrypt(text.encode()).decode())

    def decrypt(self, token: str | None) -> SecretStr | None:
        """The secret in `token`; None when there is none, or this key did not make it, or
        it is damaged (so a value saved with another key loads as if it had been redacted)."""
        if token is None:
            return None
        from cryptography.fernet import InvalidToken

        try:
            return SecretStr(self._get_fernet().decrypt(token.encode()).decode())
        except (InvalidToken, ValueError):
            return None

    def __repr__(self) -> str:
        return "Cipher(<key hidden>)"


def _is_fernet_key(raw: bytes) -> bool:
    try:
        return len(base64.urlsafe_b64decode(raw)) == 32 and len(raw) == 44
    except ValueError:
        return False
