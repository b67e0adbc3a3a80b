"""The server's own secret: the key that encrypts the agents' API keys it saves for resume."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ohtui.sdk.utils.cipher import Cipher

SECRET_ENV = "OHTUI_SERVER_SECRET_KEY"
"""Overrides the key file (e.g. for servers whose data dir is shared or ephemeral)."""
OPENHANDS_SECRET_ENV = "OH_SECRET_KEY"
"""The OpenHands server's name for it, used when OHTUI_SERVER_SECRET_KEY is unset."""


def given_secret_key(environ: Mapping[str, str]) -> str | None:
    """The secret key given in the environment (OHTUI_SERVER_SECRET_KEY, else
    OH_SECRET_KEY), or None."""
    return environ.get(SECRET_ENV) or environ.get(OPENHANDS_SECRET_ENV) or None


def server_cipher(path: Path) -> Cipher:
    """The cipher from OHTUI_SERVER_SECRET_KEY (or OH_SECRET_KEY), else from `path` (made on
    first start, readable by this user only). PersistenceError-free: OSError says what failed."""
    from ohtui.sdk.utils.cipher import Cipher  # the engine's: loaded with it, not at start

    override = given_secret_key(os.environ)
    if override:
        return Cipher(override)
    if path.exists():
        return Cipher(path.read_text().strip())
    path.parent.mkdir(parents=True, exist_ok=True)
    key = Cipher.generate_key()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
    with os.fdopen(fd, "w") as file:
        file.write(key)
    return Cipher(key)
