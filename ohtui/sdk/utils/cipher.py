"""Cipher: encrypts secrets at rest with Fernet (AES-128-CBC + HMAC-SHA256, from `cryptography`)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any


class CipherError(ValueError):
    """A token could not be decrypted: wrong key, or damaged data."""


class Cipher:
    """Encrypts and decrypts text with one key.

    `key` is a Fernet key (as made by `Cipher.generate_key()`) or any passphrase, which is
    turned into one with SHA-256 (prefer a generated key kept in the OS keyring).
    """

    def __init__(self, key: str | bytes) -> None:
        raw = key.encode() if isinstance(key, str) else key
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

    def _get(self) -> Any:
        if self._fernet is None:
            from cryptography.fernet import Fernet  # imported on first use: it is not small

            self._fernet = Fernet(self._key)
        return self._fernet

    def encrypt(self, text: str) -> str:
        """The encrypted, URL-safe token for `text`."""
        return str(self._get().encrypt(text.encode()).decode())

    def decrypt(self, token: str) -> str:
        """The text of a token; CipherError if this key did not make it or it is damaged."""
        from cryptography.fernet import InvalidToken

        try:
            return str(self._get().decrypt(token.encode()).decode())
        except (InvalidToken, ValueError) as exc:
            raise CipherError("the data cannot be decrypted with this key") from exc

    def __repr__(self) -> str:
        return "Cipher(<key hidden>)"


def _is_fernet_key(raw: bytes) -> bool:
    try:
        return len(base64.urlsafe_b64decode(raw)) == 32 and len(raw) == 44
    except ValueError:
        return False
