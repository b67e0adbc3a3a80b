"""litellm starts loading soon after the first frame, when the conversation's model is called
through it, so the first message does not wait for its import (seconds of CPU); never before
the first frame, and never for a model called directly. Run in a fresh process each: the
test process may have litellm loaded already."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

from llm_server import ScriptedLLMServer

from ohtui.tui.app import LLM_WARM_AFTER

SCRIPT = textwrap.dedent(
    """
    import asyncio, os, sys, threading, time
    from pathlib import Path

    started = []  # (seconds after the first frame, thread) when `import litellm` began
    painted = []

    class Spy:
        def find_spec(self, name, path=None, target=None):
            if name == "litellm" and not started:
                at = time.monotonic() - painted[0] if painted else -1.0
                started.append((at, threading.current_thread().name))
            return None

    sys.meta_path.insert(0, Spy())

    import ohtui.tui.app as app_module
    from ohtui.tui.app import OhtuiApp
    from ohtui.tui.options import AppOptions

    app_module.WARM_UP_AFTER = 60.0  # the picker's preload (and the warm-up's old timer): later

    tmp = Path(sys.argv[1])
    options = AppOptions(
        workspace=tmp,
        persistence_dir=tmp / "data" / "conversations",
        history_file=tmp / "data" / "history.jsonl",
        config_file=tmp / "config.toml",
        model=sys.argv[2],
        base_url=sys.argv[3],
        api_key="sk-test",
    )

    async def main():
        app = OhtuiApp(options)
        async with app.run_test(size=(100, 30)) as pilot:
            painted.append(time.monotonic())
            print("at the first frame:", "litellm" in sys.modules, flush=True)
            seen = False  # the warm-up thread
            for _ in range(3000):
                warming = any(t.name == "ohtui-warm-up" for t in threading.enumerate())
                if started or (seen and not warming):
                    break
                seen = seen or warming
                await pilot.pause(0.01)
            print("warm-up seen:", seen, flush=True)
        print("litellm import began:", started, flush=True)
        os._exit(0)  # not waiting for the rest of litellm's import

    asyncio.run(main())
    """
)


def run(tmp_path: Path, model: str, base_url: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path), model, base_url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_litellm_starts_loading_soon_after_the_first_frame_for_a_model_through_it(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    out = run(tmp_path, "hosted_vllm/test-model", llm_server.base_url)
    assert "at the first frame: False" in out, out
    began = ast.literal_eval(out.split("litellm import began:")[1].strip())
    assert began, out  # no message was sent: the warm-up imports it
    at, thread = began[0]
    assert thread == "ohtui-warm-up"  # off the UI thread
    assert at >= LLM_WARM_AFTER * 0.9, out  # once the first frame has been idle


def test_a_model_called_directly_never_loads_litellm(
    tmp_path: Path, llm_server: ScriptedLLMServer
) -> None:
    out = run(tmp_path, "openai/test-model", llm_server.base_url)
    assert "warm-up seen: True" in out, out  # it ran: it connected to the server
    assert "litellm import began: []" in out, out
