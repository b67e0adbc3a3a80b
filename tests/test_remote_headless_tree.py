"""`ohtui -p --server` on the conversation tree: `--fork ID` and `--resume ID --at EVENT_ID`
against `ohtui serve` (its fork and navigate routes), with the scripted LLM server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_remote_headless
from llm_server import ScriptedLLMServer

from ohtui.cli import main

home = test_remote_headless.home  # the fixture


@pytest.fixture
def url(
    home: Path, llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """`ohtui serve` on loopback, its agent calling the scripted model."""
    from server.server_process import TEST_KEY, ServerProcess

    monkeypatch.setenv("OHTUI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OHTUI_SERVER_API_KEY", TEST_KEY)
    served = ServerProcess(home / "serve").start()
    try:
        yield served.url
    finally:
        served.stop()


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_fork_and_resume_at_on_a_server(
    url: str, home: Path, llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.reply_text("The word is kiwi.")
    code, out, err = _run(capsys, "-p", "remember kiwi", "--server", url, "--json")
    assert code == 0, err
    lines = _lines(out)
    [run] = [e for e in lines if e["kind"] == "HeadlessRun"]
    source = run["conversation_id"]
    kiwi = next(e["id"] for e in lines if e["kind"] == "MessageEvent" and e["source"] == "agent")
    llm_server.reply_text("Now it is mango.")
    code, _, err = _run(capsys, "-p", "change it to mango", "--resume", source, "--server", url)
    assert code == 0, err

    llm_server.reply_text("A fork says mango.")
    code, out, err = _run(capsys, "-p", "which?", "--fork", source, "--server", url, "--json")
    assert code == 0, err
    [run] = [e for e in _lines(out) if e["kind"] == "HeadlessRun"]
    assert run["forked_from"] == source and run["conversation_id"] != source
    said = json.dumps(llm_server.requests[-1]["messages"])
    assert "remember kiwi" in said and "Now it is mango." in said

    llm_server.reply_text("Back at kiwi.")
    code, out, err = _run(
        capsys, "-p", "which now?", "--resume", source, "--at", kiwi, "--server", url
    )
    assert code == 0, err
    assert out == "Back at kiwi.\n"
    said = json.dumps(llm_server.requests[-1]["messages"])
    assert "The word is kiwi." in said and "mango" not in said

    asked = len(llm_server.requests)
    for flag in ("--resume", "--fork"):
        code, out, err = _run(capsys, "-p", "x", flag, source, "--at", "nope", "--server", url)
        assert code == 2, err
        assert "has no event 'nope'" in err and "Traceback" not in err and out == ""
    code, out, err = _run(capsys, "-p", "x", "--fork", "abc123", "--server", url)
    assert code == 2 and "No conversation abc123 on the agent server" in err
    assert len(llm_server.requests) == asked

    # What the picker reads of it there: two branches, HEAD on the newer.
    from server.server_process import TEST_KEY

    from ohtui.sdk import RemoteWorkspace
    from ohtui.sdk.conversation.impl.remote_catalog import RemoteCatalog

    workspace = RemoteWorkspace(host=url, api_key=TEST_KEY, working_dir=str(home / "project"))
    tree = RemoteCatalog(workspace).tree(source, None)
    assert [tip.last_user_message for tip in tree.tips] == ["which now?", "change it to mango"]
    assert tree.active is not None and tree.active.last_user_message == "which now?"
    assert tree.branch_points == 1
