"""The OS keyring, safely: a backend that keeps secrets out of plain files, reached with a timeout.

Shared by the app's secret store (`ohtui.settings.secrets`) and the SDK's own users of the
keyring (`LLMProfileStore`). Every call runs on a daemon thread with a timeout, because a
locked Secret Service can wait for a password prompt forever. `keyring` is imported on first
use: it scans entry points on import.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

logger = logging.getLogger(__name__)

SERVICE = "ohtui"
"""The keyring service every ohtui secret is saved under."""

T = TypeVar("T")

READABLE_NAMES = {
    "keyring.backends.SecretService.Keyring": "Secret Service",
    "keyring.backends.libsecret.Keyring": "Secret Service (libsecret)",
    "keyring.backends.kwallet.DBusKeyring": "KWallet",
    "keyring.backends.macOS.Keyring": "macOS Keychain",
    "keyring.backends.Windows.WinVaultKeyring": "Windows Credential Manager",
}
# keyrings.alt backends that keep secrets in files anyone with the disk can read.
FILE_MODULES = ("keyrings.alt.file", "keyrings.alt.pyfs")


class KeyringTimeoutError(Exception):
    """A keyring call did not return in time (its thread is abandoned)."""


def call_with_timeout(fn: Callable[[], T], timeout: float, what: str) -> T:
    """`fn()` on a daemon thread; KeyringTimeoutError when it has not returned in `timeout`."""
    # A daemon thread, not an executor: executor threads are joined at exit, so one hung
    # D-Bus call would keep the whole app from quitting.
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, re-raised there
            future.set_exception(exc)

    threading.Thread(target=run, name=f"ohtui-keyring: {what}", daemon=True).start()
    try:
        return future.result(timeout)
    except FutureTimeout:
        logger.warning("keyring call abandoned after %g s: %s", timeout, what)
        raise KeyringTimeoutError(what) from None


def qualname(backend: KeyringBackend) -> str:
    """The backend class's dotted name."""
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def readable(backend: KeyringBackend) -> str:
    """The backend's name, as a user knows it."""
    from keyring.backends import fail, null

    if isinstance(backend, fail.Keyring):
        return "none"
    if isinstance(backend, null.Keyring):
        return "null (disabled)"
    return READABLE_NAMES.get(qualname(backend)) or str(type(backend).name)


def no_keyring_reason() -> str:
    """Why keyring found nothing, in words a user understands."""
    if not sys.platform.startswith("linux"):
        return "No OS keyring is available (the keyring library found no usable backend)."
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return (
            "No OS keyring is available (no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not "
            "set, as in an SSH or container session without a desktop)."
        )
    try:
        from keyring.backends import SecretService

        SecretService.Keyring.priority  # noqa: B018 - raises the reason it cannot be used
    except Exception as exc:  # noqa: BLE001 - any failure here is the reason we report
        detail = str(exc) or type(exc).__name__
        if "neither running nor activatable" in detail:
            return "No OS keyring is available (no Secret Service on the session bus)."
        return f"No OS keyring is available (the Secret Service cannot be reached: {detail})."
    return "No OS keyring is available (the keyring library found no usable backend)."


def usable_backend(backend: KeyringBackend) -> tuple[KeyringBackend | None, str | None]:
    """The safe backend to use for `backend` (a chainer's best member), or why there is none."""
    from keyring.backends import chainer, fail, null

    if isinstance(backend, chainer.ChainerBackend):
        for member in backend.backends:
            if usable_backend(member)[0] is not None:
                return member, None
        return None, no_keyring_reason()
    if isinstance(backend, fail.Keyring):
        return None, no_keyring_reason()
    if isinstance(backend, null.Keyring):
        return None, (
            "The OS keyring is turned off (the keyring library is set to its null backend, "
            "which saves nothing)."
        )
    name = qualname(backend)
    if name.startswith(FILE_MODULES) or "plaintext" in name.lower():
        return None, (
            f"The only keyring configured ({name}) keeps secrets in a plain file; "
            "ohtui does not store secrets there."
        )
    try:
        priority = float(type(backend).priority)
    except Exception as exc:  # noqa: BLE001 - keyring reports unusable backends by raising
        return None, f"The OS keyring ({readable(backend)}) cannot be used: {exc}."
    if priority < 1:  # keyring's own threshold for a recommended backend
        return None, (
            f"The configured keyring ({name}) is not one the keyring library recommends, so "
            "ohtui does not store secrets in it."
        )
    return backend, None


CALL_TIMEOUT = 5.0
"""Seconds a keyring read or write may take before it is abandoned."""


class KeyringUnavailableError(Exception):
    """No safe OS keyring answered; the message says why, in words a user understands."""


def read_secret(user: str, timeout: float = CALL_TIMEOUT) -> str | None:
    """The secret saved for `user` under ohtui's service, or None (KeyringUnavailableError)."""
    return _on_backend(lambda backend: backend.get_password(SERVICE, user), timeout, "read")


def write_secret(user: str, value: str | None, timeout: float = CALL_TIMEOUT) -> None:
    """Save `value` for `user` under ohtui's service; None deletes it (KeyringUnavailableError)."""

    def op(backend: KeyringBackend) -> None:
        from keyring.errors import PasswordDeleteError

        if value:
            backend.set_password(SERVICE, user, value)
            return
        with contextlib.suppress(PasswordDeleteError):  # nothing saved: already deleted
            backend.delete_password(SERVICE, user)

    _on_backend(op, timeout, "save")


def _on_backend(op: Callable[[KeyringBackend], T], timeout: float, what: str) -> T:
    def run() -> T:
        import keyring

        backend, problem = usable_backend(keyring.get_keyring())
        if backend is None:
            raise KeyringUnavailableError(problem or "No OS keyring is available.")
        return op(backend)

    try:
        return call_with_timeout(run, timeout, f"{what} a secret")
    except KeyringUnavailableError:
        raise
    except KeyringTimeoutError:
        raise KeyringUnavailableError(
            f"The OS keyring did not answer within {timeout:g} s (locked?)."
        ) from None
    except Exception as exc:  # noqa: BLE001 - backends raise anything (D-Bus, OS, keyring)
        # The value is never in the message: backends do not echo it, and it is not passed.
        raise KeyringUnavailableError(f"The OS keyring failed ({type(exc).__name__}).") from None
