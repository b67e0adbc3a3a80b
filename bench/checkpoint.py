"""Workspace checkpoints: the cost of each operation on a 10,000-file workspace.

    python bench/checkpoint.py [ROUNDS]

Builds a synthetic workspace (100 folders of 100 small files) in a temporary folder and prints
the median wall time, in milliseconds, of: the first checkpoint, a checkpoint of the unchanged
workspace, one after 10 files changed, a restore of those 10 files, and their diff. The first
checkpoint is measured on a fresh store each round; `unchanged` a second after the last
change, as between an agent's actions (git re-reads files written in the same second as its
index, to be safe, until then).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ohtui.sdk.workspace.checkpoints import CheckpointStore


def build(root: Path) -> Path:
    workspace = root / "workspace"
    for folder in range(100):
        sub = workspace / f"pkg{folder}" / "mod"
        sub.mkdir(parents=True)
        for number in range(100):
            where = sub if number % 2 else sub.parent
            (where / f"file{number}.py").write_text(f"value = {folder * 100 + number}\n" * 20)
    return workspace


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def change(workspace: Path, round_: int) -> None:
    for number in range(10):
        path = workspace / f"pkg{number}" / f"file{number * 2}.py"
        path.write_text(f"changed {round_}\n")


def main(rounds: int) -> None:
    root = Path(tempfile.mkdtemp())
    workspace = build(root)
    results: dict[str, list[float]] = {
        name: [] for name in ("first", "unchanged", "10 changed", "restore", "diff")
    }
    for round_ in range(rounds):
        store = CheckpointStore(root / f"store{round_}", workspace)
        results["first"].append(timed(lambda store=store: store.take("first")))  # type: ignore[misc]
    store = CheckpointStore(root / "store0", workspace)
    time.sleep(1.1)  # past the second the files were written in, as a real workspace is
    store.take("warm")
    for round_ in range(rounds):
        time.sleep(1.1)  # files written in the index's second are re-read until it is older
        store.take("after the last restore")
        results["unchanged"].append(timed(lambda: store.take("unchanged")))
        change(workspace, round_)
        results["10 changed"].append(timed(lambda: store.take("10 changed")))
        before = store.list()[1].id
        results["diff"].append(timed(lambda before=before: store.diff(before)))  # type: ignore[misc]
        results["restore"].append(timed(lambda before=before: store.restore(before)))  # type: ignore[misc]
    print(f"checkpoints of a 10,000-file workspace, median of {rounds} rounds (ms):")
    for name, times in results.items():
        print(f"  {name:11} {statistics.median(times):7.1f}  (min {min(times):.1f})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
