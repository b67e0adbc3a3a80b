"""Cipher: the SDK's form (`Cipher(secret_key=...)`, SecretStr in and out, None for what
cannot be decrypted) and ours (a positional key, plain text in)."""

from __future__ import annotations

import base64
import hashlib
import logging

import pytest
from pydantic import SecretStr

from ohtui.sdk.utils.cipher import Cipher


def test_the_sdk_form_round_trips_secret_strings() -> None:
    cipher = Cipher(secret_key="a passphrase with some entropy")
    token = cipher.encrypt(SecretStr("sk-live-123"))
    assert isinstance(token, str) and "sk-live" not in token
    restored = cipher.decrypt(token)
    assert isinstance(restored, SecretStr)
    assert restored.get_secret_value() == "sk-live-123"
    assert "sk-live" not in repr(restored)


def test_plain_text_and_a_positional_key_still_work() -> None:
    key = Cipher.generate_key()
    assert isinstance(key, str) and len(key) == 44
    assert key != Cipher.generate_key()
    token = Cipher(key).encrypt("payload ✓")
    restored = Cipher(key.encode()).decrypt(token)
    assert restored is not None and restored.get_secret_value() == "payload ✓"


def test_none_passes_through() -> None:
    cipher = Cipher(secret_key="k")
    assert cipher.encrypt(None) is None
    assert cipher.decrypt(None) is None


def test_an_empty_secret_is_encrypted_not_dropped() -> None:
    cipher = Cipher(secret_key="k")
    token = cipher.encrypt(SecretStr(""))
    assert token
    restored = cipher.decrypt(token)
    assert restored is not None and restored.get_secret_value() == ""


@pytest.mark.parametrize("token", ["", "not a token", "gAAAAA" + "x" * 80, "%%%"])
def test_what_cannot_be_decrypted_gives_none(token: str) -> None:
    assert Cipher(secret_key="k").decrypt(token) is None


def test_a_token_from_another_key_gives_none_and_logs_nothing_secret(
    caplog: pytest.LogCaptureFixture,
) -> None:
    token = Cipher(secret_key="right key").encrypt(SecretStr("the-hidden-value"))
    assert token is not None
    with caplog.at_level(logging.DEBUG):
        assert Cipher(secret_key="wrong key").decrypt(token) is None
    assert "the-hidden-value" not in caplog.text
    assert token not in caplog.text


def test_a_damaged_token_gives_none() -> None:
    cipher = Cipher(secret_key="k")
    token = cipher.encrypt("payload")
    assert token is not None
    damaged = token[:-6] + ("AAAAAA" if not token.endswith("AAAAAA") else "BBBBBB")
    assert cipher.decrypt(damaged) is None


def test_encryptions_differ_but_decrypt_alike() -> None:
    cipher = Cipher(secret_key="k")
    first, second = cipher.encrypt("same"), cipher.encrypt("same")
    assert first != second
    for token in (first, second):
        restored = cipher.decrypt(token)
        assert restored is not None and restored.get_secret_value() == "same"


def test_an_empty_key_is_rejected_and_the_key_never_shows() -> None:
    with pytest.raises(ValueError, match="empty"):
        Cipher(secret_key="")
    key = Cipher.generate_key()
    assert key not in repr(Cipher(key))


def test_a_passphrase_opens_what_the_sdk_encrypted_with_it_and_back() -> None:
    from cryptography.fernet import Fernet

    # The SDK keys Fernet with the SHA-256 of the passphrase, in standard base64.
    sdk = Fernet(base64.b64encode(hashlib.sha256(b"shared passphrase").digest()))
    restored = Cipher(secret_key="shared passphrase").decrypt(sdk.encrypt(b"from-sdk").decode())
    assert restored is not None and restored.get_secret_value() == "from-sdk"
    token = Cipher(secret_key="shared passphrase").encrypt("from-ohtui")
    assert sdk.decrypt(token.encode()) == b"from-ohtui"
