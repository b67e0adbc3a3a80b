"""Drive the real app with Pilot inside a read-only data folder (started by
test_opening_sequence.py in bubblewrap) and print what it showed, as JSON.

Usage: read_only_app.py DATA_DIR WORKSPACE CONFIG CONVERSATION_ID
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from chat_helpers import cells, chat_ready, screen_text, status, submit

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.widgets.cells import UserCell


async def main(data: Path, workspace: Path, config: Path, conversation_id: str) -> None:
    options = AppOptions(
        workspace=workspace,
        persistence_dir=data / "conversations",
        history_file=data / "history.jsonl",
        config_file=config,
        model="openai/test-model",
        base_url="http://127.0.0.1:9/v1",
        api_key="sk-test",
        resume_id=conversation_id,
    )
    app = OhtuiApp(options)
    said: dict[str, object] = {}
    notices: list[str] = []
    notify = app.notify

    def record(message: str, **kwargs: object) -> None:
        notices.append(message)
        notify(message, **kwargs)  # type: ignore[arg-type]

    app.notify = record  # type: ignore[method-assign]
    async with app.run_test(size=(200, 40), notifications=True) as pilot:
        deadline = time.monotonic() + 30
        while not (chat_ready(app) and status(app) != "opening") and time.monotonic() < deadline:
            await pilot.pause(0.05)
        await pilot.pause(0.3)
        assert app.chat is not None
        said["status"] = status(app)
        said["history"] = [c.text for c in cells(app, UserCell)]
        said["screen"] = screen_text(app)
        await submit(pilot, "more please")
        await pilot.pause(0.5)
        said["after_send"] = screen_text(app)
        await submit(pilot, "/new")
        deadline = time.monotonic() + 30
        while status(app) != "error" and time.monotonic() < deadline:
            await pilot.pause(0.05)
        await pilot.pause(0.3)
        said["new_status"] = status(app)
        said["new_screen"] = screen_text(app)
    said["notices"] = notices
    print(json.dumps(said))


if __name__ == "__main__":
    data, workspace, config, conversation_id = sys.argv[1:5]
    asyncio.run(main(Path(data), Path(workspace), Path(config), conversation_id))
