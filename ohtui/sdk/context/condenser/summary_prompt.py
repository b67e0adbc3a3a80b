"""The prompt that asks a model to summarize forgotten events."""

from __future__ import annotations

from collections.abc import Sequence

SUMMARY_INSTRUCTIONS = """\
You keep the running memory of a coding agent whose oldest history is being dropped to \
make room in its context window. Below are the events being dropped, oldest first; an \
earlier summary among them must be carried forward, not lost.

Write a compact summary the agent can continue from. Use these sections, leaving out any \
that have nothing to say:

USER_CONTEXT: what the user asked for, their requirements, constraints and preferences \
(keep their instructions word for word when they are short)
TASK_TRACKING: tasks with their exact ids and statuses, if any task list was kept
COMPLETED: what is done, with results
PENDING: what is still to do
CURRENT_STATE: the state the work is in now
CODE_STATE: files, functions and data structures touched
TESTS: tests run, failing cases and error messages
CHANGES: edits made
DEPS: dependencies and external calls
VERSION_CONTROL_STATUS: branch, commits, pull requests

Be concise and specific; skip what does not matter for finishing the task."""


def summary_prompt(event_texts: Sequence[str], focus: str | None = None) -> str:
    """The whole prompt: instructions, the events, and what to keep above all."""
    parts = [SUMMARY_INSTRUCTIONS, ""]
    parts.extend(f"<EVENT>\n{text}\n</EVENT>" for text in event_texts)
    if focus and focus.strip():
        parts.append(f"\nThe user asks that the summary keep above all: {focus.strip()}")
    parts.append("\nNow write the summary.")
    return "\n".join(parts)
