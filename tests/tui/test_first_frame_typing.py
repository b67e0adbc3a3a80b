"""Keys typed as the first frame appears show at once: nothing imports the session, the
opening of a conversation or the engine on the UI thread while the conversation opens (they
load on threads: a second of CPU on a loaded machine, during which no key would show), and
that thread gives way to keys between the modules it imports."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from llm_server import ScriptedLLMServer

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys, threading
    from pathlib import Path

    on_ui_thread = []

    class Spy:
        def find_spec(self, name, path=None, target=None):
            if name.startswith(("ohtui.sdk", "ohtui.opening", "ohtui.tui.session")):
                if threading.current_thread() is threading.main_thread():
                    on_ui_thread.append(name)
            return None

    sys.meta_path.insert(0, Spy())

    import ohtui.tui.app as app_module
    from ohtui.tui.app import OhtuiApp
    from ohtui.tui.options import AppOptions

    app_module.WARM_UP_AFTER = 0.0  # the warm-up's timer fires while the session loads
    app_module.LLM_WARM_AFTER = 0.0
    tmp = Path(sys.argv[1])
    options = AppOptions(
        workspace=tmp,
        persistence_dir=tmp / "data" / "conversations",
        history_file=tmp / "data" / "history.jsonl",
        config_file=tmp / "config.toml",
        model="openai/test-model",
        base_url=sys.argv[2],
        api_key="sk-test",
    )

    gave_way = []  # threads that gave way to keys between the modules they imported

    async def main():
        app = OhtuiApp(options)
        give_way = app.give_way

        def counting():
            gave_way.append(threading.current_thread().name)
            give_way()

        app.give_way = counting
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("h", "i")
            for _ in range(2000):
                session = app.current_session
                if session is not None and session.conversation is not None:
                    break
                await pilot.pause(0.01)
            assert app.current_session is not None, "the conversation never opened"
            print("typed:", app.chat.query_one("#composer").text)
        print("on the UI thread:", sorted(set(on_ui_thread)))
        print("gave way:", sorted(set(gave_way)))

    asyncio.run(main())
    """
)


def test_the_session_and_engine_load_off_the_ui_thread(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), llm_server.base_url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "typed: hi" in out.stdout, out.stdout
    assert "on the UI thread: []" in out.stdout, out.stdout
    # The session's import gave way to the keys between its modules.
    assert "gave way: ['ohtui-session-import']" in out.stdout, out.stdout
