"""setup_logging: a script's choice, never made by importing the engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_script(code: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LOG_") and k != "DEBUG"}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_importing_the_engine_configures_no_logging(tmp_path: Path) -> None:
    result = run_script(
        "import logging, ohtui.sdk.logger, ohtui.sdk\n"
        "assert logging.getLogger().handlers == [], logging.getLogger().handlers\n"
        "ohtui.sdk.logger.get_logger('x').warning('unseen')\n",
        tmp_path,
        LOG_TO_FILE="true",
    )
    assert result.returncode == 0, result.stderr
    # Python's last-resort handler prints the bare message; no format of ours was installed.
    assert result.stderr.strip() == "unseen"
    assert not (tmp_path / "logs").exists()


def test_setup_logging_writes_json_lines_to_the_log_dir_and_stderr(tmp_path: Path) -> None:
    result = run_script(
        "from ohtui.sdk.logger import get_logger, setup_logging\n"
        "setup_logging(log_to_file=True, log_dir='out/logs')\n"
        "setup_logging(log_to_file=False)\n"  # a second call adds no second stream handler
        "get_logger('demo').info('hello %s', 'there')\n"
        "get_logger('demo').debug('below the level')\n",
        tmp_path,
        LOG_JSON="true",
        LOG_LEVEL="info",
    )
    assert result.returncode == 0, result.stderr
    lines = (tmp_path / "out" / "logs" / "app.log").read_text().splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["message"] == "hello there"
    assert record["levelname"] == "INFO" and record["name"] == "demo"
    assert [json.loads(line)["message"] for line in result.stderr.splitlines()] == ["hello there"]


def test_setup_logging_names_an_unusable_log_dir(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    result = run_script(
        "from ohtui.sdk.logger import setup_logging\n"
        "try:\n"
        "    setup_logging(log_to_file=True, log_dir='afile/logs')\n"
        "except ValueError as exc:\n"
        "    print(exc)\n",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "cannot create the log directory 'afile/logs'" in result.stdout
