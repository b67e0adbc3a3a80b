"""The judge: objective and transcript in, a verdict out (one LLM call, nothing recorded)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from ohtui.sdk.conversation.goal.prompts import JUDGE_PROMPT
from ohtui.sdk.event.base import Event, LLMConvertibleEvent
from ohtui.sdk.llm.llm import LLM
from ohtui.sdk.llm.message import Message, TextContent, content_to_str

logger = logging.getLogger(__name__)

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class GoalVerdict(BaseModel):
    """Whether the judge finds the objective complete, and what is missing."""

    score: float = Field(ge=0.0, le=1.0, description="How likely the objective is done.")
    complete: bool = Field(description="Whether the judge finds it complete.")
    missing: str = Field(default="", description="What remains; empty when complete.")


UNREADABLE = GoalVerdict(score=0.0, complete=False, missing="Judge verdict could not be parsed.")
"""The verdict when the judge's answer is not the JSON asked for: keep working."""


def judge_goal(judge_llm: LLM, objective: str, events: Sequence[Event]) -> GoalVerdict:
    """Ask `judge_llm` whether `events` show `objective` done. An answer that cannot be
    read counts as not done (score 0), never as done."""
    transcript = _transcript([e for e in events if isinstance(e, LLMConvertibleEvent)])
    prompt = JUDGE_PROMPT.format(objective=objective, transcript=transcript)
    if judge_llm.stream:  # only the verdict is wanted: no token callback to stream to
        judge_llm = judge_llm.model_copy(update={"stream": False})
    response = judge_llm.completion(
        messages=[Message(role="user", content=[TextContent(text=prompt)])]
    )
    return _verdict("\n".join(content_to_str(response.message.content)).strip())


def _transcript(events: Sequence[LLMConvertibleEvent]) -> str:
    """`role: text` turns, without the system prompt (long, and no evidence of anything)."""
    turns = []
    for message in LLMConvertibleEvent.events_to_messages(events):
        text = "\n".join(content_to_str(message.content)).strip()
        if message.role != "system" and text:
            turns.append(f"{message.role}: {text}")
    return "\n\n".join(turns)


def _verdict(raw: str) -> GoalVerdict:
    data = _json_object(raw)
    if data is None:
        logger.warning("the goal judge's answer is not a JSON verdict: %r", raw[:500])
        return UNREADABLE
    try:
        score = min(1.0, max(0.0, float(data.get("score", 0.0))))
    except (TypeError, ValueError):
        score = 0.0
    return GoalVerdict(
        score=score,
        complete=bool(data.get("complete", score >= 1.0)),
        missing=str(data.get("missing") or ""),
    )


def _json_object(raw: str) -> dict[str, Any] | None:
    """The answer as a JSON object, or the first `{...}` in it (models wrap JSON in prose)."""
    found = _JSON_OBJECT.search(raw)
    for candidate in (raw, found.group(0) if found else None):
        if candidate is None:
            continue
        try:
            parsed = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(parsed, dict):
            return parsed
    return None
