"""`ohtui acp`: how soon it answers `initialize`, and how soon a streamed token reaches the
client.

    python bench/acp.py [ROUNDS]

Each round starts `ohtui acp` as an editor would (a subprocess on pipes, config and data in
a temporary folder, the scripted model of tests/llm_server.py on 127.0.0.1), connects the
agent-client-protocol package's client, and prints:
- initialize: from the process's start to the `initialize` answer, in ms;
- first chunk: from the model's first streamed token leaving the model server to the first
  `agent_message_chunk` reaching the client, in ms (the same clock: one process);
- every chunk: the median of that delay over all the reply's chunks;
- ready: from the process's start to `session/new` answered (the engine loaded), in ms.
Targets: initialize <= 300 ms, first chunk <= 500 ms after the model's first token.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# This file's folder comes first on the path, and its name would hide the `acp` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path[:0] = [str(HERE.parent / "tests"), str(HERE.parent / "tests" / "acp")]

from acp import PROTOCOL_VERSION, spawn_agent_process  # noqa: E402
from acp.schema import TextContentBlock  # noqa: E402
from acp_client import RecordingClient, environment  # noqa: E402
from llm_server import ScriptedLLMServer  # noqa: E402

WORDS = [f"word{n} " for n in range(20)]


async def one_round(home: Path, server: ScriptedLLMServer) -> tuple[float, float, float, float]:
    (home / "project").mkdir(exist_ok=True)
    (home / "config.toml").write_text("", encoding="utf-8")
    env = environment(home, server.base_url, DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent")
    server.reply_text("".join(WORDS), chunks=WORDS, chunk_delay=0.02)
    client = RecordingClient()
    started = time.monotonic()
    async with spawn_agent_process(
        client,
        sys.executable,
        "-m",
        "ohtui",
        "acp",
        env=env,
        cwd=home / "project",
        observers=[client.observe],
    ) as (connection, process):
        await connection.initialize(protocol_version=PROTOCOL_VERSION)
        initialized = time.monotonic()
        session = await connection.new_session(cwd=str(home / "project"), mcp_servers=[])
        ready = time.monotonic()
        await asyncio.sleep(3)  # the model's client warms up, as while the user types
        sent_before = len(server.sent_chunks)
        await connection.prompt(
            session_id=session.session_id, prompt=[TextContentBlock(type="text", text="hi")]
        )
        await client.settle()
        sent = [at for at, _ in server.sent_chunks[sent_before:]]
        got = [at for at, _, u in client.updates if u.session_update == "agent_message_chunk"]
        assert process.stdin is not None
        process.stdin.close()
        await process.wait()
    delays = [(g - s) * 1000 for s, g in zip(sent, got, strict=False)]
    return (
        (initialized - started) * 1000,
        delays[0],
        statistics.median(delays),
        (ready - started) * 1000,
    )


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    results = []
    with ScriptedLLMServer() as server:
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as folder:
                results.append(asyncio.run(one_round(Path(folder), server)))
    for name, column in zip(
        ("initialize", "first chunk", "every chunk", "ready"),
        zip(*results, strict=True),
        strict=True,
    ):
        values = ", ".join(f"{v:.0f}" for v in column)
        print(f"{name:>12}: median {statistics.median(column):6.0f} ms  ({values})")


if __name__ == "__main__":
    main()
