"""Conversation picker benchmarks; run by hand: `.venv/bin/python bench/picker.py [count]`.

Saves `count` (default 1,000) conversations of a few events each, spread over five
workspaces, then prints the median of several runs of:
- `list_conversations` of all of them, and of one workspace;
- pushing PickerScreen in a headless app until the rows are listed, and painted; with the
  longest stall of the UI's event loop meanwhile (what a key press would wait for);
- a full-text search (the first one also indexes every message saved since the last);
- reading and formatting the preview of one conversation.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from textual.app import App

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ohtui.tui.picker_rows import preview_content  # noqa: E402
from ohtui.tui.screens.picker import SEARCH_LIMIT, PickerScreen  # noqa: E402

RUNS = 7
WORKSPACES = 5


def create(base: Path, count: int) -> list[str]:
    """Save `count` conversations through the engine (no LLM call); returns their ids."""
    from ohtui.sdk import LLM, Agent, Conversation, Message, MessageEvent, TextContent

    llm = LLM(model="openai/none")
    ids = []
    start = time.perf_counter()
    for i in range(count):
        workspace = base / f"project-{i % WORKSPACES}"
        conv = Conversation(
            agent=Agent(llm=llm, tools=[]),
            workspace=workspace,
            persistence_dir=base / "conversations",
            visualizer=None,
        )
        for turn in range(3):
            conv.send_message(f"conversation {i}, turn {turn}: fix the failing test in mod{i}")
            reply = f"I looked at mod{i}.py and changed line {turn + 10}; the tests pass now."
            conv.state.events.append(
                MessageEvent(
                    source="agent",
                    llm_message=Message(role="assistant", content=[TextContent(text=reply)]),
                )
            )
        conv.state.title = f"Fix mod{i}" if i % 3 else None
        ids.append(conv.id.hex)
        conv.close()
    print(f"created {count:,} conversations in {time.perf_counter() - start:.1f} s")
    return ids


def median_ms(fn: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


class _Host(App[None]):
    """An empty app to push the picker onto."""


async def open_picker(conversations: Path, workspace: Path, rows: int, total: int) -> list[float]:
    """Push the picker, wait for this workspace's `rows`, press w, wait for all `total`.

    Returns ms to rows listed, ms to them painted, ms from w to all listed and the longest
    stall of the UI's event loop while opening and after w (what a key press would wait for).
    """
    app = _Host()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        loop = asyncio.get_running_loop()
        stalls: list[float] = []
        running = True

        async def ticker() -> None:
            last = loop.time()
            while running:
                await asyncio.sleep(0.001)
                now = loop.time()
                stalls.append(now - last)
                last = now

        async def rows_listed(count: int) -> None:
            while screen.option_list.option_count < count:
                await asyncio.sleep(0.0005)

        tick = asyncio.create_task(ticker())
        painted = asyncio.Event()
        start = time.perf_counter()
        screen = PickerScreen(conversations, workspace)
        await app.push_screen(screen)
        await rows_listed(rows)
        listed = time.perf_counter() - start
        screen.call_after_refresh(painted.set)
        await painted.wait()
        shown = time.perf_counter() - start
        opening_stall, stalls[:] = max(stalls), []
        start = time.perf_counter()
        screen.action_toggle_scope()  # what w does, without Pilot's own waiting
        await rows_listed(total)
        toggled = time.perf_counter() - start
        running = False
        await tick
    ms = [listed, shown, toggled, opening_stall, max(stalls)]
    return [value * 1000 for value in ms]


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    from ohtui.sdk.conversation import list_conversations, recent_events, search_conversations

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        ids = create(base, count)
        conversations = base / "conversations"
        workspace = base / "project-0"
        print(f"\n{count:,} conversations, median of {RUNS} runs:")

        ms = median_ms(lambda: list_conversations(conversations))
        print(f"(a) list_conversations, all:               {ms:7.1f} ms")
        ws = str(workspace.resolve())
        ms = median_ms(lambda: list_conversations(conversations, workspace=ws))
        print(f"(a) list_conversations, one workspace:     {ms:7.1f} ms")

        in_workspace = len(list_conversations(conversations, workspace=ws))
        # The first run imports the engine, as the app does in the background after start-up.
        asyncio.run(open_picker(conversations, workspace, in_workspace, count))
        results = [
            asyncio.run(open_picker(conversations, workspace, in_workspace, count))
            for _ in range(RUNS)
        ]
        listed, shown, toggled, stall, toggle_stall = (
            statistics.median(r[i] for r in results) for i in range(5)
        )
        print(f"(b) pushed -> {in_workspace:,} rows of this workspace:  {listed:7.1f} ms")
        print(f"(b) pushed -> those rows painted:          {shown:7.1f} ms")
        print(f"(b) w -> all {count:,} rows listed:           {toggled:7.1f} ms")
        print(f"(b) longest UI stall while opening:        {stall:7.1f} ms")
        print(f"(b) longest UI stall after w:              {toggle_stall:7.1f} ms")

        start = time.perf_counter()
        search_conversations(conversations, "failing test")
        first = (time.perf_counter() - start) * 1000
        print(f"(c) first search (indexes {count * 6:,} messages): {first:7.1f} ms")
        ms = median_ms(lambda: search_conversations(conversations, "mod42"))
        print(f"(c) search 'mod42' over {count:,}:              {ms:7.1f} ms")
        ms = median_ms(lambda: search_conversations(conversations, "fix", limit=SEARCH_LIMIT))
        print(f"(c) search 'fix' (all match, top {SEARCH_LIMIT}):     {ms:7.1f} ms")

        ms = median_ms(lambda: preview_content(recent_events(conversations, ids[count // 2], 24)))
        print(f"(d) preview: read + format last 24 events: {ms:7.1f} ms")


if __name__ == "__main__":
    main()
