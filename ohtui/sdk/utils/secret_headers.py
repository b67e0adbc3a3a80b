"""Which HTTP headers carry credentials, by name: their values are never saved in clear."""

from __future__ import annotations

import re

_SECRET_HEADER = re.compile(
    r"AUTHORIZATION|AUTH(?!OR)|COOKIE|CREDENTIAL|KEY|PASS|SECRET|SESSION|SIGNATURE|TOKEN",
    re.IGNORECASE,
)
"""Header names whose values are credentials ("Author" is not; "X-Auth" is)."""


def is_secret_header(name: str) -> bool:
    """Whether a header of this name carries a credential (so it is never saved in clear)."""
    return _SECRET_HEADER.search(name) is not None
