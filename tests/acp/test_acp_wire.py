"""The wire of `ohtui acp`, written against the published JSON-RPC shape: malformed input
gets an error response and never a crash, stdout carries protocol messages only, a missing
key is `auth_required` naming where the key goes, and the process ends with stdin."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from acp_client import environment

LINES = [
    b"this is not json\n",
    b"[1, 2]\n",
    b'"a string"\n',
    b'{"jsonrpc": "1.0", "id": 1, "method": "initialize"}\n',
    b'{"jsonrpc": "2.0", "id": 2}\n',
    b'{"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": "one"}}\n',
    b"\xff\xfe not utf-8\n",
    b'{"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": 1}}\n',
    b'{"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": {"mcpServers": []}}\n',
    b'{"jsonrpc": "2.0", "id": 6, "method": "session/prompt", '
    b'"params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}}\n',
    b'{"jsonrpc": "2.0", "id": 7, "method": "no/such/method", "params": {}}\n',
    b'{"jsonrpc": "2.0", "id": 8, "method": "session/new", "params": {"cwd": "CWD", '
    b'"mcpServers": []}}\n',
    b'{"jsonrpc": "2.0", "id": 9, "method": "authenticate", '
    b'"params": {"methodId": "ohtui-api-key"}}\n',
]


def test_malformed_input_gets_errors_and_a_missing_key_says_where_it_goes(
    home: Path, no_keyring: None
) -> None:
    env = environment(home, "unused")
    del env["OHTUI_BASE_URL"], env["OHTUI_API_KEY"]
    env["OHTUI_MODEL"] = "openai/gpt-4o"
    project = home / "project"
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "ohtui", "acp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=project,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b"".join(LINES).replace(b"CWD", str(project).encode()))
    process.stdin.flush()
    replies = []
    while len(replies) < 13:  # one per line, but the line that was not UTF-8 JSON: two
        line = process.stdout.readline()
        assert line, "ohtui acp closed stdout early"
        replies.append(json.loads(line))  # only JSON on stdout
    process.stdin.close()
    assert process.wait(timeout=30) == 0
    assert process.stdout.read() == b""
    assert process.stderr is not None
    err = process.stderr.read()
    assert time.monotonic() - started < 120
    assert all(reply["jsonrpc"] == "2.0" for reply in replies)
    by_id: dict[Any, Any] = {}
    anonymous = []
    for reply in replies:
        if reply["id"] is None:
            anonymous.append(reply["error"])
        else:
            by_id[reply["id"]] = reply
    codes = [error["code"] for error in anonymous]
    assert codes == [-32700, -32600, -32600, -32700]
    assert "not JSON" in anonymous[0]["data"]["details"]
    assert "batches" in anonymous[1]["data"]["details"]
    assert by_id[1]["error"]["code"] == -32600 and "2.0" in by_id[1]["error"]["data"]["details"]
    assert by_id[2]["error"]["code"] == -32600
    assert by_id[3]["error"]["code"] == -32602
    assert by_id[4]["result"]["protocolVersion"] == 1
    assert by_id[5]["error"]["code"] == -32602  # no cwd
    assert (
        by_id[6]["error"]["code"] == -32002 and "No session 'nope'" in by_id[6]["error"]["message"]
    )
    assert by_id[7]["error"]["code"] == -32601
    for missing in (by_id[8], by_id[9]):
        assert missing["error"]["code"] == -32000
        text = missing["error"]["message"]
        assert "No API key for openai/gpt-4o" in text
        assert "OPENAI_API_KEY" in text and 'entry "api-key:openai"' in text
    assert b"Traceback" not in err
    log = (home / "logs" / "ohtui.log").read_text(encoding="utf-8")
    assert "Traceback" not in log  # errors answered on purpose are not logged as failures
