"""Another process that holds a saved conversation open, for tests of the conversation lease.

`held_elsewhere(...)` starts a real Python process that opens the conversation with
`LocalConversation` (no LLM call is made) and keeps it open until the test releases it,
kills it with SIGKILL, or leaves the `with` block.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HOLDER_SCRIPT = """
import sys, uuid
from ohtui.sdk import LLM, Agent, LocalConversation, Tool

persistence_dir, workspace, conversation_id, tools = sys.argv[1:5]
conversation = LocalConversation(
    agent=Agent(
        llm=LLM(model="openai/test-model"),
        tools=[Tool(name=name) for name in tools.split(",") if name],
    ),
    workspace=workspace,
    persistence_dir=persistence_dir,
    conversation_id=uuid.UUID(conversation_id),
    visualizer=None,
)
print("holding", flush=True)
sys.stdin.readline()
conversation.close()
print("released", flush=True)
"""


@dataclass
class Holder:
    """The process holding the conversation."""

    process: subprocess.Popen[str]
    started: float
    """time.time() just before the process was started."""

    @property
    def pid(self) -> int:
        """The holder's process id."""
        return self.process.pid

    def release(self) -> None:
        """Close the conversation normally and wait for the process to end."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("close\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == "released"
        self.process.wait(timeout=30)

    def kill9(self) -> None:
        """SIGKILL the holder: it has no chance to release anything."""
        os.kill(self.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        assert self.process.returncode == -signal.SIGKILL


@contextmanager
def held_elsewhere(
    persistence_dir: Path, workspace: Path, conversation_id: str, tools: tuple[str, ...] = ()
) -> Iterator[Holder]:
    """A process holding the conversation open for the duration of the block."""
    started = time.time()
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            HOLDER_SCRIPT,
            str(persistence_dir),
            str(workspace),
            conversation_id,
            ",".join(tools),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if line != "holding":
            process.kill()
            _, err = process.communicate(timeout=30)
            raise AssertionError(f"the holder did not start: {line!r} {err}")
        yield Holder(process, started)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)
