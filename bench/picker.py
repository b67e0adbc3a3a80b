"""Conversation picker benchmarks; run by hand: `.venv/bin/python bench/picker.py [count ...]`.

For each count (default 1,000 and 10,000) saved conversations of six messages each, spread
over five workspaces, prints the median of RUNS runs of the picker in a headless app. As in
ohtui, where the picker is opened from a conversation: the heap is settled as when one opens
(`settle_heap`: else a full garbage collection of the engine's objects, ~100 ms, lands in a
phase by chance), and the picker got ready (`preload_picker`) once the app has been idle
WARM_UP_AFTER seconds; it is opened after that:
- pushed -> first rows listed, and painted; the longest stall of the UI's event loop while
  opening (what a key press would wait for), measured with a 1 ms timer;
- w (all workspaces) -> first rows listed; the longest stall meanwhile;
- the first search after the conversations were saved (the full-text index is filled then),
  a search for a common word (every conversation matches) and for a rare one (one does,
  `mod<count/2>`):
  from the query to its rows listed (the typing pause before a search starts is not counted),
  with the longest stall meanwhile;
- the highlighted conversation's preview: from the highlight to its events shown;
- beside each phase's longest stall, the CPU time the UI thread spent in it: on a shared
  machine the stalls grow with the load (the UI thread waits for a core), this does not.

The conversations are saved once through the engine into a cache under /dev/shm (or the
temp directory) and copied afresh for each run, so every run starts unindexed. The code
measured is this checkout's (`bench/picker.py` inserts its own root on sys.path): run this
file from another checkout's copy to measure that one under the same load.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from textual.app import App

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ohtui.tui.app import WARM_UP_AFTER  # noqa: E402
from ohtui.tui.app.preload import preload_picker  # noqa: E402
from ohtui.tui.screens.picker import PickerScreen  # noqa: E402
from ohtui.tui.session.heap import settle_heap  # noqa: E402

RUNS = 3
WORKSPACES = 5
COMMON, FIRST = "fix", "failing test"
CACHE = Path("/dev/shm" if Path("/dev/shm").is_dir() else tempfile.gettempdir())


def create(base: Path, count: int) -> None:
    """Save `count` conversations through the engine (no LLM call)."""
    from ohtui.sdk import LLM, Agent, Conversation, Message, MessageEvent, TextContent

    llm = LLM(model="openai/none")
    start = time.perf_counter()
    for i in range(count):
        conv = Conversation(
            agent=Agent(llm=llm, tools=[]),
            workspace=base / f"project-{i % WORKSPACES}",
            persistence_dir=base / "conversations",
            visualizer=None,
        )
        for turn in range(3):
            conv.send_message(f"conversation {i}, turn {turn}: fix the failing test in mod{i}")
            reply = f"I looked at mod{i}.py and changed line {turn + 10}; the tests pass now."
            conv.state.append_event(
                MessageEvent(
                    source="agent",
                    llm_message=Message(role="assistant", content=[TextContent(text=reply)]),
                )
            )
        conv.state.title = f"Fix mod{i}" if i % 3 else None
        conv.close()
    print(f"saved {count:,} conversations in {time.perf_counter() - start:.1f} s")


def saved(count: int) -> Path:
    """The cached base directory holding `count` saved conversations (made once)."""
    base = CACHE / f"ohtui-bench-picker-{count}"
    if not (base / "complete").exists():
        shutil.rmtree(base, ignore_errors=True)
        for i in range(WORKSPACES):
            (base / f"project-{i}").mkdir(parents=True)
        create(base, count)
        (base / "complete").touch()
    return base


class _Host(App[None]):
    """An empty app to push the picker onto."""


class Lag:
    """The longest gap between ticks of a 1 ms timer on the event loop, per phase."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._running = True
        self._task = asyncio.create_task(self._tick())

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        last = loop.time()
        while self._running:
            await asyncio.sleep(0.001)
            now = loop.time()
            self.longest = max(self.longest, now - last)
            last = now

    def take(self) -> float:
        """The longest gap since the last take, in ms."""
        longest, self.longest = self.longest, 0.0
        return longest * 1000

    async def stop(self) -> None:
        self._running = False
        await self._task


async def until(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the picker did not get there")
        await asyncio.sleep(0.0005)


async def run_once(base: Path, count: int) -> dict[str, float]:
    """One run of every figure over a fresh copy of the saved conversations."""
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        conversations = Path(tmp) / "conversations"
        shutil.copytree(base / "conversations", conversations)
        from ohtui.sdk.conversation.store import ConversationStore

        ConversationStore(conversations).close()  # the schema as this checkout keeps it
        workspace = base / "project-0"
        app = _Host()
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            settle_heap(reclaim=True)  # as when ohtui's conversation opens (and not the last run's)
            await asyncio.sleep(WARM_UP_AFTER)  # what ohtui does once idle that long
            await preload_picker(app)
            lag = Lag()
            screen = PickerScreen(conversations, workspace)

            def rows_in() -> bool:
                return (
                    screen.is_mounted and not screen.pending and screen.option_list.option_count > 0
                )

            def previewed() -> bool:
                return bool(str(screen.query_one("#preview-events").render()).strip())

            start, cpu = time.perf_counter(), time.thread_time()
            await app.push_screen(screen)
            await until(rows_in)
            figures["open: first rows"] = time.perf_counter() - start
            painted = asyncio.Event()
            screen.call_after_refresh(painted.set)
            await painted.wait()
            figures["open: painted"] = time.perf_counter() - start
            await until(previewed)
            figures["open: preview shown"] = time.perf_counter() - start
            await asyncio.sleep(0.2)
            figures["open: longest stall"] = lag.take() / 1000
            figures["open: UI-thread CPU"] = time.thread_time() - cpu

            start, cpu = time.perf_counter(), time.thread_time()
            screen.action_toggle_scope()  # what the key does, without Pilot's own waiting
            await until(rows_in)
            figures["w: first rows"] = time.perf_counter() - start
            await asyncio.sleep(0.2)
            figures["w: longest stall"] = lag.take() / 1000
            figures["w: UI-thread CPU"] = time.thread_time() - cpu

            for name, query in (
                ("first search", FIRST),
                ("common", COMMON),
                ("rare", f"mod{count // 2}"),
            ):
                await asyncio.sleep(0.05)
                lag.take()
                start, cpu = time.perf_counter(), time.thread_time()
                screen.search_input.value = query
                screen._reload()  # at once: the typing pause is not the search's time
                await until(rows_in)
                figures[f"search {name}: rows"] = time.perf_counter() - start
                await asyncio.sleep(0.2)
                figures[f"search {name}: longest stall"] = lag.take() / 1000
                figures[f"search {name}: UI-thread CPU"] = time.thread_time() - cpu
            await lag.stop()
    return {name: value * 1000 for name, value in figures.items()}


def main() -> None:
    counts = [int(arg) for arg in sys.argv[1:]] or [1000, 10000]
    print(f"code: {ROOT}")
    for count in counts:
        base = saved(count)
        asyncio.run(run_once(base, count))  # warm: the engine's import, the page cache
        runs = [asyncio.run(run_once(base, count)) for _ in range(RUNS)]
        load = os.getloadavg()[0]
        print(f"\n{count:,} conversations, median of {RUNS} runs (load {load:.2f}):")
        for name in runs[0]:
            value = statistics.median(run[name] for run in runs)
            spread = ", ".join(f"{run[name]:.0f}" for run in runs)
            print(f"  {name:<32} {value:8.1f} ms   ({spread})")


if __name__ == "__main__":
    main()
