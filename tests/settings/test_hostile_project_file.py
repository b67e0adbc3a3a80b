"""A workspace's .mcp.json written by an attacker: what it names cannot hang, exhaust or crash
the opening, and nothing that decides what runs escapes the fingerprint."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from ohtui.settings.mcp_trust import ProjectServers, TrustStore, read_project_servers
from ohtui.settings.mcp_trust import trusted_servers as trusted


def write(workspace: Path, servers: dict[str, object]) -> None:
    text = json.dumps({"mcpServers": servers})
    (workspace / ".mcp.json").write_text(text, encoding="utf-8")


def read_within(workspace: Path, seconds: float = 5.0) -> ProjectServers | None:
    """read_project_servers, failing the test instead of hanging it."""
    result: list[ProjectServers | None] = []
    worker = threading.Thread(target=lambda: result.append(read_project_servers(workspace)))
    worker.daemon = True
    worker.start()
    worker.join(seconds)
    assert result, "reading the project file hung"
    return result[0]


def test_an_argument_too_long_for_a_file_name_is_reviewed_not_raised(tmp_path: Path) -> None:
    write(tmp_path, {"srv": {"command": "srv", "args": ["--token=" + "a" * 300]}})
    project = read_project_servers(tmp_path)
    assert project is not None and project.error is None
    assert project.launches[0].argv[1].startswith("--token=aaa")


def test_a_file_that_cannot_be_hashed_is_left_out_not_raised(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    write(tmp_path, {"srv": {"command": "node", "args": ["pipe", "x" * 300 + "/y"]}})
    project = read_within(tmp_path)
    assert project is not None and project.error is None


@pytest.mark.parametrize("kind", ["fifo", "device", "huge"])
def test_a_project_file_that_is_no_regular_small_file_is_a_clear_error(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / ".mcp.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    else:
        path.write_text('{"mcpServers": {}, "pad": "' + "x" * (2 << 20) + '"}')
    project = read_within(tmp_path)
    assert project is not None and project.error is not None
    assert str(path) in project.error
    assert ("not a regular file" if kind != "huge" else "larger than") in project.error
    assert trusted(project, tmp_path, TrustStore(None))[0] == {}
