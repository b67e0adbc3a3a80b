"""`ohtui serve` with a probe, for bench/server.py: records when the engine's callback for each
frame ran (time.perf_counter, system-wide CLOCK_MONOTONIC on Linux, so comparable with the
client process's), by frame id and by a streamed delta's text, and writes them to the JSON
file named by OHTUI_BENCH_PROBE_OUT at exit.

    python bench/server_probe.py serve --port N
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from ohtui.server import served as served_module
from ohtui.server.hub import Hub

callback_at = threading.local()
published: dict[str, float] = {}
original_on_event = served_module.Served.on_event
original_on_token = served_module.Served.on_token
original_publish = Hub.publish


def on_event(self: Any, event: Any) -> None:
    callback_at.t = time.perf_counter()
    original_on_event(self, event)


def on_token(self: Any, chunk: Any) -> None:
    callback_at.t = time.perf_counter()
    original_on_token(self, chunk)


def publish(self: Any, conversation_id: Any, frame: dict[str, Any]) -> None:
    at = getattr(callback_at, "t", None) or time.perf_counter()
    published[frame["id"]] = at
    if frame.get("kind") == "StreamingDeltaEvent" and frame.get("content"):
        published["content:" + frame["content"]] = at  # token callbacks see no frame id
    callback_at.t = None
    original_publish(self, conversation_id, frame)


served_module.Served.on_event = on_event  # type: ignore[method-assign]
served_module.Served.on_token = on_token  # type: ignore[method-assign]
Hub.publish = publish  # type: ignore[method-assign]

if __name__ == "__main__":
    from ohtui.cli import main

    try:
        code = main(sys.argv[1:])
    finally:
        with open(os.environ["OHTUI_BENCH_PROBE_OUT"], "w") as file:
            json.dump(published, file)
    sys.exit(code)
