"""Whatever ends ohtui ends what the agent started: a command running when ohtui is killed
(SIGKILL, or HUP/TERM/INT with a terminal closed or a stop asked), with the sandbox on or
off, never finishes, and none of its processes, detached ones included, is left running.

ohtui runs headless in a subprocess (`ohtui -p`) against the scripted LLM server; the
command marks what it would do next, so a survivor would be seen.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from llm_server import ScriptedLLMServer


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def tagged(tag: str) -> list[psutil.Process]:
    """The running processes whose environment carries LIFETIME_TAG=`tag`."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.status() != psutil.STATUS_ZOMBIE and (
                process.environ().get("LIFETIME_TAG") == tag
            ):
                found.append(process)
        except (psutil.Error, OSError):
            continue
    return found


FOREGROUND = 3
"""Seconds the command sleeps before it would touch its marker."""
CELLS = [
    # SIGKILL in both modes (bubblewrap's --die-with-parent; the supervisor's parent-death
    # signal); the signals ohtui handles share one way out: each once, the modes alternating.
    (signal.SIGKILL, "workspace-write"),
    (signal.SIGKILL, "off"),
    (signal.SIGHUP, "workspace-write"),
    (signal.SIGTERM, "off"),
    (signal.SIGINT, "workspace-write"),
]


@pytest.mark.parametrize(
    ("sig", "sandbox"), CELLS, ids=[f"{signal.Signals(s).name}-{m}" for s, m in CELLS]
)
def test_what_the_agent_started_ends_with_ohtui(
    sig: signal.Signals,
    sandbox: str,
    project: Path,
    home: Path,
    llm_server: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tag = uuid.uuid4().hex[:8]
    marker = project / "finished"
    line = (
        f"export LIFETIME_TAG={tag}; (setsid sleep 300 &); nohup sleep 301 >/dev/null 2>&1 & "
        f"sleep {FOREGROUND}; touch {marker}"
    )
    llm_server.reply_tool_call("terminal", {"command": line, "security_risk": "LOW"})
    llm_server.reply_text("Done.")
    env = {
        **os.environ,
        "OHTUI_CONFIG": str(home / "config.toml"),
        "OHTUI_DATA_DIR": str(home / "data"),
        "OHTUI_LOG_DIR": str(home / "logs"),
        "OHTUI_MODEL": "openai/test-model",
        "OHTUI_BASE_URL": llm_server.base_url,
        "OHTUI_API_KEY": "sk-test",
        "OHTUI_NUM_RETRIES": "0",
    }
    ohtui = subprocess.Popen(
        [sys.executable, "-m", "ohtui", "-p", "go", "--confirm", "never", "--sandbox", sandbox],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: len([p for p in tagged(tag) if p.name() == "sleep"]) >= 3, "the sleeps")
        seen = time.monotonic()
        ohtui.send_signal(sig)
        ohtui.wait(timeout=30)
        # Past the foreground sleep: a survivor would have touched the marker by then.
        time.sleep(max(0.0, seen + FOREGROUND + 1 - time.monotonic()))
        survivors = tagged(tag)
        assert survivors == [], [p.cmdline() for p in survivors]
        assert not marker.exists()
    finally:
        if ohtui.poll() is None:
            ohtui.kill()
        for process in tagged(tag):
            process.kill()
