"""An unexpected error in the app: it ends with exit code 1 and one sentence on the terminal;
the traceback, whose local variables may hold server settings and secrets, goes to the log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CRASH_SCRIPT = """
import sys
from pathlib import Path

import ohtui.cli as cli
import ohtui.tui.app as app_module
from ohtui.tui.app import OhtuiApp


class Crashing(OhtuiApp):
    CSS_PATH = str(Path(app_module.__file__).parent / "ohtui.tcss")

    def on_mount(self) -> None:
        super().on_mount()
        self.set_timer(0.2, self.explode)

    def explode(self) -> None:
        spec = {"command": "npx", "env": {"GITHUB_TOKEN": "ghp-s3cret-token-value"}}
        raise RuntimeError(f"could not show {len(spec)} fields")

    def run(self, **_: object) -> None:
        super().run(headless=True, size=(80, 24))


app_module.OhtuiApp = Crashing
sys.exit(cli.main(["-w", sys.argv[1], "--model", "openai/test", "--base-url", "http://127.0.0.1:9/v1"]))
"""


def test_an_unexpected_error_prints_no_traceback_and_exits_1(tmp_path: Path) -> None:
    script = tmp_path / "crash.py"
    script.write_text(CRASH_SCRIPT)
    workspace = tmp_path / "project"
    workspace.mkdir()
    env = {
        **os.environ,
        "OHTUI_CONFIG_DIR": str(tmp_path / "config"),
        "OHTUI_DATA_DIR": str(tmp_path / "data"),
        "OHTUI_LOG_DIR": str(tmp_path / "logs"),
    }
    done = subprocess.run(
        [sys.executable, str(script), str(workspace)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    printed = done.stdout + done.stderr
    assert done.returncode == 1, printed
    assert "ghp-s3cret-token-value" not in printed
    assert "Traceback" not in printed and "explode" not in printed
    log = tmp_path / "logs" / "ohtui.log"
    assert f"ohtui stopped on an unexpected error (RuntimeError); the details are in {log}." in (
        done.stderr
    )
    logged = log.read_text()
    assert "Traceback" in logged and "in explode" in logged
    assert "ghp-s3cret-token-value" not in logged  # the traceback, without its locals
