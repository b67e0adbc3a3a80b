"""Rewinding a long conversation in the TUI; run by hand: `.venv/bin/python bench/rewind.py`
(with the folder an earlier run printed, it reuses the conversation built there).

Builds a saved conversation of 10,000 events (2,500 turns: a message, a command, its output,
an answer) in a workspace of 10,000 files, with a checkpoint of the workspace every 100 turns
(10 files changed between them), then drives the real app headless with Pilot and prints, in
seconds:
- open: from `/rewind` to the rewind screen listing the messages (with their previews);
- plan: from choosing a message (turn 1,000) to the choice shown with the files that would
  change (the workspace compared with the checkpoint);
- rewind: from pressing `b` (conversation and code) to a usable screen: the new branch's
  transcript shown and the message back in the composer (target ≤ 0.5 s).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from checkpoint import build  # noqa: E402  (the 10,000-file workspace of bench/checkpoint.py)

TURNS = 2500
CHECKPOINT_EVERY = 100
TARGET_TURN = 1000
ROUNDS = 3


def save_conversation(persistence_dir: Path, workspace: Path) -> tuple[str, str]:
    """A saved 10,000-event conversation with checkpoints; its id and the text of the turn
    rewound to."""
    from ohtui.sdk import (
        LLM,
        ActionEvent,
        Agent,
        LocalConversation,
        Message,
        MessageEvent,
        MessageToolCall,
        ObservationEvent,
        TextContent,
        Tool,
    )
    from ohtui.sdk.event.checkpoint import CheckpointEvent
    from ohtui.sdk.tools.terminal.schema import TerminalAction, TerminalObservation
    from ohtui.sdk.workspace.checkpoints import CheckpointStore
    from ohtui.settings.schema import KNOWN_TOOLS

    llm = LLM(model="openai/test-model", base_url="http://127.0.0.1:9/v1", api_key="sk-test")
    agent = Agent(llm=llm, tools=[Tool(name=name) for name in KNOWN_TOOLS])
    conversation = LocalConversation(
        agent=agent, workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )
    own = Path(conversation.state.persistence_dir or "")
    store = CheckpointStore(own / "checkpoints", workspace)
    append = conversation.state.append_event  # on the branch: HEAD moves with each event
    for i in range(TURNS):
        text = f"turn {i}: change the files of package {i % 100}"
        append(
            MessageEvent(
                source="user", llm_message=Message(role="user", content=[TextContent(text=text)])
            )
        )
        command = f"sed -i s/value/v{i}/ pkg{i % 100}/file0.py"
        call = MessageToolCall(
            id=f"call_{i}", name="terminal", arguments=json.dumps({"command": command})
        )
        action = ActionEvent(
            action=TerminalAction(command=command),
            tool_name="terminal",
            tool_call_id=call.id,
            tool_call=call,
            llm_response_id=f"act-{i}",
        )
        if i % CHECKPOINT_EVERY == 0:
            for number in range(10):  # what the turns since the last checkpoint changed
                path = workspace / f"pkg{(i // CHECKPOINT_EVERY + number) % 100}" / "file0.py"
                path.write_text(f"changed at turn {i}\n")
            taken = store.take(command)
            append(
                CheckpointEvent(
                    checkpoint_id=taken.id, action_id=action.id, label=command, files=taken.files
                )
            )
            append(action)
        else:
            append(action)
        append(
            ObservationEvent(
                observation=TerminalObservation.from_text(
                    "[exit code 0]", command=command, exit_code=0
                ),
                action_id=action.id,
                tool_name="terminal",
                tool_call_id=call.id,
            )
        )
        append(
            MessageEvent(
                source="agent",
                llm_message=Message(
                    role="assistant", content=[TextContent(text=f"Done with turn {i}.")]
                ),
                llm_response_id=f"msg-{i}",
            )
        )
    for number in range(10):  # the workspace moved on since the last checkpoint
        (workspace / f"pkg{50 + number}" / "file1.py").write_text("changed at the end\n")
    total = len(conversation.state.events)
    conversation_id = conversation.id.hex
    conversation.close()
    print(f"saved {total} events, {TURNS // CHECKPOINT_EVERY} checkpoints")
    return conversation_id, f"turn {TARGET_TURN}: change the files of package {TARGET_TURN % 100}"


async def measure(options: Any, target_text: str) -> dict[str, float]:
    """One round in the app: open the list, choose the turn, rewind with the code."""
    from textual.widgets import OptionList

    from ohtui.tui.app import OhtuiApp
    from ohtui.tui.screens.rewind import RewindScreen
    from ohtui.tui.widgets.cells import UserCell
    from ohtui.tui.widgets.composer import Composer

    app = OhtuiApp(options)
    found: dict[str, float] = {}

    async def until(pilot: Any, condition: Any, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise TimeoutError("the app did not get there")
            await pilot.pause(0.005)

    async with app.run_test(size=(120, 40)) as pilot:
        await until(
            pilot,
            lambda: app.chat is not None and app.chat.status_bar.status not in ("", "opening"),
        )
        await pilot.pause(0.5)
        chat = app.chat
        assert chat is not None
        started = time.perf_counter()
        chat.run_slash("rewind")
        await until(pilot, lambda: isinstance(app.screen, RewindScreen) and app.screen.is_mounted)
        await pilot.pause()
        found["open"] = time.perf_counter() - started
        screen = app.screen
        assert isinstance(screen, RewindScreen)
        row = next(i for i, turn in enumerate(screen.turns) if turn.text == target_text)
        turns = screen.query_one("#turns", OptionList)
        while turns.option_count <= row:  # as a user would: End loads the older ones
            await pilot.press("end")
            await pilot.pause()
        turns.highlighted = row
        await pilot.pause()
        started = time.perf_counter()
        await pilot.press("enter")
        await until(pilot, lambda: screen.preview is not None)
        await pilot.pause()
        found["plan"] = time.perf_counter() - started
        assert screen.preview is not None and screen.preview.changes, "nothing to restore"
        composer = chat.query_one(Composer)
        started = time.perf_counter()
        await pilot.press("b")
        await until(pilot, lambda: composer.text == target_text)
        await pilot.pause()
        found["rewind"] = time.perf_counter() - started
        users = [c for c in chat.view.children if isinstance(c, UserCell)]
        assert users and users[-1].text != target_text, "the transcript still shows the turn"
        found["files"] = len(screen.preview.changes)
    return found


def main() -> None:
    from ohtui.tui.options import AppOptions

    if len(sys.argv) > 1:  # the folder of an earlier run: its conversation, built once
        root = Path(sys.argv[1])
        workspace, data, config = root / "workspace", root / "data", root / "config.toml"
        conversation_id = (root / "id").read_text()
        target = f"turn {TARGET_TURN}: change the files of package {TARGET_TURN % 100}"
    else:
        root = Path(tempfile.mkdtemp(prefix="ohtui-rewind-bench-"))
        workspace = build(root)
        data = root / "data"
        config = root / "config.toml"
        config.write_text('[ui]\nauto_title = false\n[context]\nstrategy = "none"\n')
        started = time.perf_counter()
        conversation_id, target = save_conversation(data / "conversations", workspace)
        (root / "id").write_text(conversation_id)
        print(f"built in {time.perf_counter() - started:.1f} s ({root}: pass it to reuse it)")
    pristine = root / "pristine"
    if not pristine.exists():  # the checkpoints know the workspace by its path: rounds reuse it
        pristine.mkdir()
        shutil.copytree(data, pristine / "data")
        shutil.copytree(workspace, pristine / "workspace", symlinks=True)
    rounds: list[dict[str, float]] = []
    for _ in range(ROUNDS):
        # The saved state again each round: a rewind moves HEAD (and the workspace) for good.
        shutil.rmtree(data)
        shutil.rmtree(workspace)
        shutil.copytree(pristine / "data", data)
        shutil.copytree(pristine / "workspace", workspace, symlinks=True)
        options = AppOptions(
            workspace=workspace,
            persistence_dir=data / "conversations",
            history_file=data / "history.jsonl",
            config_file=config,
            model="openai/test-model",
            base_url="http://127.0.0.1:9/v1",
            api_key="sk-test",
            resume_id=conversation_id,
            policy="never",
        )
        rounds.append(asyncio.run(measure(options, target)))
    print(f"rewind in the TUI, 10,000 events, 10,000 files, median of {ROUNDS} (s):")
    for name in ("open", "plan", "rewind"):
        values = [r[name] for r in rounds]
        print(f"  {name:7} {statistics.median(values):6.3f}  (min {min(values):.3f})")
    print(f"  files restored: {int(rounds[0]['files'])}; target for rewind: ≤ 0.5 s")


if __name__ == "__main__":
    main()
