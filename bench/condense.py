"""Condenser benchmark for issue 12; run by hand: `.venv/bin/python bench/condense.py`.

A 2,000-step run (one think call per step) with an LLMSummarizingCondenser against the
scripted LLM server. Prints the size in bytes of the agent's request at steps 100 and
2,000 and the largest one of the run (they stay bounded: the whole history would grow
without limit), the number of condensations, and the summary requests' largest size.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the scripted LLM server
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

STEPS = 2000
REPORT_AT = (100, 500, 1000, 2000)
THOUGHT = "Checking the next item of the list, and noting what I found about it. " * 3


def is_summary_request(body: dict[str, Any]) -> bool:
    """Whether a request is the condenser's (one user message with the summary prompt)."""
    from ohtui.sdk.context.condenser.summary_prompt import SUMMARY_INSTRUCTIONS

    messages = body["messages"]
    content = messages[0].get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    return len(messages) == 1 and SUMMARY_INSTRUCTIONS[:40] in text


def main() -> None:
    from llm_server import Reply, ScriptedLLMServer, ToolCall

    from ohtui.sdk import LLM, Agent, Condensation, Conversation
    from ohtui.sdk.context import LLMSummarizingCondenser

    server = ScriptedLLMServer()
    agent_sizes: list[int] = []
    summary_sizes: list[int] = []

    def reply(body: dict[str, Any]) -> Reply:
        size = len(json.dumps(body).encode())
        if is_summary_request(body):
            summary_sizes.append(size)
            return Reply(text=f"USER_CONTEXT: think {STEPS} times. COMPLETED: {len(agent_sizes)}.")
        agent_sizes.append(size)
        step = len(agent_sizes)
        if step > STEPS:
            return Reply(text="Done.")
        thought = json.dumps({"thought": f"step {step}: {THOUGHT}"})
        return Reply(tool_calls=(ToolCall("think", thought),))

    server.set_default(reply)
    with tempfile.TemporaryDirectory() as tmp:
        llm = LLM(model="openai/test-model", base_url=server.base_url, api_key="sk-x")
        condenser = LLMSummarizingCondenser(
            llm=llm.model_copy(update={"usage_id": "condenser"}), max_size=80, keep_first=4
        )
        conv = Conversation(
            agent=Agent(llm=llm, condenser=condenser),
            workspace=f"{tmp}/ws",
            persistence_dir=f"{tmp}/convs",
            visualizer=None,
            max_iteration_per_run=STEPS + 10,
        )
        start = time.perf_counter()
        conv.send_message(f"Think {STEPS} times, then say you are done.")
        conv.run()
        seconds = time.perf_counter() - start
        condensations = sum(1 for e in conv.state.events if isinstance(e, Condensation))
        events = len(conv.state.events)
        conv.close()
    server.close()
    for step in REPORT_AT:
        print(f"step {step:>5,}: request {agent_sizes[step - 1]:>8,} bytes")
    print(f"largest agent request of the run: {max(agent_sizes):,} bytes")
    print(f"largest summary request: {max(summary_sizes, default=0):,} bytes")
    print(f"{condensations} condensations; {events:,} events kept in the log; {seconds:.1f} s")


if __name__ == "__main__":
    main()
