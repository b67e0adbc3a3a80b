"""Record the OpenHands 1.58 event schema's field names (run once under the peer Python).

    OHTUI_PEER_PYTHON tests/server/record_openhands_fields.py > tests/server/openhands_fields.json

For each event, action and observation kind: the allowed fields and the required ones. The
default suite checks our frames against this recording, without the peer.
"""

from __future__ import annotations

import json
import os

os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def main() -> None:
    import openhands.tools.file_editor
    import openhands.tools.task_tracker
    import openhands.tools.terminal  # noqa: F401
    from openhands.sdk.event.base import Event
    from openhands.sdk.tool.schema import Action, Observation

    def fields(base: type) -> dict[str, dict[str, list[str]]]:
        out = {}
        stack = list(base.__subclasses__())
        while stack:
            cls = stack.pop()
            stack.extend(cls.__subclasses__())
            if getattr(cls, "__abstractmethods__", None):
                continue
            model_fields = cls.model_fields
            out[cls.__name__] = {
                "allowed": sorted([*model_fields, "kind"]),
                "required": sorted(n for n, f in model_fields.items() if f.is_required()),
            }
        return dict(sorted(out.items()))

    print(
        json.dumps(
            {
                "version": "openhands-sdk 1.58",
                "events": fields(Event),
                "actions": fields(Action),
                "observations": fields(Observation),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
