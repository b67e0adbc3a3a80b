"""The app under `bench/tui.py`'s render bench: a real OhtuiApp on a terminal, fed events.

Run as `python bench/tui_feed.py WORKDIR EVENTS RESULT_JSON` on a pseudo-terminal (the
real driver paints every frame). The conversation is a real LocalConversation saved in
WORKDIR; a thread hands it events as its agent would (recorded, then told to the callbacks,
on the engine's thread), in batches of BATCH; recording is not timed. After each batch it
waits until the UI has taken every event in and painted the result, so each batch's time is
the UI's cost for it.
Writes {"batches": [seconds per batch], "batch": BATCH, "rss_mb": [after each batch],
"mounted": widgets in the conversation view at the end}.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

BATCH = 100


def rss_mb() -> float:
    """This process's resident memory."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


def events(n: int, workspace: str) -> list[Any]:
    """A typical exchange: a request; an action with a thought, its output; an answer. The
    thought and the answer are streamed first (a list of chunks before their event)."""
    from ohtui.sdk import (
        ActionEvent,
        Message,
        MessageEvent,
        MessageToolCall,
        ObservationEvent,
        TextContent,
    )
    from ohtui.sdk.llm import LLMStreamChunk
    from ohtui.sdk.tools.terminal import TerminalAction, TerminalObservation

    def streamed(response_id: str, text: str) -> list[LLMStreamChunk]:
        return [LLMStreamChunk(response_id, word + " ") for word in text.split()]

    call = MessageToolCall(id=f"c{n}", name="terminal", arguments="{}")
    action = ActionEvent(
        action=TerminalAction(command=f"ls -la dir{n}"),
        tool_name="terminal",
        tool_call_id=call.id,
        tool_call=call,
        llm_response_id=f"r{n}",
        thought=[TextContent(text=f"Looking at dir{n} now.")],
    )
    observation = TerminalObservation.from_text(
        "total 0\nfile_a\nfile_b\n[exit code 0]", command="ls", exit_code=0, working_dir=workspace
    )
    answer = f"Directory {n} has **two** files."
    return [
        MessageEvent(
            source="user",
            llm_message=Message(role="user", content=[TextContent(text=f"request {n}: list")]),
        ),
        streamed(f"r{n}", f"Looking at dir{n} now."),
        action,
        ObservationEvent(
            action_id=action.id,
            tool_name="terminal",
            tool_call_id=call.id,
            observation=observation,
        ),
        streamed(f"m{n}", answer),
        MessageEvent(
            source="agent",
            llm_message=Message(role="assistant", content=[TextContent(text=answer)]),
            llm_response_id=f"m{n}",
        ),
    ]


def main() -> None:
    workdir, total, result_path = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    from ohtui.opening import Callbacks
    from ohtui.sdk import LLM, Agent, LocalConversation, Tool
    from ohtui.tui.app import OhtuiApp
    from ohtui.tui.options import AppOptions

    workspace = workdir / "project"
    workspace.mkdir(exist_ok=True)
    opened: list[LocalConversation] = []

    def factory(callbacks: Callbacks) -> LocalConversation:
        conversation = LocalConversation(
            agent=Agent(
                llm=LLM(model="openai/bench", api_key="sk-bench"), tools=[Tool(name="terminal")]
            ),
            workspace=str(workspace),
            persistence_dir=str(workdir / "conversations"),
            callbacks=[callbacks.on_event] if callbacks.on_event else None,
            token_callbacks=[callbacks.on_token] if callbacks.on_token else None,
            visualizer=None,
        )
        opened.append(conversation)
        return conversation

    config = workdir / "config.toml"
    config.write_text("[ui]\nauto_title = false\n")
    options = AppOptions(
        workspace=workspace,
        history_file=workdir / "history.jsonl",
        persistence_dir=workdir / "conversations",
        config_file=config,
        model="openai/bench",
        api_key="sk-bench",
        conversation_factory=factory,
    )
    app = OhtuiApp(options)
    batches: list[float] = []
    memory: list[float] = []

    async def settled() -> None:
        """Once the chat screen has handled every message before this one, and painted."""
        done = asyncio.Event()
        screen = app.chat
        assert screen is not None
        screen.call_later(lambda: screen.call_after_refresh(done.set))
        await done.wait()

    def feed() -> None:
        while not opened or app.chat is None or app.chat.session.conversation is None:
            time.sleep(0.05)
        conversation = opened[0]
        time.sleep(1.0)  # the first frame and the opening settle
        step = 0
        fed = 0
        while fed < total:
            pending: list[Any] = []
            while len(pending) < BATCH * 6 // 4:
                pending += events(step, str(workspace))
                step += 1
            recorded = [item for item in pending if not isinstance(item, list)]
            for event in recorded:  # recorded first: the store's time is the engine's
                conversation._state.append_event(event)
            fed += len(recorded)
            start = time.perf_counter()
            for item in pending:  # then streamed and told, as the agent's steps do
                if isinstance(item, list):
                    for chunk in item:
                        conversation._on_token(chunk)
                else:
                    conversation._notify(item)
            app.call_from_thread(settled)
            batches.append(time.perf_counter() - start)
            memory.append(rss_mb())
        view = app.chat.view if app.chat is not None else None
        mounted = len(view.children) if view is not None else -1
        result_path.write_text(
            json.dumps({"batches": batches, "batch": BATCH, "rss_mb": memory, "mounted": mounted})
        )
        app.call_from_thread(app.exit)

    threading.Thread(target=feed, name="bench-feed", daemon=True).start()
    app.run()


if __name__ == "__main__":
    main()
