"""Validate frames as OpenHands 1.58 events (notes statement 24); run under the peer Python.

    python peer_validate.py FRAMES.json
FRAMES.json holds a list of frames, or `{"frames": [...], "infos": [...]}` where each info
is a ConversationInfo whose agent, stats and confirmation policy must validate too. Prints
one JSON object: how many were checked and every failure.
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def main() -> None:
    import openhands.tools.file_editor
    import openhands.tools.task_tracker
    import openhands.tools.terminal  # noqa: F401  (their kinds must be known)
    from openhands.sdk.agent.base import AgentBase
    from openhands.sdk.conversation.conversation_stats import ConversationStats
    from openhands.sdk.event.base import Event
    from openhands.sdk.security.confirmation_policy import ConfirmationPolicyBase

    with open(sys.argv[1]) as file:
        data = json.load(file)
    frames = data["frames"] if isinstance(data, dict) else data
    infos = data.get("infos", []) if isinstance(data, dict) else []
    failures = []
    for frame in frames:
        try:
            Event.model_validate(frame)
        except Exception as exc:
            failures.append({"kind": frame.get("kind"), "error": str(exc)[:800]})
    for info in infos:
        for name, model, value in (
            ("agent", AgentBase, info.get("agent")),
            ("stats", ConversationStats, info.get("stats")),
            ("confirmation_policy", ConfirmationPolicyBase, info.get("confirmation_policy")),
        ):
            try:
                model.model_validate(value)
            except Exception as exc:
                failures.append({"kind": f"ConversationInfo.{name}", "error": str(exc)[:800]})
    print("RESULT " + json.dumps({"checked": len(frames) + len(infos), "failures": failures}))


if __name__ == "__main__":
    main()
