"""On a real `ohtui serve`, the first cell says which instruction files the server's agent
got, as the server reports them (`ohtui_skills`). The server builds its agent without the
skill files (it drops the client's `load_project_skills`), so it says none: the user learns
that AGENTS.md is not read there."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from chat_helpers import SIZE, cell_text, cells, chat_ready
from llm_server import ScriptedLLMServer
from server.server_process import TEST_KEY, ServerProcess

from ohtui.tui.app import OhtuiApp
from ohtui.tui.options import AppOptions
from ohtui.tui.widgets.instructions_cell import InstructionsCell


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServerProcess]:
    data = tmp_path / "serve-data"
    data.mkdir()
    process = ServerProcess(data, env={"HOME": str(tmp_path / "server-home")}).start()
    try:
        yield process
    finally:
        process.stop()


@pytest.mark.anyio
async def test_a_remote_conversation_says_what_the_servers_agent_got(
    app_options: AppOptions, llm_server: ScriptedLLMServer, serve: ServerProcess, wait: Any
) -> None:
    (app_options.workspace / "AGENTS.md").write_text("Use make.\n", encoding="utf-8")
    options = replace(
        app_options,
        server=serve.url,
        environ={"OHTUI_SERVER_API_KEY": TEST_KEY},
        conversation_id=None,
    )
    app = OhtuiApp(options)
    async with app.run_test(size=SIZE) as pilot:
        await wait(pilot, lambda: chat_ready(app), what="the conversation to open")
        await wait(pilot, lambda: bool(cells(app, InstructionsCell)), what="the instructions")
        (cell,) = cells(app, InstructionsCell)
        assert cell_text(cell) == "Instructions: none"
        assert app.chat is not None and app.chat.session.conversation is not None
        assert app.chat.session.conversation.state.reported_skills == []
