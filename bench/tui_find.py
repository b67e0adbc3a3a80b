"""Transcript search (Ctrl+F) on a 10,000-event conversation; run by hand:
`.venv/bin/python bench/tui_find.py [EVENTS]`.

A real OhtuiApp (headless, Textual's test driver) resumes a saved conversation of EVENTS
events (a question, a command with 20 lines of output, an answer, per turn; five of the
outputs hold "needle" on a folded line), opens the find bar and searches:
- time from the term entered to the first count on screen, and to the full count;
- the longest stall of the UI thread meanwhile (a 10 ms timer's worst lateness);
- a second search on the index already read (a one-letter term: ~10^5 hits);
- going to the oldest hit (a page not loaded): time until its line is in sight.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "tui")]  # chat_helpers saves one
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def needle_output(turns: int) -> Callable[[int], str]:
    """Twenty lines of output a turn; every fifth of the history, one line is a needle."""

    def output(i: int) -> str:
        needle = i % (turns // 5 or 1) == 17
        lines = [
            f"the needle of step {i}" if needle and n == 15 else f"line {n} of step {i}"
            for n in range(20)
        ]
        return "\n".join(lines) + "\n[exit code 0]"

    return output


async def measure(options: Any, events: int) -> dict[str, float]:
    from textual.widgets import Static

    from ohtui.tui.app import OhtuiApp
    from ohtui.tui.widgets.cells import Cell

    app = OhtuiApp(options)
    results: dict[str, float] = {}
    async with app.run_test(size=(120, 40)) as pilot:

        async def until(condition: Any, timeout: float = 60.0) -> float:
            start = time.perf_counter()
            while not condition():
                if time.perf_counter() - start > timeout:
                    raise TimeoutError
                await asyncio.sleep(0.005)
            return time.perf_counter() - start

        chat = app.chat
        assert chat is not None
        await until(lambda: chat.is_mounted and chat.status_bar.status == "idle")
        await pilot.pause(0.5)

        stall = [0.0]
        last = [time.perf_counter()]

        def tick() -> None:
            now = time.perf_counter()
            stall[0] = max(stall[0], now - last[0] - 0.01)
            last[0] = now

        timer = app.set_interval(0.01, tick)

        def count() -> str:
            return str(chat.query_one("#find-count", Static).render())

        await pilot.press("ctrl+f")
        await until(lambda: chat.query("#find-input"))
        await pilot.pause(0.2)
        stall[0] = 0.0
        last[0] = time.perf_counter()
        field = chat.finder.bar
        assert field is not None
        start = time.perf_counter()
        field.input.value = "needle"
        await until(lambda: " of " in count())
        results["first count (s)"] = time.perf_counter() - start
        await until(lambda: "searching" not in count() and " of " in count())
        results["full count (s)"] = time.perf_counter() - start
        results["count"] = float(count().split(" of ")[1].split()[0].replace(",", ""))
        results["longest UI stall while reading (ms)"] = stall[0] * 1000

        stall[0] = 0.0
        last[0] = time.perf_counter()
        start = time.perf_counter()
        field.input.value = "e"
        await until(lambda: count().endswith(" of " + count().split(" of ")[-1]) and "," in count())
        results["one-letter search, index read (s)"] = time.perf_counter() - start
        results["one-letter hits"] = float(count().split(" of ")[1].replace(",", ""))
        results["longest UI stall, one letter (ms)"] = stall[0] * 1000

        field.input.value = "needle of step 17"
        await until(lambda: count().startswith("1 of 1"))
        start = time.perf_counter()

        def oldest_in_sight() -> bool:
            view = chat.view
            return any(
                isinstance(c, Cell)
                and c.has_class("-find-current")
                and c.event_index < 100
                and c.region.overlaps(view.region)
                for c in view.children
            )

        results["to the oldest hit, page read (s)"] = await until(oldest_in_sight)
        timer.stop()
        results["events"] = float(events)
    return results


def main() -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    turns = (events - 2) // 4
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        workspace = base / "ws"
        workspace.mkdir()
        (base / "config.toml").write_text(
            '[ui]\nauto_title = false\n[context]\nstrategy = "none"\n'
        )
        from chat_helpers import save_long_conversation

        from ohtui.tui.options import AppOptions

        options = AppOptions(
            workspace=workspace,
            persistence_dir=base / "conversations",
            history_file=base / "history.jsonl",
            config_file=base / "config.toml",
            model="openai/test-model",
            base_url="http://127.0.0.1:9/v1",
            api_key="sk-x",
        )
        print(f"saving {2 + 4 * turns} events…", flush=True)
        options.resume_id = save_long_conversation(
            options, turns, output=needle_output(turns), answer="answer **{i}**"
        )
        for name, value in asyncio.run(measure(options, 2 + 4 * turns)).items():
            print(f"{name:40} {value:,.3f}")


if __name__ == "__main__":
    main()
