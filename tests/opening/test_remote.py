"""Small parts of opening a conversation on an agent server."""

from __future__ import annotations

import pytest

from ohtui.opening.remote import resume_command


@pytest.mark.parametrize(
    ("server", "command"),
    [
        (None, "ohtui --resume abc123"),
        ("http://127.0.0.1:8000", "ohtui --server http://127.0.0.1:8000 --resume abc123"),
        ("https://dev.box/agents", "ohtui --server https://dev.box/agents --resume abc123"),
        ("http://me:s3cret@devbox:8000", "ohtui --server http://devbox:8000 --resume abc123"),
        ("http://devbox:8000/a b", "ohtui --server 'http://devbox:8000/a b' --resume abc123"),
    ],
)
def test_the_resume_command_names_the_server_and_no_password(
    server: str | None, command: str
) -> None:
    assert resume_command("abc123", server) == command
