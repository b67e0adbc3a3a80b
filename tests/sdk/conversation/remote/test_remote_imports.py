"""Importing the SDK or the CLI, or running `ohtui --help`, loads neither httpx nor
websockets: the remote client imports them when a remote conversation is made."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[4]
CHECK = (
    "import sys\n"
    "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'httpx', 'websockets'})\n"
    "assert not heavy, f'imported: {heavy}'\n"
)


@pytest.mark.parametrize(
    "code",
    [
        "import ohtui.sdk\nfrom ohtui.sdk import RemoteConversation, RemoteWorkspace\n",
        "import ohtui.cli\n",
        "import sys\nsys.argv = ['ohtui', '--help']\nfrom ohtui.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n",
    ],
    ids=["sdk", "cli", "help"],
)
def test_no_http_or_socket_library_is_imported(code: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", code + CHECK],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_a_remote_workspace_is_made_without_them_too() -> None:
    code = (
        "from ohtui.sdk import RemoteWorkspace\n"
        "RemoteWorkspace(host='127.0.0.1:8000', api_key='k')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code + CHECK],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
