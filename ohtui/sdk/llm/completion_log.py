"""Completion logs: one JSON file per LLM call, for debugging (`LLM(log_completions=True)`).

Each file is named `<model with / as __>-<unix time>-<4 hex>.json` (`…-error.json` for a
call that failed for good) in `log_completions_folder`, as the OpenHands SDK names them,
and holds what was sent (`messages` or the Responses `input` and `instructions`, `tools`,
`kwargs`), what came back (`response`, `usage_summary`), `cost`, `timestamp` and
`latency_sec`. Secrets never reach the file: the API key is not among the kwargs and is
masked wherever else it shows, header values are hidden, and the conversation's secrets
are masked through the mask its call context carries. Files are readable by their owner
only. Nothing here runs unless logging is on.
"""

from __future__ import annotations

import json
import logging
import os
import time
import traceback
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ohtui.sdk.utils.masking import SECRET_MASK, forms_to_mask

logger = logging.getLogger(__name__)

Mask = Callable[[Any], Any]
"""Masks secrets in JSON-like data (the conversation's `SecretRegistry.mask_data`); the
LLM module names the same type, without importing this one."""
_NOT_LOGGED = frozenset({"api_key", "messages", "input", "instructions", "tools"})
"""Request fields not copied into `kwargs`: the key never, the rest have their own entry."""


@dataclass
class CompletionRecord:
    """What one call sent, gathered before it is made (only when logging is on)."""

    folder: str
    model: str
    request: dict[str, Any]
    context_window: int
    secrets: tuple[str, ...] = ()
    mask: Mask | None = None
    started: float = field(default_factory=time.time)

    def answered(self, response: dict[str, Any], cost: float, usage: Mapping[str, int]) -> None:
        """Write the call with its answer."""
        self._write(
            "",
            {
                "response": response,
                "cost": float(cost),
                "usage_summary": {
                    name: int(usage.get(name, 0))
                    for name in (
                        "prompt_tokens",
                        "completion_tokens",
                        "reasoning_tokens",
                        "cache_read_tokens",
                    )
                },
            },
        )

    def failed(self, error: BaseException) -> None:
        """Write the call with the error it ended in."""
        self._write(
            "-error",
            {
                "error": {
                    "type": type(error).__name__,
                    "message": str(error),
                    "repr": repr(error),
                    "traceback": "".join(traceback.format_exception(error)),
                },
                "cost": 0.0,
            },
        )

    def _write(self, suffix: str, outcome: dict[str, Any]) -> None:
        # A log that cannot be written must never fail the call it describes.
        try:
            data = {**self._sent(), **outcome}
            data["timestamp"] = time.time()
            data["latency_sec"] = data["timestamp"] - self.started
            text = json.dumps(self._masked(data), default=_plain, ensure_ascii=False)
            for form in forms_to_mask(self.secrets):
                text = text.replace(form, SECRET_MASK)
            name = f"{self.model.replace('/', '__')}-{time.time():.3f}-{uuid.uuid4().hex[:4]}"
            os.makedirs(self.folder, exist_ok=True)
            path = os.path.join(self.folder, f"{name}{suffix}.json")
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(text)
        except Exception:  # see above; the reason goes to the log
            logger.warning("could not write the completion log to %s", self.folder, exc_info=True)

    def _sent(self) -> dict[str, Any]:
        request = self.request
        data: dict[str, Any] = {"context_window": self.context_window}
        if "input" in request:
            data["llm_path"] = "responses"
            data["instructions"] = request.get("instructions")
            data["input"] = request["input"]
        else:
            data["messages"] = request.get("messages", [])
        data["tools"] = request.get("tools")
        kwargs = {k: v for k, v in request.items() if k not in _NOT_LOGGED}
        if isinstance(kwargs.get("extra_headers"), Mapping):
            # Header values are often credentials (Authorization, x-api-key): names only.
            kwargs["extra_headers"] = {name: SECRET_MASK for name in kwargs["extra_headers"]}
        data["kwargs"] = kwargs
        return data

    def _masked(self, data: dict[str, Any]) -> Any:
        if self.mask is None:
            return data
        # The mask walks JSON data: hand it the plain form of whatever the request held.
        return self.mask(json.loads(json.dumps(data, default=_plain, ensure_ascii=False)))


def _plain(value: Any) -> Any:
    """A JSON form of what json cannot write (pydantic models, timeouts, namespaces)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    read = getattr(value, "read", None)  # an httpx.Timeout: its read timeout
    if isinstance(read, (int, float)):
        return read
    if hasattr(value, "__dict__"):
        return vars(value)
    return str(value)
