"""What the default policy does with commands a model rates LOW (run by hand).

Prints, for a destructive set of 50 commands and 60 everyday ones, how many ask, how many
run confined after a checkpoint, and how many run because they only read: with the sandbox
on (and checkpoints) and with it off.

    python bench/what_asks.py
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "sdk" / "security"))

from what_asks import Outcome, outcome
from what_asks_corpus import DESTRUCTIVE, EVERYDAY


def main() -> None:
    with tempfile.TemporaryDirectory() as workspace:
        for name, commands in (("destructive", DESTRUCTIVE), ("everyday", EVERYDAY)):
            for undoable in (True, False):
                counts = Counter(outcome(c, workspace, undoable=undoable) for c in commands)
                where = "sandbox on, checkpoints" if undoable else "sandbox off"
                parts = ", ".join(f"{counts[o]} {o.value}" for o in Outcome)
                print(f"{name:<11} ({len(commands)}) {where:<24} {parts}")
        unasked = [c for c in EVERYDAY if outcome(c, workspace, undoable=True) is Outcome.ASKS]
        print("everyday commands that ask in the sandbox:", ", ".join(unasked) or "none")


if __name__ == "__main__":
    main()
