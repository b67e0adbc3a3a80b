"""A command's own bookkeeping follows its process tree, not the machine's process count."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ohtui.sdk.tools.terminal import processes
from ohtui.sdk.tools.terminal.session import BashSession

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


@pytest.fixture
def session(tmp_path: Path) -> Iterator[BashSession]:
    shell = BashSession(shell="bash", working_dir=str(tmp_path), sandbox=None)
    yield shell
    shell.close()


def test_a_trivial_command_reads_no_other_process(
    session: BashSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    session.run("true", 10, lambda _: None)  # the shell is up
    scans: list[str] = []
    real_table = processes.process_table

    def counted() -> dict[int, int]:
        scans.append("scan")
        return real_table()

    monkeypatch.setattr(processes, "process_table", counted)
    monkeypatch.setattr("ohtui.sdk.tools.terminal.session.process_table", counted)
    out: list[bytes] = []
    for _ in range(5):
        session.run("echo hi", 10, out.append)
    assert scans == []
    assert b"".join(out).count(b"hi") == 5


def test_the_tree_walk_finds_what_the_command_started_and_nothing_else(tmp_path: Path) -> None:
    strangers = [subprocess.Popen(["sleep", "30"]) for _ in range(20)]
    child = subprocess.Popen(["bash", "-c", "sleep 30 & sleep 30 & wait"])
    try:
        for _ in range(100):
            tree = processes.subtree(child.pid)
            if len(tree) == 3:
                break
            subprocess.run(["sleep", "0.02"], check=False)
        assert child.pid in tree and len(tree) == 3
        assert not tree & {stranger.pid for stranger in strangers}
        assert tree == processes.descendants([child.pid])  # the same as the full scan says
    finally:
        processes.signal_pids(processes.subtree(child.pid), signal.SIGKILL)
        for process in [*strangers, child]:
            process.kill()
            process.wait()
