"""A trusted project MCP server is checked against what the user trusted at every start, not
only when ohtui opens: a reconnect or /mcp after the agent edited the script it runs does not
start the edited script.

Through `open_conversation`, as every front end opens a conversation, with our test server
copied into the workspace as the project's script.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from mcp_servers import TEST_SERVER

from ohtui.opening.local import open_conversation
from ohtui.sdk.mcp import MCPClientManager, ServerStatus
from ohtui.settings.profile import Profile

CONFIG = '[llm]\nmodel = "openai/test-model"\nbase_url = "http://127.0.0.1:9/v1"\n'


def wait_failed(manager: MCPClientManager) -> str:
    deadline = time.monotonic() + 60
    while manager.servers()[0].status is not ServerStatus.FAILED:
        assert time.monotonic() < deadline, manager.servers()
        time.sleep(0.1)
    return manager.servers()[0].error or ""


def test_a_project_server_whose_script_changed_since_trust_is_not_started_again(
    tmp_path: Path, workspace: Path, persistence_dir: Path
) -> None:
    script = workspace / "server.py"
    shutil.copy(TEST_SERVER, script)
    marker = tmp_path / "edited-script-ran"
    (tmp_path / "config.toml").write_text(CONFIG, encoding="utf-8")
    profile = Profile(tmp_path / "config.toml", use_keyring=False, environ={}).load()
    trusted = {"calc": {"command": sys.executable, "args": ["server.py"], "cwd": "."}}
    opened = open_conversation(
        profile, workspace, persistence_dir, project_mcp=lambda _folder: trusted
    )
    manager = opened.conversation.agent.mcp
    assert manager is not None
    try:
        assert manager.wait_settled(60)
        assert manager.servers()[0].status is ServerStatus.READY
        # The agent edits the script, then makes the server crash: ohtui reconnects.
        text = script.read_text()
        script.write_text(
            text.replace(
                "from __future__ import annotations\n",
                f"from __future__ import annotations\nopen({str(marker)!r}, 'w')\n",
            )
        )
        manager.call("calc", "crash", {})
        error = wait_failed(manager)
        assert "changed since you trusted it" in error and "server.py" in error, error
        manager.set_enabled("calc", True)  # the user turns it on again in /mcp
        assert manager.wait_settled(60)
        assert "changed since you trusted it" in wait_failed(manager)
        assert not marker.exists()
    finally:
        opened.conversation.close()
